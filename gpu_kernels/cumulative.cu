// cumulative.cu -- the resamplers built on the prefix sum of the weights:
// Systematic (thesis Algorithm 3.1, then Algorithm 3.2), Stratified,
// Multinomial and Residual. The twin of src/pfresample/resampling/cumulative.py:
// same draws, and r_i = (N * C_i) / C_N in the same precision T (the CPU
// sums sequentially and this file in parallel, so C may differ by rounding).
//
// Prefix sum, in two kernels over tiles of SCAN_TILE weights (thread t of a
// tile holds the SCAN_ITEMS consecutive items from t * SCAN_ITEMS). The CPU
// computes the same sums in the same order (resampling/prefix_sum.py, whose
// docstring states the contract), so both backends give the same ancestors.
//   1. scan_tiles:   each tile's weights scaled by a power of two that puts
//                    the tile's maximum in [0.5, 1) (no finite input then
//                    overflows a sum, and subnormals become normal numbers),
//                    and their local inclusive sums (tile_scan); the last one
//                    is the tile's total. The last block to finish then
//                    scans the tile totals, brought to the scale of the
//                    largest tile (scan_tile_sums): prefix[b], the sum before
//                    tile b; carry[b], the largest C of the tiles before b;
//                    and C_N. One launch instead of two: at a few
//                    microseconds per launch, that is a sizable part of
//                    Systematic's time.
//   2. per method:   tile_scan again -- the same code, so its last value is
//                    bit-identical to pass 1's total -- and
//                    C_i = max(carry[b], prefix[b] + f_b * local_i).
// Parallel partial sums meet with rounding, so where two of them join C may
// step down by an ulp. The running maximum (inside a tile, and `carry`
// between tiles) keeps C non-decreasing, which Algorithm 3.2 and the binary
// searches need; with exact arithmetic it changes nothing. The running
// maximum runs over positive weights only, so C is flat over zero weights:
// they own no interval and are never chosen. Every order is fixed by N
// alone, so a call gives the same bits every time.
//
// Draw layout (cumulative.py): Systematic's u is counter 0 of stream 0 in
// DOMAIN_GLOBAL; Stratified, Multinomial and Residual's s-th draw use counter
// 0 of particle stream s. All are uniform_float, in [0, 1).

#include "lanes.cuh"
#include "reduce.cuh"
#include "stats.cuh"

namespace pfr {

constexpr int SCAN_THREADS = 256;        // gpu.py's SCAN_THREADS
constexpr int SCAN_ITEMS = 16;           // gpu.py's SCAN_ITEMS
constexpr int SCAN_TILE = SCAN_THREADS * SCAN_ITEMS;
constexpr int TILE_SUMS_THREADS = 1024;  // gpu.py's TILE_SUMS_THREADS: residual_plan's block
// The tile kernels are declared __launch_bounds__(SCAN_THREADS, 4): at most
// 64 registers, four blocks per SM. Left alone the compiler took 110-170
// registers (the unrolled tile arrays): one or two blocks per SM.

// A tile in shared memory, padded by one entry per 128 bytes: thread t
// reading (or writing) its SCAN_ITEMS consecutive entries, and a warp
// touching 32 consecutive ones, then hit distinct banks.
template <typename V>
__host__ __device__ constexpr int padded(int i) {
    return i + i / (128 / (int)sizeof(V));
}
template <typename V>
struct PaddedTile {
    V at[padded<V>(SCAN_TILE)];
};

// Inclusive scan over the 32 lanes of a warp (Kogge-Stone, with shuffles).
template <typename V, typename Op>
__device__ __forceinline__ V warp_inclusive_scan(V x, Op op) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const V y = __shfl_up_sync(0xFFFFFFFFu, x, d);
        if (lane >= d) x = op(y, x);
    }
    return x;
}

