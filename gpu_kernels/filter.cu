// filter.cu -- stages 1 (the weights), 2, 3 and the end of 4 of the SIR
// filter (thesis Algorithm 2.4) on the GPU; stage 1's prediction is
// models.cu and stage 4's resampling the registry's kernels. Driver:
// src/pfresample/filters/sir_gpu.py, which launches every kernel here with
// REDUCE_THREADS threads per block.
//
// Sums are float64 and deterministic: a partial per block of a grid whose
// size depends only on N (geometry.sum_parts), combined in index order by
// the last block to finish (last_block_done), so one launch does both steps
// and a replayed CUDA graph gives the same numbers every time.

#include "reduce.cuh"

// Stage 1, the weights: w~ = exp(log w - max log w), the maximum from
// models.cu's top (filters/sir.py, weights_from_log). A thread per four
// weights, read and written as one float4 (16 bytes a thread keep more of
// the memory busy than 4); the last, partial quad one by one.
extern "C" __global__ void exp_shifted(const float* __restrict__ log_w,
                                       const unsigned int* __restrict__ top, unsigned int n,
                                       float* __restrict__ w_tilde) {
    using namespace pfr;
    const unsigned int q = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int i = 4 * q;
    if (i >= n) return;
    const float m = from_ordered(top[0]);
    if (i + 3 < n) {
        float4 v = reinterpret_cast<const float4*>(log_w)[q];
        v.x = expf(v.x - m);
        v.y = expf(v.y - m);
        v.z = expf(v.z - m);
        v.w = expf(v.w - m);
        reinterpret_cast<float4*>(w_tilde)[q] = v;
    } else {
        for (unsigned int j = i; j < n; ++j) w_tilde[j] = expf(log_w[j] - m);
    }
}

// Stage 2: total[0] = SUM(w~), read from w_tilde, or, when log_w is not
// null, with stage 1's w~ = exp(log w - max) computed here and written to
// w_tilde (exp_total): the same w~ as exp_shifted's and the same sum, in
// the same order, one kernel fewer a step where no stage mark falls
// between the two.
__device__ void total_of_weights(const float* __restrict__ log_w,
                                 const unsigned int* __restrict__ top, float* __restrict__ w_tilde,
                                 long long n, double* __restrict__ parts,
                                 unsigned int* __restrict__ ticket, double* __restrict__ total) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    const float m = log_w == nullptr ? 0.0f : from_ordered(top[0]);
    double sum = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
#pragma unroll 8
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        float wt;
        if (log_w == nullptr) {
            wt = w_tilde[i];
        } else {
            wt = expf(log_w[i] - m);
            w_tilde[i] = wt;
        }
        sum += (double)wt;
    }
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) parts[blockIdx.x] = sum;
    if (!last_block_done(ticket)) return;
    __syncthreads();
    sum = 0.0;
    for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS) sum += parts[p];
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) total[0] = sum;
}

extern "C" __global__ void weight_total(float* __restrict__ w_tilde, long long n,
                                        double* __restrict__ parts,
                                        unsigned int* __restrict__ ticket,
                                        double* __restrict__ total) {
    total_of_weights(nullptr, nullptr, w_tilde, n, parts, ticket, total);
}

extern "C" __global__ void exp_total(const float* __restrict__ log_w,
                                     const unsigned int* __restrict__ top,
                                     float* __restrict__ w_tilde, long long n,
                                     double* __restrict__ parts, unsigned int* __restrict__ ticket,
                                     double* __restrict__ total) {
    total_of_weights(log_w, top, w_tilde, n, parts, ticket, total);
}

