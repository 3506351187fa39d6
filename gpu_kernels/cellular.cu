// cellular.cu -- cellular resampling on a ring and the cellular particle
// filter (Gelencsér-Horváth et al. 2013, Figs 5-6). The twin of
// src/pfresample/resampling/cellular.py, whose docstring is the contract:
// particle i draws from N_i = {i, i-1, ..., i-r} mod N with probability
// w_j / W_i; one uniform a particle (particle stream, counter 0); W_i and the
// running sums in float64 over the scaled weights, in the order d = 0 ... r;
// the ancestor is neighbour d* = #{d : s_d <= u W_i}; the fallbacks of a
// neighbourhood without weight as there.
//
// A block of CELLULAR_THREADS threads owns CELLULAR_THREADS consecutive
// particles and loads them with the r particles before the first (the
// halo; block 0 wraps around to the end of the ring) into shared memory, as
// the paper's Fig 5 does. In the resampler every thread scans its whole
// neighbourhood twice (W, then the running sums) without early exit, as the
// paper's kernel does; the filter's step searches its tile's prefix sums
// instead, or scans on request, with the contract's comparison or the
// paper's running quotients (cpf_step). The ancestors go to another
// buffer than the weights: the paper's in-place write-back races with the
// halos other blocks are still reading.
//
// cellular: the registry's method (K replicas, blockIdx.y the replica).
// cpf_*_step: one time step of the filter (Fig 6), one kernel: load the
// predicted particles with their halo, their likelihoods, the local
// resampling, the estimate (the mean of the resampled particles, summed over
// the grid by the last block), and the prediction of the next step into the
// other state buffer. cpf_*_init: the initial particles and their first
// prediction. The weights of a tile are exp(log w - the tile's largest log w)
// in float64, or on request in float32 with float32 sums, the paper's
// precision: a neighbourhood's probabilities depend only on the ratios of its
// weights, which any common factor keeps, and the tile's own maximum keeps
// them away from underflow.

#include "models.cuh"
#include "reduce.cuh"

namespace pfr {

// The choice of one particle: neighbour d* in [0, r], r + 1 when every running
// sum is <= u W (u W rounded up to W), -1 when W = 0. weight(d) is the
// scaled weight of neighbour d, of type Real (float64, or float32 in the
// paper's precision; u and every sum in the same). The sums add in the order
// d = 0 ... r; the weights are read BATCH at a time ahead of their additions,
// so that the loads overlap and only the additions' latency is serial.
// DIVIDE: the paper's rule (Fig 6, III.5): the running sum of the quotients
// w_d / W against u, one division a neighbour (which --use_fast_math makes
// approximate in float32); otherwise the running sums of w_d against u W.
constexpr unsigned int BATCH = 8u;

__device__ __forceinline__ double exp_real(double x) { return exp(x); }
__device__ __forceinline__ float exp_real(float x) { return expf(x); }

template <bool DIVIDE = false, typename Real, typename Weight>
__device__ __forceinline__ int cellular_choice(Weight weight, unsigned int radius, Real u) {
    const unsigned int count_all = radius + 1u, whole = count_all / BATCH * BATCH;
    Real total = Real(0);
    for (unsigned int d = 0; d < whole; d += BATCH) {
        Real v[BATCH];
#pragma unroll
        for (unsigned int j = 0; j < BATCH; ++j) v[j] = weight(d + j);
#pragma unroll
        for (unsigned int j = 0; j < BATCH; ++j) total += v[j];
    }
    for (unsigned int d = whole; d < count_all; ++d) total += weight(d);
    if (!(total > Real(0))) return -1;
    const Real t = DIVIDE ? u : u * total;  // the bound of the running sums
    Real s = Real(0);
    unsigned int count = 0;
    for (unsigned int d = 0; d < whole; d += BATCH) {
        Real v[BATCH];
#pragma unroll
        for (unsigned int j = 0; j < BATCH; ++j) v[j] = weight(d + j);
#pragma unroll
        for (unsigned int j = 0; j < BATCH; ++j) {
            s += DIVIDE ? v[j] / total : v[j];
            count += s <= t;
        }
    }
    for (unsigned int d = whole; d < count_all; ++d) {
        s += DIVIDE ? weight(d) / total : weight(d);
        count += s <= t;
    }
    if (count <= radius) return (int)count;
    int last = 0;  // the farthest neighbour with positive weight
    for (unsigned int d = 0; d <= radius; ++d)
        if (weight(d) > Real(0)) last = (int)d;
    return last;
}

// Ring index of position p of the tile that starts r before `base`.
__device__ __forceinline__ unsigned int tile_index(unsigned int base, unsigned int p,
                                                   unsigned int radius, unsigned int n) {
    return (unsigned int)(((unsigned long long)base + p + n - radius) % n);
}

// Ring index i - d, 0 <= d < 2n.
__device__ __forceinline__ unsigned int ring_back(unsigned int i, unsigned long long d,
                                                  unsigned int n) {
    return (unsigned int)(((unsigned long long)i + 2ull * n - d) % n);
}

}  // namespace pfr

