// fused.cu -- a whole run of the SIR filter (thesis Algorithm 2.4) for the
// growth model (eqs. 2.34-2.35) with Systematic resampling (Algorithms 3.1
// and 3.2), T steps in one cooperative launch. Driver:
// src/pfresample/filters/sir_fused.py.
//
// Why: the graph of filters/sir_gpu.py runs four kernels a step. At N =
// 2^14 each does a few microseconds of work and the graph's node-to-node
// latency dominates (docs/performance.md). Here a grid of
// blocks that are all resident at once (a cooperative launch guarantees
// it) goes through the steps, and a grid barrier (grid_barrier) stands
// where a kernel boundary was: four a step, the fewest the data allow --
// the maximum log-weight before the exponentials, their sum before the
// normalised prefix sum, the tile sums before the ancestors, the ancestors
// before the next step's gather.
//
// The same numbers as the graph, bit for bit (tests/gpu/test_gpu_fused_filter.py):
// every reduction runs over the graph's own blocks as "virtual blocks" (a
// resident block takes virtual blocks b, b + G, ...), with the graph's
// code for each (block_reduce, scan.cuh's tile scan and ancestor writer),
// so the summation orders depend on N alone, never on G; the noise is
// models.cuh's normals4 in the graph's layout. The state buffers ping-pong:
// the initial particles go to x[1], step k reads x[(k + 1) % 2] through the
// last step's ancestors (the graph's gather, fused into the prediction)
// and writes x[k % 2].
//
// Up to geometry.FUSED_CLUSTER_N particles the grid is one thread block
// cluster of 16 blocks (growth_systematic_cluster_run, sm_90 on): the
// cluster's hardware barrier there costs less than the grid barrier's
// atomics, and at 2^14 the run is faster on those 16 SMs than on 68 blocks
// (docs/performance.md). The same virtual blocks, so the same bits.
//
// Every load of data written earlier in the launch goes through L2
// (__ldcg): another SM may have written it since this SM's L1 last held
// the line. Blocks have FUSED_THREADS threads (the reductions' and the
// scan's REDUCE_THREADS = SCAN_THREADS).

#include "models.cuh"
#include "reduce.cuh"
#include "scan.cuh"

// Thread block clusters exist from sm_90 on; on older devices the cluster
// kernel compiles to a trap that the driver never launches.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define PFR_CLUSTERS 1
#define PFR_CLUSTER_DIMS(c) __cluster_dims__(c, 1, 1)
#else
#define PFR_CLUSTERS 0
#define PFR_CLUSTER_DIMS(c)
#endif

namespace pfr {

constexpr int FUSED_THREADS = 256;  // geometry.FUSED_THREADS
// The most scan tiles (geometry.FUSED_MAX_N / SCAN_TILE): every block keeps
// the scan of the tile sums in shared memory.
constexpr int FUSED_MAX_TILES = 256;
// Virtual blocks a block reduces at once in phase 2 (at 8 the kernel spills
// more registers).
constexpr int FUSED_BATCH = 4;
// Phase 4 takes the particles in slices of FUSED_THREADS * SLICE_ITEMS, the
// kernel's template argument (geometry.fused_slice_items): 4 a thread while
// every slice has a block of its own, the scan's SCAN_ITEMS above. At N =
// 2^14 the four tiles of SCAN_ITEMS would leave the offspring and ancestors
// of all particles to four blocks, and at 2^20 a block's one tile is faster
// than its four slices of 4 a thread (docs/performance.md). Two kernels, not a branch: inlined side by side, the two sizes
// spill registers and slow phase 3 more than they gain.

// Every block of the grid waits here until all have arrived; what a block
// wrote before is then visible to every block after. count[0] (zero at the
// launch) counts the arrivals of all rounds: a block's round ends when it
// reaches the next multiple of the grid. A release atomic and a spin on an
// acquire load by each block's thread 0, between the block's own barriers
// (cheaper than a generation flag with full fences: two memory round trips
// fewer a barrier). Needs every block resident: the cooperative launch.
// Split in two (grid_arrive, then grid_wait on the count it returns in
// thread 0), a block does work of its own between them that reads nothing
// written in the phase just ended and writes nothing another block reads
// before the wait: the barrier's latency then hides that work. The arrival
// only releases (the wait's loads acquire), so the loads of that work do not
// wait for its atomic to come back.
__device__ __forceinline__ unsigned int grid_arrive(unsigned int* count) {
    __syncthreads();
    unsigned int target = 0u;
    if (threadIdx.x == 0) {
        unsigned int arrived;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], 1;" : "=r"(arrived) : "l"(count) : "memory");
        target = (arrived / gridDim.x + 1u) * gridDim.x;
    }
    return target;
}