// Stage 3: w = w~ / s (when w is not null: the cumulative family reads
// normalised weights, §6.9) and the estimate x^_k = SUM(w~ x) / s of each of
// the ROWS state components (x is ROWS x n, row-major).
template <int ROWS>
__global__ void normalise_estimate(const float* __restrict__ w_tilde,
                                   const float* __restrict__ x, long long n,
                                   const double* __restrict__ total, float* __restrict__ w,
                                   double* __restrict__ parts, unsigned int* __restrict__ ticket,
                                   double* __restrict__ estimate) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    const double s = total[0];
    const float inv_s = (float)(1.0 / s);
    double acc[ROWS];
    for (int r = 0; r < ROWS; ++r) acc[r] = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
#pragma unroll 4
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        const float wt = w_tilde[i];
        if (w != nullptr) w[i] = wt * inv_s;  // a product: cheaper than a division a weight
        for (int r = 0; r < ROWS; ++r) acc[r] += (double)wt * (double)x[r * n + i];
    }
    for (int r = 0; r < ROWS; ++r) {
        const double v = block_reduce(acc[r], shared, Add());
        if (threadIdx.x == 0) parts[r * gridDim.x + blockIdx.x] = v;
        __syncthreads();
    }
    if (!last_block_done(ticket)) return;
    for (int r = 0; r < ROWS; ++r) {
        double sum = 0.0;
        for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS)
            sum += parts[r * gridDim.x + p];
        sum = block_reduce(sum, shared, Add());
        if (threadIdx.x == 0) estimate[r] = sum / s;
        __syncthreads();
    }
}

// Stages 1-3 in one pass where no stage mark falls between them (the
// untimed graph): exp_total's w~ and float64 sum s, and normalise_estimate's
// estimate SUM(w~ x) / s, each over the same blocks with a thread's weights
// in the same order, so s and the estimate are those kernels' bits (the K
// block sums at once: block_reduce_many). w = w~ / s is not written: the
// resampler divides as it loads (cumulative.cu's `divisor`), or the caller
// runs normalise_estimate. parts: (1 + ROWS) * gridDim.x doubles, s's
// partials first.
constexpr int EXP_BATCH = 4;  // weights a thread loads at once (8 a thread at 2^22)

template <int ROWS>
__global__ void exp_total_estimate(const float* __restrict__ log_w,
                                   const unsigned int* __restrict__ top,
                                   float* __restrict__ w_tilde, const float* __restrict__ x,
                                   long long n, double* __restrict__ parts,
                                   unsigned int* __restrict__ ticket, double* __restrict__ total,
                                   double* __restrict__ estimate) {
    using namespace pfr;
    __shared__ double shared[(1 + ROWS) * REDUCE_THREADS];
    const float m = from_ordered(top[0]);
    double acc[1 + ROWS];
#pragma unroll
    for (int r = 0; r <= ROWS; ++r) acc[r] = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    // A thread's weights EXP_BATCH at a time: their loads in flight
    // together, then the sums in index order (the same bits as one by one).
    for (long long i0 = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i0 < n;
         i0 += EXP_BATCH * stride) {
        float lw[EXP_BATCH], xs[ROWS][EXP_BATCH];
#pragma unroll
        for (int j = 0; j < EXP_BATCH; ++j) {
            const long long i = i0 + j * stride;
            lw[j] = i < n ? log_w[i] : 0.0f;
#pragma unroll
            for (int r = 0; r < ROWS; ++r) xs[r][j] = i < n ? x[r * n + i] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < EXP_BATCH; ++j) {
            const long long i = i0 + j * stride;
            if (i >= n) break;
            const float wt = expf(lw[j] - m);
            w_tilde[i] = wt;
            acc[0] += (double)wt;
#pragma unroll
            for (int r = 0; r < ROWS; ++r) acc[1 + r] += (double)wt * (double)xs[r][j];
        }
    }
    block_reduce_many(acc, shared, Add());
    if (threadIdx.x == 0) {
#pragma unroll
        for (int r = 0; r <= ROWS; ++r) parts[r * gridDim.x + blockIdx.x] = acc[r];
    }
    if (!last_block_done(ticket)) return;
#pragma unroll
    for (int r = 0; r <= ROWS; ++r) {
        acc[r] = 0.0;
        for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS)
            acc[r] += parts[r * gridDim.x + p];
    }
    block_reduce_many(acc, shared, Add());
    if (threadIdx.x == 0) {
        total[0] = acc[0];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) estimate[r] = acc[1 + r] / acc[0];
    }
}