// Exclusive scan of one value per thread over the block, in a fixed order
// (so the same inputs always give the same bits); `total` gets the whole
// block's result. The identity is 0: every value scanned here is >= 0.
// blockDim.x must be a multiple of 32, at most 1024.
template <typename V, typename Op>
__device__ V block_exclusive_scan(V value, Op op, V& total) {
    __shared__ V warp_totals[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const V x = warp_inclusive_scan(value, op);
    if (lane == 31) warp_totals[warp] = x;
    __syncthreads();
    if (warp == 0) {
        const V t = warp_inclusive_scan(lane < warps ? warp_totals[lane] : V(0), op);
        warp_totals[lane] = t;
    }
    __syncthreads();
    const V left = __shfl_up_sync(0xFFFFFFFFu, x, 1);  // lane - 1's inclusive value
    V result;
    if (lane == 0) {
        result = warp ? warp_totals[warp - 1] : V(0);
    } else {
        result = warp ? op(warp_totals[warp - 1], left) : left;
    }
    total = warp_totals[warps - 1];
    __syncthreads();  // the next scan may overwrite warp_totals
    return result;
}

// Thread t's raw items of tile `tile`, as loaded: item j is tile entry
// j * SCAN_THREADS + t (a warp reads 32 consecutive weights), zeros past the
// end, which leave every sum unchanged.
template <typename W>
__device__ __forceinline__ void load_raw(const W* w, long long n, long long tile,
                                         W (&v)[SCAN_ITEMS]) {
    const long long base = tile * SCAN_TILE;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {  // all loads in flight before any use
        const long long i = base + j * SCAN_THREADS + threadIdx.x;
        v[j] = i < n ? __ldcg(w + i) : W(0);  // L2 only: read once, and maybe
    }                                            // written earlier in this launch
}

// The tile's scale exponent: frexp's of its largest weight (a block-wide
// maximum), or NO_EXPONENT when no weight is positive.
template <typename W>
__device__ __forceinline__ int tile_exponent(const W (&v)[SCAN_ITEMS]) {
    W top = W(0);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) top = v[j] > top ? v[j] : top;
    W tile_top;
    block_exclusive_scan(top, Max(), tile_top);
    return scale_exponent((double)tile_top);
}

// The raw items times 2^-e, rounded to T, handed to their threads through
// `buf` (thread t gets entries t * SCAN_ITEMS + j); bit j of `positive` is
// set where x[j] > 0. Unless SCALED, e is 0 and the items are (T)v.
template <bool SCALED, typename W, typename T>
__device__ __forceinline__ void scale_items(const W (&v)[SCAN_ITEMS], int e, PaddedTile<T>& buf,
                                            T (&x)[SCAN_ITEMS], unsigned int& positive) {
    const bool unscaled = !SCALED || e == 0 || e == NO_EXPONENT;  // (T)v: the same bits
    const double scale = ldexp(1.0, unscaled ? 0 : -e);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        buf.at[padded<T>(j * SCAN_THREADS + threadIdx.x)] =
            unscaled ? (T)v[j] : (T)((double)v[j] * scale);
    }
    __syncthreads();
    positive = 0u;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        x[j] = buf.at[padded<T>(threadIdx.x * SCAN_ITEMS + j)];
        if (x[j] > T(0)) positive |= 1u << j;
    }
    __syncthreads();  // buf is free again
}

// The tile's items scaled (pass 1 finds the exponent, pass 2 reads it).
template <bool SCALED, typename W, typename T>
__device__ __forceinline__ void load_tile(const W* w, long long n, long long tile, int e,
                                          PaddedTile<T>& buf, T (&x)[SCAN_ITEMS],
                                          unsigned int& positive) {
    W v[SCAN_ITEMS];
    load_raw(w, n, tile, v);
    scale_items<SCALED>(v, e, buf, x, positive);
}

// The inverse of scale_items's hand-over: thread t's values to positions t * SCAN_ITEMS +
// j of the tile in `out` (those below n), with coalesced stores.
template <typename T>
__device__ __forceinline__ void store_items(const T (&x)[SCAN_ITEMS], long long n, long long tile,
                                            PaddedTile<T>& buf, T* out) {
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) buf.at[padded<T>(threadIdx.x * SCAN_ITEMS + j)] = x[j];
    __syncthreads();
    const long long base = tile * SCAN_TILE;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const int k = j * SCAN_THREADS + threadIdx.x;
        if (base + k < n) out[base + k] = buf.at[padded<T>(k)];
    }
}

// The tile's local inclusive prefix sums, in place and non-decreasing:
// sequential inside a thread, a block scan of the thread totals between
// threads, then a running maximum over the positive items (bit j of
// `positive`): an item that is not positive takes the value of the last
// positive one before it in the tile (0 if none). Pass 1 and pass 2 both
// call this, so the tile's last value is the same in both.
template <typename V>
__device__ void tile_scan(V (&x)[SCAN_ITEMS], unsigned int positive) {
#pragma unroll
    for (int j = 1; j < SCAN_ITEMS; ++j) x[j] = x[j - 1] + x[j];
    V total;
    const V offset = block_exclusive_scan(x[SCAN_ITEMS - 1], Add(), total);
    V last_positive = V(0);  // inside a thread the values rise: a running maximum
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const V c = offset + x[j];
        if ((positive >> j) & 1u) last_positive = c;
        x[j] = last_positive;
    }
    // The next thread's offset may round below this thread's last value.
    const V before = block_exclusive_scan(x[SCAN_ITEMS - 1], Max(), total);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) x[j] = x[j] > before ? x[j] : before;
}