__device__ __forceinline__ void grid_wait(const unsigned int* count, unsigned int target) {
    if (threadIdx.x == 0) {
        unsigned int now;
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(count) : "memory");
        } while (now < target);
    }
    __syncthreads();
}

__device__ void grid_barrier(unsigned int* count) { grid_wait(count, grid_arrive(count)); }

// The same barrier where the grid is one thread block cluster (CLUSTER:
// fused.cu's growth_systematic_cluster_run, sm_90 and later): the cluster's
// hardware barrier, split the same way (every thread arrives, releasing its
// writes at the cluster's scope; the wait acquires them). It stands for
// __syncthreads as well: no thread of any block passes it before all have
// arrived. The count is not touched.
template <bool CLUSTER>
__device__ __forceinline__ unsigned int arrive(unsigned int* count) {
    if constexpr (CLUSTER) {
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
        return 0u;
    } else {
        return grid_arrive(count);
    }
}

template <bool CLUSTER>
__device__ __forceinline__ void wait(const unsigned int* count, unsigned int target) {
    if constexpr (CLUSTER) {
        asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    } else {
        grid_wait(count, target);
    }
}

template <bool CLUSTER>
__device__ __forceinline__ void barrier(unsigned int* count) {
    wait<CLUSTER>(count, arrive<CLUSTER>(count));
}

// The device's clock in nanoseconds (the phase marks).
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// A float64 sum over `count` partials in index order, as the graph's last
// block adds them (weight_total, normalise_estimate): every block that
// needs it computes it, the same bits in each.
__device__ double sum_of_parts(const double* parts, int count, double* shared) {
    double sum = 0.0;
    for (int q = threadIdx.x; q < count; q += REDUCE_THREADS) sum += __ldcg(parts + q);
    sum = block_reduce(sum, shared, Add());
    __syncthreads();  // shared is free again
    return sum;
}

// Tile q's w~ as loaded (thread t's items j * SCAN_THREADS + t, zeros past
// the end), to be normalised later: the loads go out before the block
// waits for s.
__device__ __forceinline__ void load_tile_raw(const float* w_tilde, long long n, long long q,
                                              float (&v)[SCAN_ITEMS]) {
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const long long i = q * SCAN_TILE + j * SCAN_THREADS + threadIdx.x;
        v[j] = i < n ? __ldcg(w_tilde + i) : 0.0f;
    }
}

// The largest of a warp's values.
__device__ __forceinline__ unsigned int warp_max(unsigned int v) {
#if __CUDA_ARCH__ >= 800
    return __reduce_max_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, d));
    return v;
#endif
}

// Tile q's local prefix sums of w = w~ / s (scan_tiles's, unscaled: w <=
// 1), w as the graph's normalise_estimate writes it: a product with the
// rounded inverse (and 0 past the end); and `end`, the end of its last
// positive weight (scan_tiles's tile_end: 0 without one). The end is a
// maximum over the threads, which each warp's lane 0 takes into `end` by a
// shared atomic before tile_scan's first barrier, not a block scan of its
// own: thread 0 reads it after tile_scan (fused indices fit 32 bits: N <=
// FUSED_MAX_N).
__device__ __forceinline__ void normalised_tile(float (&v)[SCAN_ITEMS], float inv_s, long long q,
                                                PaddedTile<float>& buf, float (&x)[SCAN_ITEMS],
                                                unsigned int& end) {
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) v[j] = v[j] * inv_s;
    if (threadIdx.x == 0) end = 0u;  // ordered before the atomics by scale_items's barrier
    unsigned int positive;
    scale_items<false>(v, 0, buf, x, positive);
    const unsigned int first = (unsigned int)(q * SCAN_TILE) + threadIdx.x * SCAN_ITEMS;
    const unsigned int top = warp_max(positive ? first + 32u - __clz(positive) : 0u);
    if ((threadIdx.x & 31) == 0 && top) atomicMax(&end, top);
    tile_scan(x, positive);
}