// The end of stage 4: x_out = x_in[:, ancestors] (ROWS x n, row-major);
// with a gate `go` (the adaptive filter's, null otherwise) that is 0, x_out
// = x_in: no stage ran and no ancestors were written. A
// thread per four particles: their ancestors read as one int4 and each row's
// four states written as one float4 when n is a multiple of 4 (so that every
// row starts 16-byte aligned), one by one otherwise.
extern "C" __global__ void gather_rows(const float* __restrict__ x_in,
                                       const int* __restrict__ ancestors, unsigned int n, int rows,
                                       float* __restrict__ x_out, const int* __restrict__ go) {
    const unsigned int q = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int i = 4 * q;
    if (i >= n) return;
    if (go != nullptr && go[0] == 0) {  // the adaptive filter did not resample: a plain copy
        for (int r = 0; r < rows; ++r) {
            const long long row = (long long)r * n;
            if (n % 4 == 0) {
                reinterpret_cast<float4*>(x_out + row)[q] =
                    reinterpret_cast<const float4*>(x_in + row)[q];
            } else {
                for (unsigned int j = i; j < n && j < i + 4; ++j) x_out[row + j] = x_in[row + j];
            }
        }
        return;
    }
    if (n % 4 == 0) {
        const int4 a = reinterpret_cast<const int4*>(ancestors)[q];
        for (int r = 0; r < rows; ++r) {
            const float* row = x_in + (long long)r * n;
            const float4 v = make_float4(row[a.x], row[a.y], row[a.z], row[a.w]);
            reinterpret_cast<float4*>(x_out + (long long)r * n)[q] = v;
        }
    } else {
        for (unsigned int j = i; j < n && j < i + 4; ++j) {
            const long long a = ancestors[j];
            for (int r = 0; r < rows; ++r) x_out[(long long)r * n + j] = x_in[(long long)r * n + a];
        }
    }
}

// Güldaş's filters (filters/guldas_gpu.py) report the measure after
// resampling (§4.2.1): estimate[0] = SUM(w x) / SUM(w) over the resampled
// particles, with w the adaptive filter's output weights, or the plain mean
// SUM(x) / n where w is null (the bootstrap filter's even weights). Float64
// sums, a partial pair per block (parts holds 2 gridDim.x values),
// combined in index order by the last block.
extern "C" __global__ void weighted_mean(const float* __restrict__ w, const float* __restrict__ x,
                                         long long n, double* __restrict__ parts,
                                         unsigned int* __restrict__ ticket,
                                         double* __restrict__ estimate) {
    using namespace pfr;
    double num = 0.0, den = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        const double wi = w ? (double)w[i] : 1.0;
        num += wi * (double)x[i];
        den += wi;
    }
    if (grid_sum_pair(num, den, parts, ticket) && threadIdx.x == 0) estimate[0] = num / den;
}

// The adaptive filter's step without resampling (go[0] == 0: the ESS was
// high enough): the weights carried on are w~, as output weights and as
// log-weights (log w~ = log w - max log w: the log-weights stay near 0).
extern "C" __global__ void carry_weights(const int* __restrict__ go,
                                         const float* __restrict__ w_tilde, unsigned int n,
                                         float* __restrict__ w_out, float* __restrict__ log_w) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || go[0] != 0) return;
    const float w = w_tilde[i];
    w_out[i] = w;
    log_w[i] = logf(w);
}

