// cumulative.cu -- the resamplers built on the prefix sum of the weights:
// Systematic (thesis Algorithm 3.1, then Algorithm 3.2), Stratified,
// Multinomial and Residual. The twin of src/pfresample/resampling/cumulative.py:
// same draws, and r_i = (N * C_i) / C_N in the same precision T (the CPU
// sums sequentially and this file in parallel, so C may differ by rounding).
//
// The prefix sum and Algorithm 3.2's ancestor writer are in scan.cuh.
//
// Draw layout (cumulative.py): Systematic's u is counter 0 of stream 0 in
// DOMAIN_GLOBAL; Stratified, Multinomial and Residual's s-th draw use counter
// 0 of particle stream s. All are uniform_float, in [0, 1).

#include "lanes.cuh"
#include "logexp.cuh"
#include "reduce.cuh"
#include "scan.cuh"
#include "stats.cuh"

namespace pfr {

constexpr int TILE_SUMS_THREADS = 1024;  // gpu.py's TILE_SUMS_THREADS: residual_plan's block

// The key of replica `replica` (lanes.cuh's make_lane, for kernels that
// work per tile rather than per lane).
__device__ __forceinline__ PhiloxKey replica_key(long long replica, long long n,
                                                 const unsigned int* keys, int n_keys,
                                                 unsigned int k0, unsigned int k1) {
    return make_lane(replica * n, (unsigned int)n, keys, n_keys, k0, k1).key;
}

// The first index i with r[i] > v: np.searchsorted(r, v, side="right").
template <typename T>
__device__ __forceinline__ long long upper_bound(const T* __restrict__ r, long long n, T v) {
    long long lo = 0, hi = n;
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if (r[mid] <= v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Residual's normalisation (cumulative.residual_expected): the weights
// times the power of two that puts the largest in [0.5, 1), and their sum
// (the statistics' float64 sum, of w * stats[STAT_SCALE]) times the same.
struct ResidualScale {
    double weight, sum;
};
__device__ __forceinline__ ResidualScale residual_scale(const double* stats) {
    const double s = ldexp(1.0, -scale_exponent(stats[STAT_MAX]));
    return {s, stats[STAT_SUM] * (s / stats[STAT_SCALE])};
}

// Residual's split of N w_i / sum w into whole copies and the fraction left
// (cumulative.residual_expected): in T (mode 0), or in float64 (mode 1), the
// CPU's fallback when the copies of mode 0 add up to more than N. e >= 0, so
// truncation is floor, and e - floor(e) is exact in either precision.
template <typename W, typename T>
__device__ __forceinline__ long long residual_split(W wi, long long n, ResidualScale rs, int mode,
                                                    T& fraction) {
    const double a = (double)wi * rs.weight;
    if (mode == 0) {
        const T e = (T)n * (T)a / (T)rs.sum;
        const long long copies = (long long)e;
        fraction = e - (T)copies;
        return copies;
    }
    const double e = (double)n * a / rs.sum;
    const long long copies = (long long)e;
    fraction = (T)(e - (double)copies);
    return copies;
}
}  // namespace pfr

// Pass 1: per tile, its exponent (0 for all unless SCALED: weights whose
// sums can neither overflow nor lose their bits, sums.needs_scaling, take the
// kernels without the scaling arithmetic), its total (the last local sum) and
// one past its last positive value; the last block to finish scans the
// totals (scan_tile_sums). Here, in scaled_prefix_sum and in systematic a
// `divisor` that is not null makes w the weights divided by it as they are
// loaded (scan.cuh's Normaliser): a filter hands w~ and its sum, where a pass
// would write w.
template <typename W, typename T, bool SCALED>
__global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
scan_tiles(const W* __restrict__ w, const double* __restrict__ divisor, long long n, T* tile_sum,
           int* tile_exp, long long* tile_end, T* __restrict__ prefix, T* __restrict__ carry,
           T* __restrict__ total, long long* __restrict__ last, int* __restrict__ exp_max,
           unsigned int* __restrict__ tickets, const int* __restrict__ go) {
    using namespace pfr;
    __shared__ PaddedTile<T> buf;
    if (!gate_open(go)) return;  // the adaptive filter skips this step's resampling
    W v[SCAN_ITEMS];
    load_raw(w, divisor, n, blockIdx.x, v);
    const int e = SCALED ? tile_exponent(v) : 0;
    T x[SCAN_ITEMS];
    unsigned int positive;
    scale_items<SCALED>(v, e, buf, x, positive);
    tile_scan(x, positive);
    const long long first = (long long)blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    const long long end_positive = positive ? first + 32 - __clz(positive) : 0;
    long long tile_end_positive;
    block_exclusive_scan(end_positive, Max(), tile_end_positive);
    if (threadIdx.x == SCAN_THREADS - 1) tile_sum[blockIdx.x] = x[SCAN_ITEMS - 1];
    if (threadIdx.x == 0) {
        tile_end[blockIdx.x] = tile_end_positive;
        if (SCALED) tile_exp[blockIdx.x] = e;
    }
    if (last_block_done(tickets)) {
        scan_tile_sums<SCALED>(tile_sum, tile_exp, tile_end, (long long)gridDim.x, prefix, carry, total,
                       last, exp_max);
    }
}

// C_i of tile `tile` into x (pass 2): the tile's items scaled as in pass 1,
// their local sums, placed after the tiles before.
template <bool SCALED, typename W, typename T>
__device__ __forceinline__ void tile_prefix_sum(const W* w, const double* divisor, long long n,
                                                long long tile,
                                                const int* __restrict__ tile_exp,
                                                const int* __restrict__ exp_max,
                                                const T* __restrict__ prefix,
                                                const T* __restrict__ carry,
                                                pfr::PaddedTile<T>& buf,
                                                T (&x)[pfr::SCAN_ITEMS]) {
    using namespace pfr;
    const int e = SCALED ? tile_exp[tile] : 0;
    unsigned int positive;
    load_tile<SCALED>(w, divisor, n, tile, e, buf, x, positive);
    tile_scan(x, positive);
    const T f = SCALED ? global_factor<T>(e, *exp_max) : T(1);
    place_tile<SCALED>(x, prefix[tile], carry[tile], f);
}

// Pass 2 for the methods that search r: r_i = (count * C_i) / C_N for every
// particle (count = N; Residual's count is on the device, count < 0 says so).
// w and r may be the same array (Residual scans its fractions in place):
// the block has read its whole tile before it writes.
template <typename W, typename T, bool SCALED>
__global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
scaled_prefix_sum(const W* w, const double* __restrict__ divisor, long long n,
                  const int* __restrict__ tile_exp,
                  const int* __restrict__ exp_max, const T* __restrict__ prefix,
                  const T* __restrict__ carry, const T* __restrict__ total,
                  long long count, const long long* __restrict__ count_device,
                  T* r, const int* __restrict__ go) {
    using namespace pfr;
    __shared__ PaddedTile<T> buf;
    if (!gate_open(go)) return;
    T x[SCAN_ITEMS];
    tile_prefix_sum<SCALED>(w, divisor, n, blockIdx.x, tile_exp, exp_max, prefix, carry, buf, x);
    const T scale = (T)(count >= 0 ? count : *count_device), cn = *total;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) x[j] = x[j] * scale / cn;  // (count * C) / C_N
    store_items(x, n, blockIdx.x, buf, r);
}

// ------------------------------------------------------------- resamplers

// Systematic (Algorithm 3.1 + 3.2): block = (replica, tile). The tile's
// cumulative offspring O_i = min(N, floor(r_i + u)), forced to N from the
// last positive weight on (in float32 N * C_N / C_N may round below N, and
// the zero weights after it take nothing); then the block writes the tile's
// output slots (write_ancestors).
template <typename W, typename T, bool SCALED>
__global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
systematic(const W* __restrict__ w, const double* __restrict__ divisor, long long n,
           long long tiles,
           const int* __restrict__ tile_exp, const int* __restrict__ exp_max,
           const T* __restrict__ prefix, const T* __restrict__ carry,
           const T* __restrict__ total, const long long* __restrict__ last_positive,
           const unsigned int* __restrict__ keys,
           int n_keys, unsigned int k0, unsigned int k1, int* __restrict__ out) {
    using namespace pfr;
    __shared__ union {  // the weights, then the marks of write_ancestors
        PaddedTile<T> values;
        PaddedTile<int> marks;
    } smem;
    const long long replica = blockIdx.x / tiles, tile = blockIdx.x - replica * tiles;
    const PhiloxKey key = replica_key(replica, n, keys, n_keys, k0, k1);
    const T u = (T)uniform_float(draw_at(key, DOMAIN_GLOBAL, 0u, 0ull));
    T x[SCAN_ITEMS];
    tile_prefix_sum<SCALED>(w, divisor, n, tile, tile_exp, exp_max, prefix, carry, smem.values,
                            x);
    const T cn = *total;
    const long long last = *last_positive;
    const long long first = tile * SCAN_TILE + (long long)threadIdx.x * SCAN_ITEMS;
    int o[SCAN_ITEMS];
    if (first + SCAN_ITEMS <= last) {  // every thread but one or none: no item is past last
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) o[j] = cumulative_offspring(x[j], cn, u, n);
    } else {
        // The last positive particle, and every one past it, take O = N.
        const long long to_last = last - first;
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            o[j] = j >= to_last ? (int)n : cumulative_offspring(x[j], cn, u, n);
        }
    }
    // The tiles before end at C = carry (0 before the first: O = floor(u) = 0).
    const int o_before = tile * SCAN_TILE - 1 >= last
                             ? (int)n
                             : cumulative_offspring(carry[tile], cn, u, n);
    write_ancestors(o, o_before, tile * SCAN_TILE, smem.marks, out + replica * n);
}