// scan.cuh's scan_tile_sums<false> for at most 32 * SCAN_ITEMS tiles, by
// warp 0 alone. There thread t's run of SCAN_ITEMS tiles lies in warp 0; the
// other warps' runs are empty and bring exact zeros to every sum and
// maximum, so the block's scans come down to warp 0's shuffles -- the same
// values, bit for bit, without the block's barriers (tested against the
// graph, whose systematic runs scan_tile_sums itself).
static_assert(FUSED_MAX_TILES <= 32 * SCAN_ITEMS, "the tile sums must fit warp 0's runs");
__device__ void scan_few_tile_sums(const float* tile_sum, const long long* tile_end, int tiles,
                                   float* prefix, float* carry, float* total, long long* last) {
    const unsigned int all = 0xFFFFFFFFu;
    const int lane = threadIdx.x, mine = lane * SCAN_ITEMS;
    unsigned int end_positive = 0u;  // fused indices fit 32 bits (N <= FUSED_MAX_N)
    for (int b = lane; b < tiles; b += 32) {
        end_positive = max(end_positive, (unsigned int)__ldcg(tile_end + b));
    }
    float s[SCAN_ITEMS];
    unsigned int reaches = 0u;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        s[j] = mine + j < tiles ? __ldcg(tile_sum + mine + j) : 0.0f;
        if (s[j] > 0.0f) reaches |= 1u << j;
    }
    float sum = s[0];
#pragma unroll
    for (int j = 1; j < SCAN_ITEMS; ++j) sum = sum + s[j];
    const float sums = warp_inclusive_scan(sum, Add());
    const float before = __shfl_up_sync(all, sums, 1);
    const float p0 = lane == 0 ? 0.0f : before;  // the block's exclusive scan, base 0
    const float tops = warp_inclusive_scan(run_top(s, reaches, p0, 0.0f), Max());
    const float top_before = __shfl_up_sync(all, tops, 1);
    float r = lane == 0 ? 0.0f : top_before;
    r = r > 0.0f ? r : 0.0f;
    place_run(s, reaches, p0, r, (long long)mine, (long long)tiles, prefix, carry);
    const float reach = __shfl_sync(all, tops, 31);
    const unsigned int ends = warp_max(end_positive);
    if (lane == 31) {
        total[0] = reach > 0.0f ? reach : 0.0f;
        last[0] = (long long)ends - 1;
    }
}

// Tile q's local prefix sums, left by phase 3 for phase 4 in the particles'
// order (thread t's SCAN_ITEMS consecutive values, 64 bytes, as four float4).
__device__ __forceinline__ void store_local(float* local_scan, long long q,
                                            const float (&v)[SCAN_ITEMS]) {
    float4* out = reinterpret_cast<float4*>(local_scan + q * SCAN_TILE + threadIdx.x * SCAN_ITEMS);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS / 4; ++j) {
        out[j] = make_float4(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]);
    }
}
// Slice r's local prefix sums as phase 3 left them (thread t's ITEMS
// consecutive ones, as float4s), and `before`, the one of the particle
// before the slice when it lies in the same tile (0 otherwise).
template <int ITEMS>
__device__ __forceinline__ void load_slice(const float* local_scan, long long r,
                                           float (&v)[ITEMS], float& before) {
    constexpr long long SLICE = FUSED_THREADS * ITEMS;
    const float4* in = reinterpret_cast<const float4*>(local_scan + r * SLICE + threadIdx.x * ITEMS);
#pragma unroll
    for (int j = 0; j < ITEMS / 4; ++j) {
        const float4 f = __ldcg(in + j);
        v[4 * j] = f.x;
        v[4 * j + 1] = f.y;
        v[4 * j + 2] = f.z;
        v[4 * j + 3] = f.w;
    }
    before = (r * SLICE) % SCAN_TILE ? __ldcg(local_scan + r * SLICE - 1) : 0.0f;
}