// SMC-EM's butterfly step (filters/smcem.py): after one butterfly stage of
// radix r, the particles are permuted by the transpose of the (n / r) x r
// particle matrix: new slot p takes slot src = (p mod R) r + p div R (R = n
// / r), i.e. x_out = x_in[:, ancestors[src]] for the ROWS rows, and the
// weight of src's block, the stage sum c[p mod R] (`sums`, read as
// butterfly.cu's compact_value: c[q] itself for prev_r = 0, else the last
// entry of segment q of prev_r), as log_w[p].
extern "C" __global__ void gather_transposed(const float* __restrict__ x_in,
                                             const int* __restrict__ ancestors, unsigned int n,
                                             int rows, unsigned int r,
                                             const float* __restrict__ sums, int prev_r,
                                             float* __restrict__ x_out,
                                             float* __restrict__ log_w) {
    const unsigned int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    const unsigned int blocks = n / r, q = p % blocks;
    const long long a = ancestors[q * r + p / blocks];
    for (int row = 0; row < rows; ++row)
        x_out[(long long)row * n + p] = x_in[(long long)row * n + a];
    const float c = prev_r == 0 ? sums[q] : sums[(long long)q * prev_r + prev_r - 1];
    log_w[p] = logf(c);
}

// The D3 filter (Das et al. 2014; filters/d3_gpu.py) runs a chunk of steps as
// one replayed graph: its kernels read the step k from step[0], which
// step_advance moves on after each step.

// The prior of eqs. 1-2 at step k: mu = F_k x^_{k-1} + b_k (the previous
// estimate through the noise-free eqs. 11-12; table as uuv_predict reads it)
// and the variance of each of the two rows about mu, SUM (x - mu)^2 / (n - 1);
// prior = (mu_0, mu_1, 1 / var_0, 1 / var_1) (0 for a row without spread).
extern "C" __global__ void uuv_prior(const float* __restrict__ x, long long n,
                                     const double* __restrict__ previous,
                                     const unsigned int* __restrict__ step,
                                     const float* __restrict__ table, double* __restrict__ parts,
                                     unsigned int* __restrict__ ticket,
                                     double* __restrict__ prior) {
    using namespace pfr;
    const unsigned int k = step[0];
    const float4 t = reinterpret_cast<const float4*>(table)[k];
    const double mu0 = previous[0] + (double)t.x * previous[1] + (double)t.z;
    const double mu1 = previous[1] + (double)t.y * previous[0] + (double)t.w;
    double a = 0.0, b = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        const double d0 = (double)x[i] - mu0, d1 = (double)x[n + i] - mu1;
        a += d0 * d0;
        b += d1 * d1;
    }
    if (grid_sum_pair(a, b, parts, ticket) && threadIdx.x == 0) {
        const double m = n > 1 ? (double)(n - 1) : 1.0;
        prior[0] = mu0;
        prior[1] = mu1;
        prior[2] = a > 0.0 ? m / a : 0.0;
        prior[3] = b > 0.0 ? m / b : 0.0;
    }
}

// The paper's step (Das et al. 2014 §4.1: "N threads representing N
// particles", every kernel at the threads per block it sweeps): the same
// stages as exp_total, normalise_estimate and uuv_prior, one particle a
// thread at any block size from 32 to 1024 (reduce.cuh's *_any reductions,
// whose order, and so the float64 sums' last bits, depends on the block
// size). filters/d3_gpu.py launches them when run_d3's threads_scope is
// "step".
extern "C" __global__ void exp_total_any(const float* __restrict__ log_w,
                                         const unsigned int* __restrict__ top,
                                         float* __restrict__ w_tilde, long long n,
                                         double* __restrict__ parts,
                                         unsigned int* __restrict__ ticket,
                                         double* __restrict__ total) {
    using namespace pfr;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double sum[1] = {0.0};
    if (i < n) {
        const float wt = expf(log_w[i] - from_ordered(top[0]));
        w_tilde[i] = wt;
        sum[0] = (double)wt;
    }
    if (grid_sums_any(sum, parts, ticket) && threadIdx.x == 0) total[0] = sum[0];
}