// The registry's cellular resampling: lanes (replica blockIdx.y, particle
// blockIdx.x * blockDim.x + threadIdx.x; blockDim.x is geometry's
// CELLULAR_THREADS). TILED: the tile of blockDim.x + r weights is in shared
// memory (dynamic, float64); otherwise (r too large for it) the weights are
// read from global memory.
template <typename T, bool TILED>
__global__ void cellular(const T* __restrict__ w, unsigned int n, const unsigned int* keys,
                         int n_keys, unsigned int k0, unsigned int k1, unsigned int radius,
                         double scale, int* __restrict__ out) {
    using namespace pfr;
    extern __shared__ double tile[];
    const unsigned int base = blockIdx.x * blockDim.x;
    const unsigned int replica = blockIdx.y;
    if (TILED) {
        for (unsigned int p = threadIdx.x; p < blockDim.x + radius; p += blockDim.x)
            tile[p] = (double)w[tile_index(base, p, radius, n)] * scale;
        __syncthreads();
    }
    const unsigned int i = base + threadIdx.x;
    if (i >= n) return;
    PhiloxKey key{k0, k1};
    if (n_keys) key = PhiloxKey{keys[2 * replica], keys[2 * replica + 1]};
    const double u = (double)uniform_float(philox_block(key, DOMAIN_PARTICLE, i, 0ull).x);
    int d;
    if (TILED) {
        const double* mine = tile + threadIdx.x + radius;  // neighbour d at mine[-d]
        d = cellular_choice([&](unsigned int e) { return mine[-(int)e]; }, radius, u);
    } else {
        d = cellular_choice([&](unsigned int e) { return (double)w[ring_back(i, e, n)] * scale; },
                            radius, u);
    }
    unsigned int ancestor;
    if (d >= 0) {
        ancestor = ring_back(i, (unsigned int)d, n);
    } else {  // no weight in the neighbourhood: the nearest positive one beyond it
        ancestor = i;
        for (unsigned long long e = radius + 1ull; e < (unsigned long long)n + radius + 1ull; ++e) {
            const unsigned int j = ring_back(i, e, n);
            if ((double)w[j] * scale > 0.0) {
                ancestor = j;
                break;
            }
        }
    }
    out[(long long)replica * n + i] = (int)ancestor;
}

// ---------------------------------------------------------------- the filter

