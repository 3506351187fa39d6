// fused_bound.cu -- the latency floor of the fused filter run
// (gpu_kernels/fused.cu), measured by kernels that keep its structure and
// drop its arithmetic. bench/fused_bound.py compiles this file after
// fused.cu's own text (kernels.source("fused.cu")), so that grid_barrier,
// global_ns and the block reductions here are the run's own code.
//
// * barrier_only: K grid barriers and nothing else, on a cooperative grid:
//   the cost of one barrier at a grid size; cluster_barrier_only: the same
//   on a grid of one cluster, with the cluster's barrier.
// * l2_chase, atomic_chase: one thread's dependent loads through L2
//   (__ldcg, a random cycle over a buffer larger than L1, smaller than L2)
//   and dependent acq_rel atomics: the round trips every phase waits for.
// * skeleton_run: the fused run's steps with its grid, its virtual blocks,
//   its loads through L2, its block reductions and its four barriers a
//   step, and none of its arithmetic (no Philox normals, no exponentials,
//   a block sum where the run scans a tile): what its data dependencies
//   cost. Its phase marks are the run's (1 + 4 T nanosecond times).

namespace pfr_bound {

using namespace pfr;

__device__ __forceinline__ void mark(unsigned long long* marks, int slot) {
    if (marks != nullptr && blockIdx.x == 0 && threadIdx.x == 0) marks[slot] = global_ns();
}

}  // namespace pfr_bound

// ns[0], ns[1]: the clock after a first barrier (every block running) and
// after `rounds` more.
extern "C" __global__ void barrier_only(unsigned int* bar, int rounds, unsigned long long* ns) {
    pfr::grid_barrier(bar);
    pfr_bound::mark(ns, 0);
    for (int r = 0; r < rounds; ++r) pfr::grid_barrier(bar);
    pfr_bound::mark(ns, 1);
}

// The same on a grid that is one cluster of CLUSTER blocks: the cluster's
// hardware barrier (fused.cu's barrier<true>, the run's on such a grid).
template <int CLUSTER>
__global__ void PFR_CLUSTER_DIMS(CLUSTER)
    cluster_barrier_only(unsigned int* bar, int rounds, unsigned long long* ns) {
#if PFR_CLUSTERS
    pfr::barrier<true>(bar);
    pfr_bound::mark(ns, 0);
    for (int r = 0; r < rounds; ++r) pfr::barrier<true>(bar);
    pfr_bound::mark(ns, 1);
#endif
}

// One thread: `hops` dependent loads through L2 along the cycle `next`.
extern "C" __global__ void l2_chase(const unsigned int* next, int hops, unsigned int* sink,
                                    unsigned long long* ns) {
    unsigned int i = 0;
    const unsigned long long t0 = pfr::global_ns();
    for (int h = 0; h < hops; ++h) i = __ldcg(next + i);
    const unsigned long long t1 = pfr::global_ns();
    sink[0] = i;
    ns[0] = t0;
    ns[1] = t1;
}

// One thread: `hops` dependent acq_rel atomic adds on one word (the
// barrier's arrival, without the other blocks).
extern "C" __global__ void atomic_chase(unsigned int* word, int hops, unsigned long long* ns) {
    unsigned int v = 0;
    const unsigned long long t0 = pfr::global_ns();
    for (int h = 0; h < hops; ++h) {
        unsigned int* at = word + (v >> 31);  // v < 2^31: the address waits for v
        asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(v) : "l"(at) : "memory");
    }
    const unsigned long long t1 = pfr::global_ns();
    ns[0] = t0;
    ns[1] = t1;
}