// Stratified (STRATIFY) and Multinomial, and Residual's draws: lane =
// (replica, slot s) with s < count. Slot s looks up v = s + u (stratified)
// or count * u in r (searchsorted, side="right"), clamped to the last
// particle of positive weight; it writes output slot n - count + s (Residual
// puts its draws after the deterministic copies). count < 0: on the device.
template <typename T, bool STRATIFY>
__global__ void inverse_cdf_draws(const T* __restrict__ r, unsigned int n, long long lanes,
                                  const unsigned int* __restrict__ keys, int n_keys,
                                  unsigned int k0, unsigned int k1, long long count,
                                  const long long* __restrict__ count_device,
                                  const long long* __restrict__ last, int* __restrict__ out,
                                  const int* __restrict__ go) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    if (!gate_open(go)) return;  // no resampling: out is not read (the gate says so)
    const long long draws = count >= 0 ? count : *count_device;
    const unsigned int s = lane.particle;
    if (s >= draws) return;
    const T u = (T)uniform_float(draw_at(lane.key, DOMAIN_PARTICLE, s, 0ull));
    const T v = STRATIFY ? (T)s + u : (T)draws * u;
    const long long found = upper_bound(r, (long long)n, v);
    out[id + (n - draws)] = (int)min(found, *last);
}