namespace pfr {

// The growth model (eqs. 2.34-2.35), one state row.
struct GrowthCpf {
    static constexpr int ROWS = 1;
    float sigma_v, inv_var_n, init_mean, init_sd;
    __device__ float log_likelihood(const float* s, float z) const {
        return growth_log_likelihood(s[0], z, inv_var_n);
    }
    __device__ void init(float* s, PhiloxKey key, unsigned int i) const {
        float v[4];
        normals4(key, i, 0ull, v);
        s[0] = init_mean + init_sd * v[0];
    }
    __device__ void predict(float* s, PhiloxKey key, unsigned int i, unsigned long long block,
                            float drift) const {
        float v[4];
        normals4(key, i, block, v);
        s[0] = growth_step(s[0], drift, sigma_v, v[0]);
    }
};

// Bearings-only tracking (Gordon, Salmond and Smith 1993): rows x, vx, y, vy.
struct BotCpf {
    static constexpr int ROWS = 4;
    float q_sd, inv_var;
    float m[4], sd[4];  // the prior
    __device__ float log_likelihood(const float* s, float z) const {
        return bot_log_likelihood(BotState{s[0], s[1], s[2], s[3]}, z, inv_var);
    }
    __device__ void init(float* s, PhiloxKey key, unsigned int i) const {
        float v[4];
        normals4(key, i, 0ull, v);
        for (int row = 0; row < 4; ++row) s[row] = m[row] + sd[row] * v[row];
    }
    __device__ void predict(float* s, PhiloxKey key, unsigned int i, unsigned long long block,
                            float) const {
        float v[4];
        normals4(key, i, block, v);
        const BotState next = bot_step(BotState{s[0], s[1], s[2], s[3]}, q_sd, v[0], v[1]);
        s[0] = next.x;
        s[1] = next.vx;
        s[2] = next.y;
        s[3] = next.vy;
    }
};

// A float64 sum over the block by warp shuffles (a fixed tree), in every
// thread of warp 0; `scratch` holds one value a warp.
__device__ double block_sum(double v, double* scratch) {
    const unsigned int warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32u ? scratch[lane] : 0.0;
    if (warp == 0)
        for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
    __syncthreads();  // scratch is free again
    return v;
}

// The largest of the block's values, in every thread; `scratch` holds one value a warp.
__device__ double block_max_all(double v, double* scratch) {
    __shared__ double result;
    const unsigned int warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
    for (int mask = 16; mask > 0; mask >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, mask));
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32u ? scratch[lane] : v;
        for (int mask = 16; mask > 0; mask >>= 1)
            v = fmax(v, __shfl_xor_sync(0xffffffffu, v, mask));
        if (lane == 0) result = v;
    }
    __syncthreads();
    return result;
}

// ROWS float64 sums over the grid in an order fixed by the grid's size: each
// block's sums into parts[row * gridDim.x + block], then the last block to
// finish adds them and thread 0 of it writes sum / n into out[row].
// `weighted`: also the weighted mean sum_i w_i x_i / sum_i w_i (the SIR
// filter's estimate) into out_weighted[row], and log sum_i w_i (the
// log-likelihood estimate's step) into out_weighted[ROWS]: wx holds a
// thread's w x (ROWS values) and w, with w = exp(log w - `shift`), the block's own shift; the
// block's ROWS + 1 sums and its shift go to parts after the plain sums
// (parts holds (2 ROWS + 2) gridDim.x values), and the last block brings
// every block's sums to the largest shift, exp(shift_b - max) each, before
// adding them (a block whose shift is -inf has no weight).
template <int ROWS>
__device__ void grid_means(double v[ROWS], double wx[ROWS + 1], double shift, int weighted,
                           double* parts, unsigned int* ticket, unsigned int n, double* out,
                           double* out_weighted) {
    __shared__ double scratch[32];
    const unsigned int grid = gridDim.x;
    for (int row = 0; row < ROWS; ++row) {
        const double s = block_sum(v[row], scratch);
        if (threadIdx.x == 0) parts[row * grid + blockIdx.x] = s;
    }
    double* shifts = parts + (2 * ROWS + 1) * grid;
    if (weighted) {
        for (int row = 0; row <= ROWS; ++row) {
            const double s = block_sum(wx[row], scratch);
            if (threadIdx.x == 0) parts[(ROWS + row) * grid + blockIdx.x] = s;
        }
        if (threadIdx.x == 0) shifts[blockIdx.x] = shift;
    }
    if (!last_block_done(ticket)) return;
    for (int row = 0; row < ROWS; ++row) {
        double s = 0.0;
        for (unsigned int p = threadIdx.x; p < grid; p += blockDim.x) s += parts[row * grid + p];
        s = block_sum(s, scratch);
        if (threadIdx.x == 0) out[row] = s / (double)n;
    }
    if (!weighted) return;
    const double NEG_INF = __longlong_as_double(0xfff0000000000000ll);
    double top = NEG_INF;
    for (unsigned int p = threadIdx.x; p < grid; p += blockDim.x) top = fmax(top, shifts[p]);
    top = block_max_all(top, scratch);
    double total[ROWS + 1];
    for (int row = 0; row <= ROWS; ++row) {
        double s = 0.0;
        for (unsigned int p = threadIdx.x; p < grid; p += blockDim.x)
            if (shifts[p] > NEG_INF) s += exp(shifts[p] - top) * parts[(ROWS + row) * grid + p];
        total[row] = block_sum(s, scratch);
    }
    if (threadIdx.x == 0) {
        for (int row = 0; row < ROWS; ++row) out_weighted[row] = total[row] / total[ROWS];
        out_weighted[ROWS] = top + log(total[ROWS]);  // log SUM_i exp(log w_i)
    }
}