// Phase 4 less the estimate: the scan of the tile sums (every block that has
// a slice, its first slice's loads in flight meanwhile), and Systematic's
// ancestors (cumulative.cu's systematic, one replica, u its uniform for the
// step's key) slice by slice, slice r on block r % G: the slice places its
// local sums after the tiles before its own (place_tile), and the particle
// before the slice gives its first slot (the tile's carry at a tile's
// start).
template <int ITEMS>
__device__ __forceinline__ void ancestors_by_slices(const float* local_scan,
                                                    const float* tile_sum,
                                                    const long long* tile_end, int tiles,
                                                    unsigned int n, float u, float* prefix,
                                                    float* carry, float* c_total,
                                                    long long* last_positive,
                                                    PaddedTile<int>& marks, int* ancestors) {
    constexpr long long SLICE = FUSED_THREADS * ITEMS;
    const long long nn = n, slices = (nn + SLICE - 1) / SLICE;
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    float v[ITEMS], v_before;
    if (b < slices) {
        load_slice(local_scan, b, v, v_before);
        if (t < 32) {
            scan_few_tile_sums(tile_sum, tile_end, tiles, prefix, carry, c_total, last_positive);
        }
        __syncthreads();
    }
    const float cn = c_total[0];
    const long long last = last_positive[0];
    for (long long r = b; r < slices; r += G) {
        if (r != b) load_slice(local_scan, r, v, v_before);
        const long long q = r * SLICE / SCAN_TILE, start = r * SLICE;
        place_tile<false>(v, prefix[q], carry[q], 1.0f);
        const long long first = start + (long long)t * ITEMS;
        int o[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            o[j] = first + j >= last ? (int)n : cumulative_offspring(v[j], cn, u, nn);
        }
        float c_before[1] = {v_before};
        if (start % SCAN_TILE) {
            place_tile<false>(c_before, prefix[q], carry[q], 1.0f);
        } else {
            c_before[0] = carry[q];
        }
        const int o_before =
            start - 1 >= last ? (int)n : cumulative_offspring(c_before[0], cn, u, nn);
        // A slice's slots in one chunk of twice its size (write_ancestors);
        // a whole tile's in chunks of a tile, as the graph's Systematic.
        constexpr int SLOTS = ITEMS < SCAN_ITEMS ? 2 * ITEMS : ITEMS;
        write_ancestors<ITEMS, SLOTS>(o, o_before, start, marks, ancestors);
        __syncthreads();
    }
}