// Residual, step 1, per tile: the sums of the copies and the number of
// positive fractions in both modes of residual_split (tile_counts holds four
// rows of `tiles`). The sum of the weights comes from the statistics pass
// (its float64 sum, which the CPU computes in the same order).
template <typename W, typename T>
__global__ void residual_tile_counts(const W* __restrict__ w, long long n, long long tiles,
                                     const double* __restrict__ stats,
                                     long long* __restrict__ tile_counts) {
    using namespace pfr;
    const ResidualScale rs = residual_scale(stats);
    const long long first = (long long)blockIdx.x * SCAN_TILE + (long long)threadIdx.x * SCAN_ITEMS;
    long long counts[4] = {0, 0, 0, 0};  // copies (mode 0, 1), positive fractions (mode 0, 1)
    for (int j = 0; j < SCAN_ITEMS && first + j < n; ++j) {
        for (int mode = 0; mode < 2; ++mode) {
            T fraction;
            counts[mode] += residual_split(w[first + j], n, rs, mode, fraction);
            counts[2 + mode] += fraction > T(0);
        }
    }
    for (int q = 0; q < 4; ++q) {
        long long tile_total;
        block_exclusive_scan(counts[q], Add(), tile_total);
        if (threadIdx.x == 0) tile_counts[q * tiles + blockIdx.x] = tile_total;
    }
}

// Residual, step 2, one block of TILE_SUMS_THREADS: the mode (1 when mode
// 0's copies exceed N), rest = N - copies, whether the draws use the
// weights themselves (no positive fraction: the CPU's second fallback),
// each tile's first output slot, and the normalisation (residual_scale) for
// the per-particle kernels after it, computed once here.
extern "C" __global__ void residual_plan(const long long* __restrict__ tile_counts, long long tiles,
                                         long long n, const double* __restrict__ stats,
                                         long long* __restrict__ tile_offset,
                                         long long* __restrict__ rest, int* __restrict__ plan,
                                         double* __restrict__ scale) {
    using namespace pfr;
    const long long per = (tiles + TILE_SUMS_THREADS - 1) / TILE_SUMS_THREADS;
    const long long begin = min(tiles, threadIdx.x * per), end = min(tiles, begin + per);
    long long local[4] = {0, 0, 0, 0}, total[4];
    for (long long b = begin; b < end; ++b) {
        for (int q = 0; q < 4; ++q) local[q] += tile_counts[q * tiles + b];
    }
    for (int q = 0; q < 4; ++q) block_exclusive_scan(local[q], Add(), total[q]);
    const int mode = total[0] > n ? 1 : 0;
    long long ignored;
    long long offset = block_exclusive_scan(local[mode], Add(), ignored);
    for (long long b = begin; b < end; ++b) {
        tile_offset[b] = offset;
        offset += tile_counts[mode * tiles + b];
    }
    if (threadIdx.x == 0) {
        rest[0] = n - total[mode];
        plan[0] = mode;
        plan[1] = total[2 + mode] == 0;  // every fraction is zero: draw on the weights
        const ResidualScale rs = residual_scale(stats);
        scale[0] = rs.weight;
        scale[1] = rs.sum;
    }
}