template <int ROWS>
__global__ void normalise_estimate_any(const float* __restrict__ w_tilde,
                                       const float* __restrict__ x, long long n,
                                       const double* __restrict__ total,
                                       double* __restrict__ parts,
                                       unsigned int* __restrict__ ticket,
                                       double* __restrict__ estimate) {
    using namespace pfr;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double acc[ROWS];
    for (int r = 0; r < ROWS; ++r) acc[r] = i < n ? (double)w_tilde[i] * (double)x[r * n + i] : 0.0;
    if (grid_sums_any(acc, parts, ticket) && threadIdx.x == 0) {
        const double s = total[0];
        for (int r = 0; r < ROWS; ++r) estimate[r] = acc[r] / s;
    }
}

extern "C" __global__ void uuv_prior_any(const float* __restrict__ x, long long n,
                                         const double* __restrict__ previous,
                                         const unsigned int* __restrict__ step,
                                         const float* __restrict__ table,
                                         double* __restrict__ parts,
                                         unsigned int* __restrict__ ticket,
                                         double* __restrict__ prior) {
    using namespace pfr;
    const unsigned int k = step[0];
    const float4 t = reinterpret_cast<const float4*>(table)[k];
    const double mu0 = previous[0] + (double)t.x * previous[1] + (double)t.z;
    const double mu1 = previous[1] + (double)t.y * previous[0] + (double)t.w;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    double sq[2] = {0.0, 0.0};
    if (i < n) {
        const double d0 = (double)x[i] - mu0, d1 = (double)x[n + i] - mu1;
        sq[0] = d0 * d0;
        sq[1] = d1 * d1;
    }
    if (grid_sums_any(sq, parts, ticket) && threadIdx.x == 0) {
        const double m = n > 1 ? (double)(n - 1) : 1.0;
        prior[0] = mu0;
        prior[1] = mu1;
        prior[2] = sq[0] > 0.0 ? m / sq[0] : 0.0;
        prior[3] = sq[1] > 0.0 ? m / sq[1] : 0.0;
    }
}

// Eq. 4's log prior weight up to its constant, -1/2 SUM_d (x_d - mu_d)^2 /
// var_d, in float64 (D3 compares them: filters/d3.py, prior_log_weights).
extern "C" __global__ void uuv_prior_weights(const float* __restrict__ x, unsigned int n,
                                             const double* __restrict__ prior,
                                             double* __restrict__ log_pw) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double d0 = (double)x[i] - prior[0], d1 = (double)x[n + i] - prior[1];
    log_pw[i] = -0.5 * (d0 * d0 * prior[2] + d1 * d1 * prior[3]);
}

// The end of step k: estimates[k] = the step's estimate (ROWS values), which
// becomes the previous one; the resampling key of step k + 1 into key; the
// maximum log-weight back to 0; step[0] = k + 1. One thread.
extern "C" __global__ void step_advance(unsigned int* __restrict__ step, int rows,
                                        const double* __restrict__ estimate,
                                        double* __restrict__ previous,
                                        double* __restrict__ estimates,
                                        const unsigned int* __restrict__ keys,
                                        unsigned int* __restrict__ key,
                                        unsigned int* __restrict__ top, unsigned int steps) {
    const unsigned int k = step[0];
    for (int r = 0; r < rows; ++r) {
        estimates[(long long)k * rows + r] = estimate[r];
        previous[r] = estimate[r];
    }
    if (k + 1 < steps) {
        key[0] = keys[2 * (k + 1)];
        key[1] = keys[2 * (k + 1) + 1];
    }
    top[0] = 0u;
    step[0] = k + 1;
}

// Figs 5-6 of Das et al. 2014 (the particles after resampling at t = 200 s):
// out = x (count values) at the step `target` only.
extern "C" __global__ void snapshot_rows(const unsigned int* __restrict__ step,
                                         unsigned int target, const float* __restrict__ x,
                                         long long count, float* __restrict__ out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (step[0] != target || i >= count) return;
    out[i] = x[i];
}
