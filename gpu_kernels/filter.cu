// filter.cu -- stages 1 (the weights), 2, 3 and the end of 4 of the SIR
// filter (thesis Algorithm 2.4) on the GPU; stage 1's prediction is
// models.cu and stage 4's resampling the registry's kernels. Driver:
// src/pfresample/filters/sir_gpu.py, which launches every kernel here with
// REDUCE_THREADS threads per block.
//
// Sums are float64 and deterministic: a partial per block of a grid whose
// size depends only on N (sir_gpu.sum_parts), combined in index order by
// the last block to finish (last_block_done), so one launch does both steps
// and a replayed CUDA graph gives the same numbers every time.

#include "reduce.cuh"

// Stage 1, the weights: w~ = exp(log w - max log w), the maximum from
// models.cu's top (filters/sir.py, weights_from_log).
extern "C" __global__ void exp_shifted(const float* __restrict__ log_w,
                                       const unsigned int* __restrict__ top, unsigned int n,
                                       float* __restrict__ w_tilde) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w_tilde[i] = expf(log_w[i] - from_ordered(top[0]));
}

// Stage 2: total[0] = SUM(w~).
extern "C" __global__ void weight_total(const float* __restrict__ w_tilde, long long n,
                                        double* __restrict__ parts,
                                        unsigned int* __restrict__ ticket,
                                        double* __restrict__ total) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    double sum = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
#pragma unroll 8
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride)
        sum += (double)w_tilde[i];
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) parts[blockIdx.x] = sum;
    if (!last_block_done(ticket)) return;
    __syncthreads();
    sum = 0.0;
    for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS) sum += parts[p];
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) total[0] = sum;
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

// The end of stage 4: x_out = x_in[:, ancestors] (ROWS x n, row-major).
extern "C" __global__ void gather_rows(const float* __restrict__ x_in,
                                       const int* __restrict__ ancestors, unsigned int n, int rows,
                                       float* __restrict__ x_out) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long a = ancestors[i];
    for (int r = 0; r < rows; ++r) x_out[(long long)r * n + i] = x_in[(long long)r * n + a];
}
