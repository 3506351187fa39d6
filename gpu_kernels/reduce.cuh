// reduce.cuh -- block-wide reductions shared by reduce.cu (the weight
// statistics) and models.cu (the filter's stages): a tree in shared memory
// over REDUCE_THREADS threads, and the "last block" test that lets one grid
// finish a two-step reduction without a second launch.
#pragma once

namespace pfr {

constexpr int REDUCE_THREADS = 256;  // gpu.py's REDUCE_THREADS

// Block-wide reduction in shared memory, result in every thread (blockDim.x
// must be REDUCE_THREADS). A fixed tree, so the result does not depend on
// timing: float64 sums are the same on every run.
template <typename V, typename Op>
__device__ V block_reduce(V value, V* shared, Op op) {
    shared[threadIdx.x] = value;
    __syncthreads();
    for (int half = REDUCE_THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + half]);
        __syncthreads();
    }
    return shared[0];
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