// C_i of the thread's items: the tile's local sums brought to the global
// scale (factor f; 1 unless SCALED, so no product) and placed after the
// tiles before it (pass 2 of the prefix sum); carry where no weight up to i
// in the tile is positive.
template <bool SCALED, typename T>
__device__ __forceinline__ void place_tile(T (&x)[SCAN_ITEMS], T prefix, T carry, T f) {
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const T c = SCALED ? prefix + x[j] * f : prefix + x[j];
        x[j] = x[j] > T(0) && c > carry ? c : carry;
    }
}

// The factor that brings a tile of exponent e to the global scale e_max:
// 2^(e - e_max), rounded to T (0 for a tile without a positive weight).
template <typename T>
__device__ __forceinline__ T global_factor(int e, int e_max) {
    return (T)ldexp(1.0, e == NO_EXPONENT ? -4096 : e - e_max);
}

// Algorithm 3.1, lines 5-6: O = min(N, floor(r + u)) with r = (N * C) / C_N,
// in T and in the order of cumulative.scaled_prefix_sum.
template <typename T>
__device__ __forceinline__ int cumulative_offspring(T c, T cn, T u, long long n) {
    const T r = c * (T)n / cn;
    const long long o = (long long)(r + u);  // truncation is floor: r + u >= 0
    return (int)(o < n ? o : n);
}

// Algorithm 3.2 for one tile. Thread t holds the cumulative offspring o[j]
// of particles first_particle + t * SCAN_ITEMS + j (non-decreasing over the
// tile, also past N); the tile's particles own the output slots [o_before,
// o_end), o_end the tile's last o, and slot k's ancestor is the first
// particle with o > k. The block fills the slots in chunks of SCAN_TILE:
// every particle with offspring
// marks the first of its slots in the chunk (no two mark the same slot), a
// running maximum of the marks carries each over the particle's other slots,
// and the block writes the chunk with coalesced stores. So a particle with
// many offspring is spread over all threads, never one thread's serial loop,
// and a slot costs a few instructions (a binary search per slot cost 12
// dependent loads and was the kernel's bottleneck on the H200).
__device__ void write_ancestors(const int (&o)[SCAN_ITEMS], int o_before, long long first_particle,
                                PaddedTile<int>& marks, int* __restrict__ row) {
    __shared__ int thread_end[SCAN_THREADS];  // each thread's last o
    thread_end[threadIdx.x] = o[SCAN_ITEMS - 1];
    __syncthreads();
    const int o_end = thread_end[SCAN_THREADS - 1];
    const int first_start = threadIdx.x ? thread_end[threadIdx.x - 1] : o_before;
    const int mine = threadIdx.x * SCAN_ITEMS;  // this thread's first entry of a tile
    for (int s0 = max(o_before, 0); s0 < o_end; s0 += SCAN_TILE) {
        const int s1 = min(o_end, s0 + SCAN_TILE);
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) marks.at[padded<int>(mine + j)] = 0;
        __syncthreads();
        int start = first_start;  // the particle's first slot
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            if (start < o[j] && start < s1 && o[j] > s0) {
                marks.at[padded<int>(max(start, s0) - s0)] = mine + j + 1;
            }
            start = o[j];
        }
        __syncthreads();
        int a[SCAN_ITEMS];  // local particle + 1 of slots s0 + mine + j
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) a[j] = marks.at[padded<int>(mine + j)];
#pragma unroll
        for (int j = 1; j < SCAN_ITEMS; ++j) a[j] = max(a[j - 1], a[j]);
        int ignored;  // (the scan synchronises: every thread has read its marks)
        const int before = block_exclusive_scan(a[SCAN_ITEMS - 1], Max(), ignored);
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) marks.at[padded<int>(mine + j)] = max(a[j], before);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            const int k = j * SCAN_THREADS + threadIdx.x;
            if (s0 + k < s1) row[s0 + k] = (int)(first_particle + marks.at[padded<int>(k)] - 1);
        }
        __syncthreads();  // the next chunk clears the marks
    }
}

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

// ------------------------------------------------------------- prefix sum

