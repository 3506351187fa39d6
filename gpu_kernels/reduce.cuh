// reduce.cuh -- block-wide reductions shared by reduce.cu (the weight
// statistics) and models.cu (the filter's stages): a tree in shared memory
// over REDUCE_THREADS threads, and the "last block" test that lets one grid
// finish a two-step reduction without a second launch.
#pragma once

namespace pfr {

constexpr int REDUCE_THREADS = 256;  // gpu.py's REDUCE_THREADS

// K block-wide reductions at once, each result in every thread (blockDim.x
// must be REDUCE_THREADS; `shared` holds K * REDUCE_THREADS values). A
// fixed tree, so the result does not depend on timing: float64 sums are
// the same on every run. The tree is the halving one -- at each level h =
// 128, 64, ..., 1, entry t < h becomes op(entry t, entry t + h) --
// evaluated with two barriers instead of nine: after the values are in
// shared memory, lane t of one warp computes the three cross-warp levels
// for entry t itself (8 reads, in the tree's pairing), and shuffles do the
// five levels inside the warp; value k goes to warp k % 8, so up to eight
// values take the time of one. Each op sees the operands it saw in the
// shared-memory loop, so the bits are those of the loop. The results go
// through their own shared words: a caller may start the next reduction
// on `shared` at once. K values cost the barriers of one.
template <int K, typename V, typename Op>
__device__ void block_reduce_many(V (&value)[K], V* shared, Op op) {
    static_assert(REDUCE_THREADS == 256, "the cross-warp levels below are 128, 64 and 32");
    __shared__ V result[K];
#pragma unroll
    for (int k = 0; k < K; ++k) shared[k * REDUCE_THREADS + threadIdx.x] = value[k];
    __syncthreads();
    const int lane = threadIdx.x & 31;
    for (int k = threadIdx.x >> 5; k < K; k += REDUCE_THREADS / 32) {  // value k on warp k % 8
        const V* s = shared + k * REDUCE_THREADS + lane;
        const V a = op(s[0], s[128]);   // h = 128: entry t
        const V b = op(s[64], s[192]);  //          entry t + 64
        const V c = op(s[32], s[160]);  //          entry t + 32
        const V d = op(s[96], s[224]);  //          entry t + 96
        V x = op(op(a, b), op(c, d));   // h = 64 (entries t, t + 32), then h = 32
#pragma unroll
        for (int h = 16; h > 0; h >>= 1) x = op(x, __shfl_down_sync(0xFFFFFFFFu, x, h));
        if (lane == 0) result[k] = x;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < K; ++k) value[k] = result[k];
}

// One block-wide reduction (block_reduce_many's tree).
template <typename V, typename Op>
__device__ V block_reduce(V value, V* shared, Op op) {
    V one[1] = {value};
    block_reduce_many(one, shared, op);
    return one[0];
}

// Block-wide maximum by warp shuffles, result in thread 0 (blockDim.x a
// multiple of 32, at most 1024): two barriers where block_reduce needs
// eight, for the one-particle-per-thread kernels of models.cu.
__device__ float block_max(float value) {
    __shared__ float warp_max[32];
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1)
        value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, lane_mask));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_max[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < (int)(blockDim.x / 32) ? warp_max[lane] : value;
        for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1)
            value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, lane_mask));
    }
    return value;
}

struct Add {
    template <typename V>
    __device__ V operator()(V a, V b) const { return a + b; }
};
struct Max {
    template <typename V>
    __device__ V operator()(V a, V b) const { return a > b ? a : b; }
};
struct Min {
    template <typename V>
    __device__ V operator()(V a, V b) const { return a < b ? a : b; }
};

// Whether this block is the last of the grid to get here. Thread 0 must
// have written the block's partial result before; every block publishes it
// (__threadfence) and takes a ticket, and the last one resets the counter
// for the next launch, so a CUDA graph can replay the kernel.
__device__ bool last_block_done(unsigned int* ticket) {
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) *ticket = 0u;
    }
    __syncthreads();
    return last;
}

// Two float64 sums over the whole grid in an order fixed by the grid's
// size: each block's pair of partials into parts (2 gridDim.x values), then
// the last block to finish adds them in index order. Returns true in the
// last block, where thread 0 holds the grid's totals in a and b (the other
// threads' copies are not to be read); false elsewhere.
__device__ bool grid_sum_pair(double& a, double& b, double* parts, unsigned int* ticket) {
    __shared__ double shared[REDUCE_THREADS];
    a = block_reduce(a, shared, Add());
    b = block_reduce(b, shared, Add());
    if (threadIdx.x == 0) {
        parts[blockIdx.x] = a;
        parts[gridDim.x + blockIdx.x] = b;
    }
    if (!last_block_done(ticket)) return false;
    a = b = 0.0;
    for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS) {
        a += parts[p];
        b += parts[gridDim.x + p];
    }
    a = block_reduce(a, shared, Add());
    b = block_reduce(b, shared, Add());
    return true;
}

// The block size of the "any" reductions below: at most 1024 threads, at
// least one whole warp.
constexpr int ANY_MAX_THREADS = 1024;

// One block-wide reduction for any block size from 32 to ANY_MAX_THREADS (the
// paper's threads per block, Das et al. 2014 Table 6, are mostly not multiples
// of 32): every thread's value into shared[threadIdx.x]; lane l of warp 0
// folds entries l, l + 32, l + 64, ... in that order, then warp 0 halves by
// shuffles. The order is fixed for a given block size, so float64 sums repeat
// run after run (and change with the block size, as the paper's did). The
// result is in thread 0; `shared` holds blockDim.x values and may be reused
// once this returns.
template <typename V, typename Op>
__device__ V block_reduce_any(V value, V* shared, Op op) {
    shared[threadIdx.x] = value;
    __syncthreads();
    V acc = value;
    if (threadIdx.x < 32) {
        acc = shared[threadIdx.x];
        for (unsigned int t = threadIdx.x + 32u; t < blockDim.x; t += 32u) acc = op(acc, shared[t]);
#pragma unroll
        for (int h = 16; h > 0; h >>= 1) acc = op(acc, __shfl_down_sync(0xFFFFFFFFu, acc, h));
    }
    __syncthreads();
    return acc;
}

// K float64 sums over the whole grid at any block size (block_reduce_any): each
// block's K partials into parts (K gridDim.x values, value k of block b at k
// gridDim.x + b), then the last block to finish adds them in index order.
// Returns true in the last block, where thread 0 holds the grid's totals.
template <int K>
__device__ bool grid_sums_any(double (&value)[K], double* parts, unsigned int* ticket) {
    __shared__ double shared[ANY_MAX_THREADS];
#pragma unroll
    for (int k = 0; k < K; ++k) value[k] = block_reduce_any(value[k], shared, Add());
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < K; ++k) parts[k * gridDim.x + blockIdx.x] = value[k];
    }
    if (!last_block_done(ticket)) return false;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        double sum = 0.0;
        for (unsigned int p = threadIdx.x; p < gridDim.x; p += blockDim.x)
            sum += parts[k * gridDim.x + p];
        value[k] = block_reduce_any(sum, shared, Add());
    }
    return true;
}

// A float as an unsigned integer of the same order (negative numbers
// reversed), so that atomicMax finds the largest float; 0 is below every
// float. from_ordered inverts it.
__device__ __forceinline__ unsigned int to_ordered(float f) {
    const unsigned int u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float from_ordered(unsigned int k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

}  // namespace pfr