// A run's inputs (filters/cellular_gpu.py): the noise key, then two words of
// resampling key a step, then the measurements (float32).
struct CpfInputs {
    const unsigned int* words;
    unsigned int steps;
    __device__ PhiloxKey noise() const { return PhiloxKey{words[0], words[1]}; }
    __device__ PhiloxKey step_key(unsigned int k) const {
        return PhiloxKey{words[2 + 2 * k], words[3 + 2 * k]};
    }
    __device__ float z(unsigned int k) const { return __uint_as_float(words[2 + 2 * steps + k]); }
};

// x_0 from the prior, then its prediction x_1 (noise block 1, drift of k = 0).
template <typename Model>
__device__ void cpf_init(const Model& model, float* __restrict__ x, unsigned int n,
                         CpfInputs in, float drift) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s[Model::ROWS];
    model.init(s, in.noise(), i);
    model.predict(s, in.noise(), i, 1ull, drift);
    for (int row = 0; row < Model::ROWS; ++row) x[row * n + i] = s[row];
}

// An exclusive prefix sum over the block (warp shuffles, then the warp
// totals), in an order fixed by the block's size; `scratch` holds one value a warp.
__device__ double block_exclusive_sum(double v, double* scratch) {
    const unsigned int warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
    double x = v;
    for (unsigned int o = 1; o < 32u; o <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    double before = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0) before = 0.0;
    if (lane == 31u) scratch[warp] = x;
    __syncthreads();
    if (warp == 0) {
        double t = lane < blockDim.x / 32u ? scratch[lane] : 0.0;
        for (unsigned int o = 1; o < 32u; o <<= 1) {
            const double y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += y;
        }
        scratch[lane] = t;
    }
    __syncthreads();
    const double offset = warp > 0 ? scratch[warp - 1] : 0.0;
    __syncthreads();  // scratch is free again
    return offset + before;
}

// The filter's choice for the particle at tile position p, from the tile's
// prefix sums P (P[q] = w_0 + ... + w_{q-1}, w = exp(lw - shift)): s_d =
// P[p+1] - P[p-d], so d* = #{d : s_d <= u W} = #{j in [p-r, p] : P[j] >=
// P[p+1] - u W}, a binary search -- O(log r) instead of the scan's O(r).
// The difference of two prefix sums loses the bits of W below
// P[p+1] 2^-53: where W < P[p+1] 2^-30 (less than float precision would be
// left), or the choice lands on a zero weight or at the rounding edge, it
// returns -2 and the caller scans.
__device__ __forceinline__ int prefix_choice(const double* P, unsigned int p, unsigned int radius,
                                             double u) {
    const double top = P[p + 1];
    const double total = top - P[p - radius];
    if (!(total > 0.0) || total < top * 0x1p-30) return -2;
    const double thr = top - u * total;
    unsigned int lo = p - radius, hi = p + 1;  // first j in [lo, hi) with P[j] >= thr, else hi
    while (lo < hi) {
        const unsigned int mid = (lo + hi) >> 1;
        if (P[mid] >= thr) hi = mid;
        else lo = mid + 1;
    }
    const unsigned int count = p + 1 - lo;
    if (count > radius || !(P[p - count + 1] > P[p - count])) return -2;
    return (int)count;
}

// The ways a particle of the filter finds its neighbour (cellular_gpu.py's
// NEIGHBOURHOOD_MODES): a binary search in the tile's prefix sums (float64
// only), the scan of the resampler's contract, the paper's running quotients.
constexpr int CPF_SEARCH = 0, CPF_SCAN = 1, CPF_DIVIDE = 2;