// Residual, step 3, per particle: what the draws are made on -- the
// fractions, or the scaled weights (in T) when every fraction is zero.
template <typename W, typename T>
__global__ void residual_fractions(const W* __restrict__ w, long long n,
                                   const double* __restrict__ scale, const int* __restrict__ plan,
                                   T* __restrict__ values) {
    using namespace pfr;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const ResidualScale rs = {scale[0], scale[1]};
    T fraction;
    residual_split(w[i], n, rs, plan[0], fraction);
    values[i] = plan[1] ? (T)((double)w[i] * rs.weight) : fraction;
}

// Residual, step 4, block = (replica, tile): the deterministic copies, by
// Algorithm 3.2 on the cumulative copies (integers: the scan is exact).
template <typename W, typename T>
__global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
residual_copies(const W* __restrict__ w, long long n, long long tiles,
                const double* __restrict__ scale, const int* __restrict__ plan,
                const long long* __restrict__ tile_offset, int* __restrict__ out) {
    using namespace pfr;
    __shared__ PaddedTile<int> marks;
    const long long replica = blockIdx.x / tiles, tile = blockIdx.x - replica * tiles;
    const ResidualScale rs = {scale[0], scale[1]};
    const long long first = tile * SCAN_TILE + (long long)threadIdx.x * SCAN_ITEMS;
    long long x[SCAN_ITEMS];
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        T ignored;
        const long long i = first + j;
        x[j] = i < n ? residual_split(w[i], n, rs, plan[0], ignored) : 0;
    }
    tile_scan(x, 0xFFFFu);  // integers: exact sums, nothing to mask
    const long long o_before = tile_offset[tile];
    int o[SCAN_ITEMS];
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) o[j] = (int)min(o_before + x[j], n);
    write_ancestors(o, (int)min(o_before, n), tile * SCAN_TILE, marks, out + replica * n);
}

// ------------------------------------------- precision "log32" (resampling/log_scan.py)
// Güldaş (2015) Appendix A's float32 log-domain work-efficient scan, in the
// order log_scan.py states: tiles of LOG_TILE values, a block of LOG_THREADS
// threads each (two values a thread), the reduction and distribution phases of
// Tables A.1-A.2; the tile totals scanned by one block, chunk after chunk; the
// totals added back. Then r_i = fl32(count exp(L_i - L_N)) and its running
// maximum (exact in any order), and the float32 draws of the kernels above.
// `coef`, `terms`: the exponential's Taylor coefficients; `odd`: 1 / (2k + 1).

namespace pfr {
constexpr int LOG_TILE = 2048;  // log_scan.LOG_TILE
constexpr int LOG_THREADS = LOG_TILE / 2;

// Tables A.1-A.2 on c[0 .. LOG_TILE) in shared memory, thread t = threadIdx.x.
__device__ __forceinline__ void log_tile_scan(float* c, const double* coef, int terms,
                                              const double* odd) {
    const int t = threadIdx.x;
    for (int stride = 1; stride <= LOG_THREADS; stride *= 2) {  // reduction phase
        const int k = (t + 1) * stride * 2 - 1;
        if (k < LOG_TILE) c[k] = lse(c[k], c[k - stride], coef, terms, odd);
        __syncthreads();
    }
    for (int stride = LOG_THREADS / 2; stride > 0; stride /= 2) {  // distribution phase
        const int k = (t + 1) * stride * 2 - 1;
        if (k + stride < LOG_TILE) c[k + stride] = lse(c[k + stride], c[k], coef, terms, odd);
        __syncthreads();
    }
}
}  // namespace pfr