// The run's steps, in a kernel of the cooperative grid (CLUSTER false: the
// grid barrier) or of a grid that is one cluster (CLUSTER true).
template <int SLICE_ITEMS, bool CLUSTER>
__device__ __forceinline__ void growth_systematic_steps(
    float* x, float* log_w, float* w_tilde, int* ancestors, unsigned int n, int steps, int parts,
    int tiles, const unsigned int* __restrict__ inputs, const float* __restrict__ drift,
    float init_mean, float init_sd, float sigma_v, float inv_var_n, double* part_sums,
    float* tile_sum, long long* tile_end, float* local_scan, unsigned int* bar, unsigned int* top,
    double* estimates, unsigned long long* marks) {
    static_assert(SLICE_ITEMS % 4 == 0 && SCAN_TILE % (FUSED_THREADS * SLICE_ITEMS) == 0,
                  "a thread's items are float4s, and a slice lies in one tile");
    __shared__ double shared[REDUCE_THREADS];
    __shared__ union {  // phase 2's partial sums, a tile's weights, the ancestors' marks
        double partials[2 * FUSED_BATCH * REDUCE_THREADS];
        PaddedTile<float> values;
        PaddedTile<int> marks;
    } smem;
    // scan_tile_sums's results, computed by every block for its own tiles.
    __shared__ float prefix[FUSED_MAX_TILES], carry[FUSED_MAX_TILES], c_total[1];
    __shared__ long long last_positive[1];
    __shared__ unsigned int end_of_tile;  // normalised_tile's end of phase 3's tile
    const PhiloxKey noise{inputs[0], inputs[1]};
    const float* z = reinterpret_cast<const float*>(inputs + 2 + 2 * steps);
    const long long nn = n;
    const int G = gridDim.x, b = blockIdx.x, t = threadIdx.x;
    double* estimate_parts = part_sums + parts;
    const bool marking = marks != nullptr && b == 0 && t == 0;
    if (marking) marks[0] = global_ns();

    // The initial particles into x[1] (the graph's growth_init), top zeroed.
    for (int k = b * FUSED_THREADS + t; k < steps; k += G * FUSED_THREADS) top[k] = 0u;
    const unsigned int streams = (n + GROWTH_PER_BLOCK - 1) / GROWTH_PER_BLOCK;
    for (unsigned int g = b * FUSED_THREADS + t; g < streams; g += G * FUSED_THREADS) {
        float v[4];
        normals4(noise, g, 0ull, v);
        for (int j = 0; j < GROWTH_PER_BLOCK && g + j * streams < n; ++j) {
            x[n + g + j * streams] = init_mean + init_sd * v[j];
        }
    }
    barrier<CLUSTER>(bar);

    for (int k = 0; k < steps; ++k) {
        float* dst = x + (long long)(k % 2) * n;
        const float* src = x + (long long)((k + 1) % 2) * n;

        // Phase 1 (stage 1): prediction and log-weights, their maximum into top[k].
        const float best = growth_through(src, k == 0 ? nullptr : ancestors, dst, log_w, n, noise,
                                          k + 1ull, drift[k], sigma_v, z[k], inv_var_n);
        const float m_block = block_max(best);
        if (t == 0) atomicMax(top + k, to_ordered(m_block));
        barrier<CLUSTER>(bar);
        if (marking) marks[1 + 4 * k] = global_ns();

        // Phase 2 (stages 1-3, less the divisions by s): w~ = exp(log w -
        // max), the partial sums of s = SUM(w~) (exp_shifted and
        // weight_total's blocks) and of the estimate's SUM(w~ x)
        // (normalise_estimate<1>'s blocks: the same weights a thread, in the
        // same order). The block's virtual blocks p = b, b + G, ... go
        // FUSED_BATCH at a time: their loads in flight together, their 2 *
        // FUSED_BATCH partial sums in one block_reduce_many.
        const float m = from_ordered(__ldcg(top + k));
        for (int p0 = b; p0 < parts; p0 += FUSED_BATCH * G) {
            float lw[FUSED_BATCH], xs[FUSED_BATCH];
#pragma unroll
            for (int j = 0; j < FUSED_BATCH; ++j) {  // each virtual block's first weight
                const long long i = (long long)(p0 + j * G) * REDUCE_THREADS + t;
                const bool mine = p0 + j * G < parts && i < nn;
                lw[j] = mine ? __ldcg(log_w + i) : 0.0f;
                xs[j] = mine ? __ldcg(dst + i) : 0.0f;
            }
            double sums[2 * FUSED_BATCH];  // s's partial of each, then the estimate's
#pragma unroll
            for (int j = 0; j < FUSED_BATCH; ++j) {
                double sum = 0.0, acc = 0.0;
                long long i = (long long)(p0 + j * G) * REDUCE_THREADS + t;
                if (p0 + j * G < parts && i < nn) {
                    float l = lw[j], x_i = xs[j];
                    for (;;) {  // more than one weight a thread only above 2^19
                        const float wt = expf(l - m);
                        w_tilde[i] = wt;
                        sum += (double)wt;
                        acc += (double)wt * (double)x_i;
                        i += (long long)parts * REDUCE_THREADS;
                        if (i >= nn) break;
                        l = __ldcg(log_w + i);
                        x_i = __ldcg(dst + i);
                    }
                }
                sums[j] = sum;
                sums[FUSED_BATCH + j] = acc;
            }
            block_reduce_many(sums, smem.partials, Add());
            if (t == 0) {
#pragma unroll
                for (int j = 0; j < FUSED_BATCH; ++j) {
                    if (p0 + j * G >= parts) break;
                    part_sums[p0 + j * G] = sums[j];
                    estimate_parts[p0 + j * G] = sums[FUSED_BATCH + j];
                }
            }
        }
        barrier<CLUSTER>(bar);
        if (marking) marks[2 + 4 * k] = global_ns();

        // Phase 3 (pass 1 of stage 4's prefix sum): the tiles of w = w~ / s
        // (scan_tiles's), tile q on block q % G; and s, in every block
        // (phase 4 needs it), while the block's first loads are in flight.
        float raw[SCAN_ITEMS];
        if (b < tiles) load_tile_raw(w_tilde, nn, b, raw);
        const double s = sum_of_parts(part_sums, parts, shared);
        const float inv_s = (float)(1.0 / s);
        for (int q = b; q < tiles; q += G) {
            if (q != b) load_tile_raw(w_tilde, nn, q, raw);
            float v[SCAN_ITEMS];
            normalised_tile(raw, inv_s, q, smem.values, v, end_of_tile);
            if (t == SCAN_THREADS - 1) tile_sum[q] = v[SCAN_ITEMS - 1];
            if (t == 0) tile_end[q] = end_of_tile;  // read before the next tile's reset
            store_local(local_scan, q, v);  // phase 4 places them, as pass 2 re-scans
        }
        // While the grid arrives: the step's uniform of Systematic
        // (cumulative.cu's systematic, one replica, the step's key), and the
        // estimate from phase 2's partial sums (by the last block, which has
        // the fewest slices).
        const unsigned int phase3_end = arrive<CLUSTER>(bar);
        const PhiloxKey key{inputs[2 + 2 * k], inputs[3 + 2 * k]};
        const float u = uniform_float(draw_at(key, DOMAIN_GLOBAL, 0u, 0ull));
        if (b == G - 1) {
            const double e = sum_of_parts(estimate_parts, parts, shared);
            if (t == 0) {
                estimates[k] = e / s;
                estimates[steps + k] = s;  // the log-likelihood's sum of w~ (sir_fused.py)
            }
        }
        wait<CLUSTER>(bar, phase3_end);
        if (marking) marks[3 + 4 * k] = global_ns();

        // Phase 4 (stage 4): the ancestors (ancestors_by_slices).
        ancestors_by_slices<SLICE_ITEMS>(local_scan, tile_sum, tile_end, tiles, n, u, prefix,
                                         carry, c_total, last_positive, smem.marks, ancestors);
        barrier<CLUSTER>(bar);
        if (marking) marks[4 + 4 * k] = global_ns();
    }
}

}  // namespace pfr