// Step k of Fig 6 (measurement z_k of x_{k+1}): x_in holds the predicted
// x_{k+1}; x_out gets the prediction x_{k+2} of the resampled particles
// (noise block k + 2, `drift` that of step k + 1) when `predict`, and
// estimate[0 .. ROWS) the mean of the resampled particles; with `weighted`
// also weighted_estimate[0 .. ROWS], the weighted mean of the predicted
// particles before resampling (grid_means). Dynamic shared memory: the tile's
// weights (Real: float64, or the paper's float32), with CPF_SEARCH their
// prefix sums (span + 1), its float32 log-weights, then its ROWS rows of states.
//
// The weights are exp(log w - the tile's largest log w), in Real. CPF_SEARCH:
// each particle finds its neighbour in the tile's prefix sums (prefix_choice);
// otherwise, and where the search declines, it scans its neighbourhood as the
// paper's kernel does (cellular_choice: the resampler's contract, or with
// CPF_DIVIDE the paper's quotients), in Real. A neighbourhood whose weights
// all underflow (a bearings-only one far from the tile's best particle: 0.2
// rad off is 800 nats down) is scanned again with its own largest
// log-weight, so that it draws by its own ratios, as the paper's local
// normalisation says; only a neighbourhood of -inf log-weights (zero
// likelihood) takes the nearest finite one beyond it, as the resampler does.
template <typename Model, int MODE, typename Real>
__device__ void cpf_step(const Model& model, const float* __restrict__ x_in,
                         float* __restrict__ x_out, unsigned int n, unsigned int radius,
                         CpfInputs in, unsigned int k, float drift, int predict,
                         double* __restrict__ parts, unsigned int* __restrict__ ticket,
                         double* __restrict__ estimate, int weighted,
                         double* __restrict__ weighted_estimate) {
    constexpr int ROWS = Model::ROWS;
    constexpr bool SEARCH = MODE == CPF_SEARCH, DIVIDE = MODE == CPF_DIVIDE;
    const float NEG_INF = __uint_as_float(0xff800000u);
    const double NAN_D = __longlong_as_double(0x7ff8000000000000ll);
    extern __shared__ double dyn[];
    __shared__ double scratch[32];
    const unsigned int span = blockDim.x + radius;
    Real* w = (Real*)dyn;                    // span weights
    Real* P = SEARCH ? w + span : nullptr;   // span + 1 prefix sums
    float* lw = (float*)(w + (SEARCH ? 2 * span + 1 : span));
    float* xs = lw + span;  // row r at xs[r * span + p]
    const unsigned int base = blockIdx.x * blockDim.x;
    const float z = in.z(k);
    float top = NEG_INF;
    int bad = 0;  // a NaN or +inf log-likelihood in the tile
    for (unsigned int p = threadIdx.x; p < span; p += blockDim.x) {
        const unsigned int j = tile_index(base, p, radius, n);
        float s[ROWS];
        for (int row = 0; row < ROWS; ++row) s[row] = xs[row * span + p] = x_in[row * n + j];
        const float l = model.log_likelihood(s, z);
        lw[p] = l;
        top = fmaxf(top, l);
        bad |= isnan(l) || l == -NEG_INF;
    }
    bad = __syncthreads_or(bad);
    __shared__ float tile_top;
    top = block_max(top);
    if (threadIdx.x == 0) tile_top = top;
    __syncthreads();
    const Real shift = (Real)tile_top;
    if constexpr (SEARCH) {  // w and P over the tile: a thread a run of consecutive positions
        const unsigned int run = (span + blockDim.x - 1) / blockDim.x;
        const unsigned int first = min(threadIdx.x * run, span), last = min(first + run, span);
        double local = 0.0;
        for (unsigned int q = first; q < last; ++q) local += w[q] = exp((double)lw[q] - shift);
        double sum = block_exclusive_sum(local, scratch);
        for (unsigned int q = first; q < last; ++q) P[q + 1] = sum += w[q];
        if (threadIdx.x == 0) P[0] = 0.0;
    } else {
        for (unsigned int q = threadIdx.x; q < span; q += blockDim.x)
            w[q] = exp_real((Real)lw[q] - shift);
    }
    __syncthreads();

    const unsigned int i = base + threadIdx.x;
    double sums[ROWS], wx[ROWS + 1];
    for (int row = 0; row < ROWS; ++row) sums[row] = 0.0;
    for (int row = 0; row <= ROWS; ++row) wx[row] = 0.0;
    if (i < n) {
        const Real u =
            (Real)uniform_float(philox_block(in.step_key(k), DOMAIN_PARTICLE, i, 0ull).x);
        const unsigned int p = threadIdx.x + radius;  // this particle's tile position
        if (weighted && tile_top > NEG_INF) {  // the predicted particle's weight, before resampling
            const double own = (double)w[p];
            for (int row = 0; row < ROWS; ++row) wx[row] = own * (double)xs[row * span + p];
            wx[ROWS] = own;
        }
        int d = -2;
        if constexpr (SEARCH) d = prefix_choice(P, p, radius, u);
        if (d == -2)
            d = cellular_choice<DIVIDE>([&](unsigned int e) { return w[p - e]; }, radius, u);
        if (d < 0) {  // every weight underflowed: the neighbourhood's own maximum
            float local = NEG_INF;
            for (unsigned int e = 0; e <= radius; ++e) local = fmaxf(local, lw[p - e]);
            const Real own = (Real)local;
            if (local > NEG_INF)
                d = cellular_choice<DIVIDE>(
                    [&](unsigned int e) { return exp_real((Real)lw[p - e] - own); }, radius, u);
        }
        float s[ROWS];
        if (d >= 0) {
            for (int row = 0; row < ROWS; ++row) s[row] = xs[row * span + p - d];
        } else {  // zero likelihood everywhere near: the nearest finite one beyond
            bool found = false;
            for (unsigned long long e = radius + 1ull; e < n && !found; ++e) {
                const unsigned int j = ring_back(i, e, n);
                for (int row = 0; row < ROWS; ++row) s[row] = x_in[row * n + j];
                found = model.log_likelihood(s, z) > NEG_INF;
            }
            if (!found)  // no weight anywhere: the estimate becomes NaN, which the host reports
                for (int row = 0; row < ROWS; ++row) s[row] = __uint_as_float(0x7fc00000u);
        }
        for (int row = 0; row < ROWS; ++row) sums[row] = bad ? NAN_D : (double)s[row];
        if (bad)
            for (int row = 0; row <= ROWS; ++row) wx[row] = NAN_D;
        if (predict) {
            model.predict(s, in.noise(), i, (unsigned long long)k + 2ull, drift);
            for (int row = 0; row < ROWS; ++row) x_out[row * n + i] = s[row];
        }
    }
    grid_means<ROWS>(sums, wx, (double)tile_top, weighted, parts, ticket, n, estimate,
                     weighted_estimate);
}

}  // namespace pfr