// Step 1, block = tile: l_i = fl32(log w_i + offset), the tile's inclusive
// log-sums into local[], its total into totals[tile], and one past its last
// positive weight (0 for none) into tile_end[tile].
template <typename W>
__global__ void __launch_bounds__(pfr::LOG_THREADS)
log_scan_tiles(const W* __restrict__ w, long long n, double offset,
               const double* __restrict__ coef, int terms, const double* __restrict__ odd,
               float* __restrict__ local, float* __restrict__ totals,
               long long* __restrict__ tile_end) {
    using namespace pfr;
    __shared__ float c[LOG_TILE];
    __shared__ long long ends[LOG_THREADS];
    const long long base = (long long)blockIdx.x * LOG_TILE;
    long long end = 0;
    for (int h = 0; h < 2; ++h) {
        const long long i = base + threadIdx.x + h * LOG_THREADS;
        float v = minus_inf_f();
        if (i < n) {
            const double wi = (double)w[i];
            v = (float)(log_positive(wi, odd) + offset);
            if (wi > 0.0) end = i + 1;
        }
        c[threadIdx.x + h * LOG_THREADS] = v;
    }
    ends[threadIdx.x] = end;
    __syncthreads();
    log_tile_scan(c, coef, terms, odd);
    for (int h = 0; h < 2; ++h) {
        const int j = threadIdx.x + h * LOG_THREADS;
        local[base + j] = c[j];
    }
    for (int s = LOG_THREADS / 2; s > 0; s /= 2) {  // the largest end: a max, any order
        if (threadIdx.x < s && ends[threadIdx.x + s] > ends[threadIdx.x])
            ends[threadIdx.x] = ends[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        totals[blockIdx.x] = c[LOG_TILE - 1];
        tile_end[blockIdx.x] = ends[0];
    }
}

// Step 2, one block of LOG_THREADS: the tile totals scanned in place, chunk
// after chunk of LOG_TILE (a later chunk lse'd with the end of the one before);
// then L_N (top[0]) and the last positive weight (last[0]).
extern "C" __global__ void __launch_bounds__(pfr::LOG_THREADS)
log_scan_totals(float* __restrict__ totals, long long tiles, const float* __restrict__ local,
                long long n, const long long* __restrict__ tile_end,
                const double* __restrict__ coef, int terms, const double* __restrict__ odd,
                float* __restrict__ top, long long* __restrict__ last) {
    using namespace pfr;
    __shared__ float c[LOG_TILE];
    __shared__ long long ends[LOG_THREADS];
    __shared__ float chunk_end;  // the last scanned total of the chunk before
    float carry = minus_inf_f();
    if (tiles > 1) {
        for (long long first = 0; first < tiles; first += LOG_TILE) {
            for (int h = 0; h < 2; ++h) {
                const long long i = first + threadIdx.x + h * LOG_THREADS;
                c[threadIdx.x + h * LOG_THREADS] = i < tiles ? totals[i] : minus_inf_f();
            }
            __syncthreads();
            log_tile_scan(c, coef, terms, odd);
            for (int h = 0; h < 2; ++h) {
                const int j = threadIdx.x + h * LOG_THREADS;
                const float v = first > 0 ? lse(c[j], carry, coef, terms, odd) : c[j];
                if (first + j < tiles) totals[first + j] = v;
                if (j == LOG_TILE - 1) chunk_end = v;
            }
            __syncthreads();  // every c[j] read, chunk_end written
            carry = chunk_end;
            __syncthreads();  // every thread has the carry before the next chunk's loads
        }
    }
    long long end = 0;
    for (long long b = threadIdx.x; b < tiles; b += LOG_THREADS)
        end = tile_end[b] > end ? tile_end[b] : end;
    ends[threadIdx.x] = end;
    __syncthreads();
    for (int s = LOG_THREADS / 2; s > 0; s /= 2) {
        if (threadIdx.x < s && ends[threadIdx.x + s] > ends[threadIdx.x])
            ends[threadIdx.x] = ends[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const long long tile = (n - 1) / LOG_TILE;
        const float ln = local[n - 1];
        top[0] = tile > 0 ? lse(ln, totals[tile - 1], coef, terms, odd) : ln;
        last[0] = ends[0] - 1;
    }
}

// Step 3, block = tile: L_i (lse with the scanned total of the tile before),
// r_i = fl32(count exp(L_i - L_N)), the tile's inclusive running maximum of r
// into r[], and its largest into tile_max[tile].
extern "C" __global__ void __launch_bounds__(pfr::LOG_THREADS)
log_scan_ratios(const float* __restrict__ local, const float* __restrict__ totals, long long n,
                long long count, const float* __restrict__ top, const double* __restrict__ coef,
                int terms, const double* __restrict__ odd, float* __restrict__ r,
                float* __restrict__ tile_max) {
    using namespace pfr;
    __shared__ float c[LOG_TILE];
    const long long base = (long long)blockIdx.x * LOG_TILE;
    const double ln = (double)top[0];
    for (int h = 0; h < 2; ++h) {
        const int j = threadIdx.x + h * LOG_THREADS;
        float v = 0.0f;
        if (base + j < n) {
            float l = local[base + j];
            if (blockIdx.x > 0) l = lse(l, totals[blockIdx.x - 1], coef, terms, odd);
            v = (float)((double)count * exp_nonpositive((double)l - ln, coef, terms));
        }
        c[j] = v;
    }
    __syncthreads();
    for (int d = 1; d < LOG_TILE; d *= 2) {  // Hillis-Steele running maximum
        float a[2];
        for (int h = 0; h < 2; ++h) {
            const int j = threadIdx.x + h * LOG_THREADS;
            a[h] = j >= d && c[j - d] > c[j] ? c[j - d] : c[j];
        }
        __syncthreads();
        for (int h = 0; h < 2; ++h) c[threadIdx.x + h * LOG_THREADS] = a[h];
        __syncthreads();
    }
    for (int h = 0; h < 2; ++h) {
        const int j = threadIdx.x + h * LOG_THREADS;
        if (base + j < n) r[base + j] = c[j];
    }
    if (threadIdx.x == 0) tile_max[blockIdx.x] = c[LOG_TILE - 1];
}

// Step 4, block = tile: r_i = max(r_i, the largest r of the tiles before).
extern "C" __global__ void __launch_bounds__(pfr::LOG_THREADS)
log_scan_carry(float* __restrict__ r, long long n, const float* __restrict__ tile_max) {
    using namespace pfr;
    __shared__ float m[LOG_THREADS];
    float v = 0.0f;
    for (long long b = threadIdx.x; b < blockIdx.x; b += LOG_THREADS)
        v = tile_max[b] > v ? tile_max[b] : v;
    m[threadIdx.x] = v;
    __syncthreads();
    for (int s = LOG_THREADS / 2; s > 0; s /= 2) {
        if (threadIdx.x < s && m[threadIdx.x + s] > m[threadIdx.x]) m[threadIdx.x] = m[threadIdx.x + s];
        __syncthreads();
    }
    const float carry = m[0];
    const long long base = (long long)blockIdx.x * LOG_TILE;
    for (int h = 0; h < 2; ++h) {
        const long long i = base + threadIdx.x + h * LOG_THREADS;
        if (i < n && carry > r[i]) r[i] = carry;
    }
}

// Systematic on r (cumulative.systematic with precision "log32"): block =
// (replica, tile of SCAN_TILE); O_i = min(N, floor(r_i + u)) in float32,
// N from the last positive weight on; Algorithm 3.2 (write_ancestors).
extern "C" __global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
systematic_from_ratios(const float* __restrict__ r, long long n, long long tiles,
                       const long long* __restrict__ last_positive,
                       const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                       unsigned int k1, int* __restrict__ out) {
    using namespace pfr;
    __shared__ PaddedTile<int> marks;
    const long long replica = blockIdx.x / tiles, tile = blockIdx.x - replica * tiles;
    const PhiloxKey key = replica_key(replica, n, keys, n_keys, k0, k1);
    const float u = (float)uniform_float(draw_at(key, DOMAIN_GLOBAL, 0u, 0ull));
    const long long last = *last_positive;
    const long long first = tile * SCAN_TILE + (long long)threadIdx.x * SCAN_ITEMS;
    int o[SCAN_ITEMS];
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const long long i = first + j;
        if (i >= n || i >= last) {
            o[j] = (int)n;
        } else {
            const long long v = (long long)(r[i] + u);  // truncation is floor: r + u >= 0
            o[j] = (int)(v < n ? v : n);
        }
    }
    int o_before = 0;  // before the first particle: nothing
    if (tile > 0) {
        const long long i = tile * SCAN_TILE - 1;
        const long long v = (long long)(r[i] + u);
        o_before = i >= last ? (int)n : (int)(v < n ? v : n);
    }
    write_ancestors(o, o_before, tile * SCAN_TILE, marks, out + replica * n);
}
