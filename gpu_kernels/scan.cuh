// scan.cuh -- the tiled prefix sum of the weights and Algorithm 3.2's
// ancestor writer, shared by cumulative.cu (the cumulative family) and
// fused.cu (the fused SIR filter run).
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

#pragma once

#include "reduce.cuh"
#include "stats.cuh"

namespace pfr {

constexpr int SCAN_THREADS = 256;        // gpu.py's SCAN_THREADS
constexpr int SCAN_ITEMS = 16;           // gpu.py's SCAN_ITEMS
constexpr int SCAN_TILE = SCAN_THREADS * SCAN_ITEMS;
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

// w = w~ / s as a filter's normalising pass writes it, for a scan that reads
// w~ and the float64 sum s (`divisor`) instead of w: in float32 a product
// with the rounded inverse (filter.cu's normalise_estimate, fused.cu), in
// float64 a division (the captured loop's w~ / s). A null divisor: the
// weights as they are.
template <typename W>
struct Normaliser;
template <>
struct Normaliser<float> {
    float inverse;
    __device__ explicit Normaliser(const double* divisor)
        : inverse(divisor == nullptr ? 1.0f : (float)(1.0 / *divisor)) {}
    __device__ float operator()(float v) const { return v * inverse; }  // exact for 1
};
template <>
struct Normaliser<double> {
    double s;
    bool divides;
    __device__ explicit Normaliser(const double* divisor)
        : s(divisor == nullptr ? 1.0 : *divisor), divides(divisor != nullptr) {}
    __device__ double operator()(double v) const { return divides ? v / s : v; }
};

// Thread t's raw items of tile `tile`, as loaded: item j is tile entry
// j * SCAN_THREADS + t (a warp reads 32 consecutive weights), zeros past the
// end, which leave every sum unchanged; divided by `divisor` when it is not
// null (Normaliser).
template <typename W>
__device__ __forceinline__ void load_raw(const W* w, const double* divisor, long long n,
                                         long long tile, W (&v)[SCAN_ITEMS]) {
    const long long base = tile * SCAN_TILE;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {  // all loads in flight before any use
        const long long i = base + j * SCAN_THREADS + threadIdx.x;
        v[j] = i < n ? __ldcg(w + i) : W(0);  // L2 only: read once, and maybe
    }                                            // written earlier in this launch
    const Normaliser<W> normalise(divisor);
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) v[j] = normalise(v[j]);
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
__device__ __forceinline__ void load_tile(const W* w, const double* divisor, long long n,
                                          long long tile, int e, PaddedTile<T>& buf,
                                          T (&x)[SCAN_ITEMS], unsigned int& positive) {
    W v[SCAN_ITEMS];
    load_raw(w, divisor, n, tile, v);
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
template <bool SCALED, typename T, int ITEMS>
__device__ __forceinline__ void place_tile(T (&x)[ITEMS], T prefix, T carry, T f) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
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

// Algorithm 3.2 for one tile, or for a slice of one (ITEMS < SCAN_ITEMS a
// thread: fused.cu). Thread t holds the cumulative offspring o[j] of
// particles first_particle + t * ITEMS + j (non-decreasing, also past N);
// those particles own the output slots [o_before, o_end), o_end the last
// thread's last o, and slot k's ancestor is the first particle with o > k.
// The block fills the slots in chunks of SCAN_THREADS * SLOTS: every
// particle with offspring marks the first of its slots in the chunk (no two
// mark the same slot), a running maximum of the marks carries each over the
// particle's other slots, and the block writes the chunk with coalesced
// stores. So a particle with many offspring is spread over all threads,
// never one thread's serial loop, and a slot costs a few instructions (a
// binary search per slot costs 12 dependent loads and was the kernel's
// bottleneck: docs/performance.md). A slice's slots number about its
// particles, as often a few more as fewer: a chunk of twice the slice
// (SLOTS = 2 ITEMS, fused.cu's slices) fills them in one round where a chunk
// of the slice's size would take a second round half the time. The
// ancestors are a function of the o's alone, however they are sliced or
// chunked.
template <int ITEMS, int SLOTS = ITEMS>
__device__ void write_ancestors(const int (&o)[ITEMS], int o_before, long long first_particle,
                                PaddedTile<int>& marks, int* __restrict__ row) {
    static_assert(SLOTS <= SCAN_ITEMS, "a chunk's marks must fit the tile's buffer");
    constexpr int CHUNK = SCAN_THREADS * SLOTS;
    __shared__ int thread_end[SCAN_THREADS];  // each thread's last o
    thread_end[threadIdx.x] = o[ITEMS - 1];
    __syncthreads();
    const int o_end = thread_end[SCAN_THREADS - 1];
    const int first_start = threadIdx.x ? thread_end[threadIdx.x - 1] : o_before;
    const int mine = threadIdx.x * ITEMS;  // this thread's first particle of the slice
    const int my_slots = threadIdx.x * SLOTS;  // and its first entry of a chunk
    for (int s0 = max(o_before, 0); s0 < o_end; s0 += CHUNK) {
        const int s1 = min(o_end, s0 + CHUNK);
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) marks.at[padded<int>(my_slots + j)] = 0;
        __syncthreads();
        int start = first_start;  // the particle's first slot
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (start < o[j] && start < s1 && o[j] > s0) {
                marks.at[padded<int>(max(start, s0) - s0)] = mine + j + 1;
            }
            start = o[j];
        }
        __syncthreads();
        int a[SLOTS];  // local particle + 1 of slots s0 + my_slots + j
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) a[j] = marks.at[padded<int>(my_slots + j)];
#pragma unroll
        for (int j = 1; j < SLOTS; ++j) a[j] = max(a[j - 1], a[j]);
        int ignored;  // (the scan synchronises: every thread has read its marks)
        const int before = block_exclusive_scan(a[SLOTS - 1], Max(), ignored);
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) marks.at[padded<int>(my_slots + j)] = max(a[j], before);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) {
            const int k = j * SCAN_THREADS + threadIdx.x;
            if (s0 + k < s1) row[s0 + k] = (int)(first_particle + marks.at[padded<int>(k)] - 1);
        }
        __syncthreads();  // the next chunk clears the marks
    }
}

// A thread's run of SCAN_ITEMS tile totals s (bit j of `reaches` set where
// tile j has a positive value), the sum before it p0: the largest tile end
// of the run, at least `reach` (scan_tile_sums and fused.cu's warp version).
template <typename T>
__device__ __forceinline__ T run_top(const T (&s)[SCAN_ITEMS], unsigned int reaches, T p0,
                                     T reach) {
    T p = p0, top = reach;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        p = p + s[j];
        if ((reaches >> j) & 1u) top = p > top ? p : top;
    }
    return top;
}

// The run's prefix[b] (the sum before tile b) and carry[b] (the largest
// tile end before it, from r, the largest before the run) for its tiles
// mine + j below `tiles`.
template <typename T>
__device__ __forceinline__ void place_run(const T (&s)[SCAN_ITEMS], unsigned int reaches, T p0, T r,
                                          long long mine, long long tiles, T* prefix, T* carry) {
    T p = p0;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        if (mine + j < tiles) {
            prefix[mine + j] = p;
            carry[mine + j] = r;
        }
        p = p + s[j];
        if ((reaches >> j) & 1u) r = p > r ? p : r;
    }
}

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
        const T top = run_top(s, reaches, p0, reach);  // the largest tile end up to this run
        T chunk_top;
        T r = block_exclusive_scan(top, Max(), chunk_top);
        r = r > reach ? r : reach;
        place_run(s, reaches, p0, r, mine, tiles, prefix, carry);
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