// The run, its phase 4 in slices of SLICE_ITEMS a thread. x: 2 x n states;
// inputs: the noise key (2 words), the resampling key of each step (2 words
// each), then the T measurements as float32 (common.graph_inputs); drift[k]
// = 8 cos(1.2 k) as float32 (eq.
// 2.34, computed on the host as the graph's driver does). Workspace: parts
// (2 * parts doubles: the weight sums', then the estimate's), the scan's
// tile sums and ends (tiles entries each, tiles <= FUSED_MAX_TILES), bar (1
// word, zero at the launch), top (steps words). Out: estimates (2 steps
// doubles: each step's estimate, then each step's s = SUM(w~)) and, unless
// null, marks (1 + 4 steps nanosecond times: the start, then the end of each
// phase of each step).
template <int SLICE_ITEMS>
__global__ void __launch_bounds__(pfr::FUSED_THREADS, 2)
growth_systematic_run(float* x, float* log_w, float* w_tilde, int* ancestors, unsigned int n,
                      int steps, int parts, int tiles, const unsigned int* __restrict__ inputs,
                      const float* __restrict__ drift, float init_mean, float init_sd,
                      float sigma_v, float inv_var_n, double* part_sums, float* tile_sum,
                      long long* tile_end, float* local_scan, unsigned int* bar, unsigned int* top,
                      double* estimates, unsigned long long* marks) {
    pfr::growth_systematic_steps<SLICE_ITEMS, false>(
        x, log_w, w_tilde, ancestors, n, steps, parts, tiles, inputs, drift, init_mean, init_sd,
        sigma_v, inv_var_n, part_sums, tile_sum, tile_end, local_scan, bar, top, estimates, marks);
}

// The same run on a grid of CLUSTER blocks that is one thread block cluster
// (sm_90 and later; above 8 blocks the driver needs the function's
// non-portable cluster size allowed: filters/sir_fused.py sets it). Its
// blocks are resident together by the cluster's guarantee, so the launch is
// an ordinary one, and its barrier is the cluster's.
template <int SLICE_ITEMS, int CLUSTER>
__global__ void PFR_CLUSTER_DIMS(CLUSTER) __launch_bounds__(pfr::FUSED_THREADS, 2)
growth_systematic_cluster_run(float* x, float* log_w, float* w_tilde, int* ancestors,
                              unsigned int n, int steps, int parts, int tiles,
                              const unsigned int* __restrict__ inputs,
                              const float* __restrict__ drift, float init_mean, float init_sd,
                              float sigma_v, float inv_var_n, double* part_sums, float* tile_sum,
                              long long* tile_end, float* local_scan, unsigned int* bar,
                              unsigned int* top, double* estimates, unsigned long long* marks) {
#if PFR_CLUSTERS
    pfr::growth_systematic_steps<SLICE_ITEMS, true>(
        x, log_w, w_tilde, ancestors, n, steps, parts, tiles, inputs, drift, init_mean, init_sd,
        sigma_v, inv_var_n, part_sums, tile_sum, tile_end, local_scan, bar, top, estimates, marks);
#else
    __trap();  // no clusters before sm_90: sir_fused.py never launches it there
#endif
}