extern "C" __global__ void cpf_growth_init(float* x, unsigned int n, const unsigned int* inputs,
                                           unsigned int steps, float sigma_v, float init_mean,
                                           float init_sd, float drift) {
    const pfr::GrowthCpf model{sigma_v, 0.0f, init_mean, init_sd};
    pfr::cpf_init(model, x, n, pfr::CpfInputs{inputs, steps}, drift);
}

template <int MODE, typename Real>
__global__ void cpf_growth_step(const float* x_in, float* x_out, unsigned int n,
                                unsigned int radius, const unsigned int* inputs,
                                unsigned int steps, unsigned int k, float drift, int predict,
                                float sigma_v, float inv_var_n, double* parts,
                                unsigned int* ticket, double* estimate, int weighted,
                                double* weighted_estimate) {
    const pfr::GrowthCpf model{sigma_v, inv_var_n, 0.0f, 0.0f};
    pfr::cpf_step<pfr::GrowthCpf, MODE, Real>(model, x_in, x_out, n, radius,
                                              pfr::CpfInputs{inputs, steps}, k, drift, predict,
                                              parts, ticket, estimate, weighted,
                                              weighted_estimate);
}

extern "C" __global__ void cpf_bot_init(float* x, unsigned int n, const unsigned int* inputs,
                                        unsigned int steps, float q_sd, float m0, float m1,
                                        float m2, float m3, float s0, float s1, float s2,
                                        float s3) {
    const pfr::BotCpf model{q_sd, 0.0f, {m0, m1, m2, m3}, {s0, s1, s2, s3}};
    pfr::cpf_init(model, x, n, pfr::CpfInputs{inputs, steps}, 0.0f);
}

template <int MODE, typename Real>
__global__ void cpf_bot_step(const float* x_in, float* x_out, unsigned int n, unsigned int radius,
                             const unsigned int* inputs, unsigned int steps, unsigned int k,
                             float drift, int predict, float q_sd, float inv_var, double* parts,
                             unsigned int* ticket, double* estimate, int weighted,
                             double* weighted_estimate) {
    const pfr::BotCpf model{q_sd, inv_var, {0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
    pfr::cpf_step<pfr::BotCpf, MODE, Real>(model, x_in, x_out, n, radius,
                                           pfr::CpfInputs{inputs, steps}, k, drift, predict,
                                           parts, ticket, estimate, weighted, weighted_estimate);
}