// The fused run's skeleton (file comment). x: 2 x n states; parts and tiles
// as the run's (geometry.sum_parts, geometry.scan_tiles); part_sums: parts
// doubles; tile_sum: tiles floats; top: steps words (zeroed here); marks:
// 1 + 4 steps nanosecond times.
extern "C" __global__ void __launch_bounds__(pfr::FUSED_THREADS, 2)
skeleton_run(float* x, float* log_w, float* w_tilde, int* ancestors, unsigned int n, int steps,
             int parts, int tiles, double* part_sums, float* tile_sum, unsigned int* bar,
             unsigned int* top, unsigned long long* marks) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    const long long nn = n;
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    pfr_bound::mark(marks, 0);
    for (int k = b * FUSED_THREADS + t; k < steps; k += G * FUSED_THREADS) top[k] = 0u;
    for (long long i = b * FUSED_THREADS + t; i < nn; i += (long long)G * FUSED_THREADS) {
        x[nn + i] = 0.001f * (float)(i & 1023);
        ancestors[i] = (int)i;
    }
    grid_barrier(bar);
    const unsigned int streams = (n + GROWTH_PER_BLOCK - 1) / GROWTH_PER_BLOCK;
    for (int k = 0; k < steps; ++k) {
        float* dst = x + (long long)(k % 2) * n;
        const float* src = x + (long long)((k + 1) % 2) * n;
        // Phase 1: the ancestors, then the states through them (growth_through's
        // two round trips a thread), a store each, the block's maximum, one atomic.
        float best = -1e30f;
        for (unsigned int g = b * FUSED_THREADS + t; g < streams; g += G * FUSED_THREADS) {
            unsigned int from[GROWTH_PER_BLOCK];
#pragma unroll
            for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
                const unsigned int i = g + j * streams;
                from[j] = i < n ? (unsigned int)__ldcg(ancestors + i) : 0u;
            }
            float xs[GROWTH_PER_BLOCK];
#pragma unroll
            for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
                xs[j] = g + j * streams < n ? __ldcg(src + from[j]) : 0.0f;
            }
#pragma unroll
            for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
                const unsigned int i = g + j * streams;
                if (i >= n) break;
                const float next = 0.5f * xs[j] + 0.25f;
                dst[i] = next;
                log_w[i] = -next * next;
                best = fmaxf(best, -next * next);
            }
        }
        const float m_block = block_max(best);
        if (t == 0) atomicMax(top + k, to_ordered(m_block));
        grid_barrier(bar);
        pfr_bound::mark(marks, 1 + 4 * k);

        // Phase 2: the maximum, then each virtual block's log-weights, a
        // store of w~ each, a float64 block sum into part_sums.
        const float m = from_ordered(__ldcg(top + k));
        for (int p = b; p < parts; p += G) {
            double sum = 0.0;
            for (long long i = (long long)p * REDUCE_THREADS + t; i < nn;
                 i += (long long)parts * REDUCE_THREADS) {
                const float wt = __ldcg(log_w + i) - m + 1.0f;
                w_tilde[i] = wt;
                sum += (double)wt;
            }
            sum = block_reduce(sum, shared, Add());
            __syncthreads();
            if (t == 0) part_sums[p] = sum;
        }
        grid_barrier(bar);
        pfr_bound::mark(marks, 2 + 4 * k);

        // Phase 3: the sum of the partials in every block, a tile's w~ (its
        // loads first), a block sum where the run scans the tile.
        float raw[SCAN_ITEMS];
        if (b < tiles) load_tile_raw(w_tilde, nn, b, raw);
        const double s = sum_of_parts(part_sums, parts, shared);
        for (int q = b; q < tiles; q += G) {
            if (q != b) load_tile_raw(w_tilde, nn, q, raw);
            float v = 0.0f;
#pragma unroll
            for (int j = 0; j < SCAN_ITEMS; ++j) v += raw[j];
            v = block_reduce(v * (float)(1.0 / s), reinterpret_cast<float*>(shared), Add());
            __syncthreads();
            if (t == 0) tile_sum[q] = v;
        }
        grid_barrier(bar);
        pfr_bound::mark(marks, 3 + 4 * k);

        // Phase 4: the tile sums (warp 0) beside a slice's w~, then the
        // slice's ancestors stored: slices of FUSED_THREADS * 4, slice r on
        // block r % G.
        constexpr long long SLICE = FUSED_THREADS * 4;
        const long long slices = (nn + SLICE - 1) / SLICE;
        for (long long r = b; r < slices; r += G) {
            float before = 0.0f;
            if (t < 32) {
                for (int q = t; q < tiles && q * SCAN_TILE < r * SLICE; q += 32) {
                    before += __ldcg(tile_sum + q);
                }
            }
            float v[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const long long i = r * SLICE + t * 4 + j;
                v[j] = i < nn ? __ldcg(w_tilde + i) : 0.0f;
            }
            before = block_reduce(before, reinterpret_cast<float*>(shared), Add());
            __syncthreads();
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const long long i = r * SLICE + t * 4 + j;
                if (i < nn) ancestors[i] = (int)(i ^ (v[j] + before > 1e30f ? 1 : 0));
            }
        }
        grid_barrier(bar);
        pfr_bound::mark(marks, 4 + 4 * k);
    }
}