// The scan of the tile totals, by one block (pass 1's last): the global
// exponent e_max (the largest tile's), then, with each total brought to that
// scale, prefix[b] = the sum of the tiles before b, carry[b] = the largest C
// of those tiles (tile b' ends at prefix[b'] + its total; a tile without a
// positive value reaches nothing), total = C_N (the largest C of all),
// last = the last index with a positive weight. The totals go through the
// block SCAN_TILE at a time: thread t takes a run of SCAN_ITEMS tiles.
// Unless SCALED every exponent is 0, and so is e_max. A tile has a positive
// value exactly when its total is positive.
template <bool SCALED, typename T>
__device__ void scan_tile_sums(const T* tile_sum, const int* tile_exp, const long long* tile_end,
                               long long tiles, T* prefix, T* carry, T* total, long long* last,
                               int* exp_max) {
    int e_max = 0;
    if (SCALED) {
        int top_exp = 0;  // exponents above NO_EXPONENT: the scan's identity is 0
        for (long long b = threadIdx.x; b < tiles; b += SCAN_THREADS) {
            top_exp = max(top_exp, __ldcg(tile_exp + b) - NO_EXPONENT);
        }
        int all_top_exp;
        block_exclusive_scan(top_exp, Max(), all_top_exp);
        e_max = all_top_exp + NO_EXPONENT;
    }
    T base = T(0);   // the sum of the chunks before
    T reach = T(0);  // the largest tile end before
    for (long long c = 0; c < tiles; c += SCAN_TILE) {
        const long long mine = c + threadIdx.x * SCAN_ITEMS;  // few values: plain loads
        T s[SCAN_ITEMS];
        unsigned int reaches = 0u;
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            s[j] = T(0);
            if (mine + j < tiles) {
                const T sum = __ldcg(tile_sum + mine + j);
                s[j] = SCALED ? sum * global_factor<T>(__ldcg(tile_exp + mine + j), e_max) : sum;
                if (sum > T(0)) reaches |= 1u << j;
            }
        }
        T sum = s[0];
#pragma unroll
        for (int j = 1; j < SCAN_ITEMS; ++j) sum = sum + s[j];
        T chunk_sum;
        const T p0 = base + block_exclusive_scan(sum, Add(), chunk_sum);
        T p = p0, top = reach;  // top: the largest tile end up to this thread's run
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            p = p + s[j];
            if ((reaches >> j) & 1u) top = p > top ? p : top;
        }
        T chunk_top;
        T r = block_exclusive_scan(top, Max(), chunk_top);
        r = r > reach ? r : reach;
        p = p0;
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            if (mine + j < tiles) {
                prefix[mine + j] = p;
                carry[mine + j] = r;
            }
            p = p + s[j];
            if ((reaches >> j) & 1u) r = p > r ? p : r;
        }
        base = base + chunk_sum;
        reach = chunk_top > reach ? chunk_top : reach;
    }
    long long end_positive = 0;
#pragma unroll 4
    for (long long b = threadIdx.x; b < tiles; b += SCAN_THREADS) {
        end_positive = max(end_positive, __ldcg(tile_end + b));
    }
    long long all_end_positive;
    block_exclusive_scan(end_positive, Max(), all_end_positive);
    if (threadIdx.x == 0) {
        total[0] = reach;
        last[0] = all_end_positive - 1;
        exp_max[0] = e_max;
    }
}

}  // namespace pfr

// Pass 1: per tile, its exponent (0 for all unless SCALED: weights whose
// sums can neither overflow nor lose their bits, sums.needs_scaling, take the
// kernels without the scaling arithmetic), its total (the last local sum) and
// one past its last positive value; the last block to finish scans the
// totals (scan_tile_sums).
template <typename W, typename T, bool SCALED>
__global__ void __launch_bounds__(pfr::SCAN_THREADS, 4)
scan_tiles(const W* __restrict__ w, long long n, T* tile_sum, int* tile_exp,
           long long* tile_end, T* __restrict__ prefix, T* __restrict__ carry,
           T* __restrict__ total, long long* __restrict__ last, int* __restrict__ exp_max,
           unsigned int* __restrict__ tickets, const int* __restrict__ go) {
    using namespace pfr;
    __shared__ PaddedTile<T> buf;
    if (!gate_open(go)) return;  // the adaptive filter skips this step's resampling
    W v[SCAN_ITEMS];
    load_raw(w, n, blockIdx.x, v);
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
__device__ __forceinline__ void tile_prefix_sum(const W* w, long long n, long long tile,
                                                const int* __restrict__ tile_exp,
                                                const int* __restrict__ exp_max,
                                                const T* __restrict__ prefix,
                                                const T* __restrict__ carry,
                                                pfr::PaddedTile<T>& buf,
                                                T (&x)[pfr::SCAN_ITEMS]) {
    using namespace pfr;
    const int e = SCALED ? tile_exp[tile] : 0;
    unsigned int positive;
    load_tile<SCALED>(w, n, tile, e, buf, x, positive);
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
scaled_prefix_sum(const W* w, long long n, const int* __restrict__ tile_exp,
                  const int* __restrict__ exp_max, const T* __restrict__ prefix,
                  const T* __restrict__ carry, const T* __restrict__ total,
                  long long count, const long long* __restrict__ count_device,
                  T* r, const int* __restrict__ go) {
    using namespace pfr;
    __shared__ PaddedTile<T> buf;
    if (!gate_open(go)) return;
    T x[SCAN_ITEMS];
    tile_prefix_sum<SCALED>(w, n, blockIdx.x, tile_exp, exp_max, prefix, carry, buf, x);
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
systematic(const W* __restrict__ w, long long n, long long tiles,
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
    tile_prefix_sum<SCALED>(w, n, tile, tile_exp, exp_max, prefix, carry, smem.values, x);
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
