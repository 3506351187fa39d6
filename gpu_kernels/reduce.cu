// reduce.cu -- reductions over the weights: sum, maximum and the first bad
// entry (one pass), the SSD of eq. 6.5, and the B of both families.
//
// Every reduction runs in two fixed-shape steps -- a partial result per
// block of a grid whose size depends only on N, then the last block to
// finish combining the partials in index order -- so the result is the same
// on every run (the only atomic is the ticket of last_block_done). Sums are
// float64, and the CPU follows the same order (pfresample.sums), so that both
// backends choose the same B and Residual makes the same copies.

#include "reduce.cuh"
#include "stats.cuh"

// Metropolis B (Murray et al.; tuning.metropolis_B): beta = mean / max,
// B = ceil(log(eps) / log(1 - beta)), 0 when beta >= 1.
__device__ __forceinline__ int metropolis_B(double sum, double max, long long n,
                                            double log_epsilon) {
    const double beta = (sum / (double)n) / max;
    double b = 0.0;
    if (beta < 1.0) b = ceil(log_epsilon / log1p(-beta));
    return b < 2147483647.0 ? (int)b : 2147483647;  // no weight allows more; NaN -> 0
}

// The statistics, in one launch: per block the sum of the good weights times
// `scale` (a power of two, sums.stats_scale: 1 unless float64 weights would
// overflow the sum or lose their bits in it), their maximum and the first bad
// index (NaN, infinite or negative; n if none); then the last block to
// finish combines the partials, in index order, into stats[STAT_SUM/MAX/BAD]
// and STAT_SCALE, and, when b_out is not null, writes Metropolis's B there too. (One launch, not two or three: at small N a launch costs more
// than the work, and the filter runs one such reduction a step.)
template <typename T>
__global__ void weight_stats(const T* __restrict__ w, long long n, double* __restrict__ part_sum,
                             double* __restrict__ part_max, long long* __restrict__ part_bad,
                             unsigned int* __restrict__ ticket, double* __restrict__ stats,
                             double scale, double log_epsilon, int* __restrict__ b_out) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    __shared__ long long shared_bad[REDUCE_THREADS];
    double sum = 0.0, max = 0.0;
    long long bad = n;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        const double x = (double)w[i];
        if (x >= 0.0 && !isinf(x)) {  // NaN fails x >= 0
            sum += x * scale;
            max = x > max ? x : max;
        } else if (i < bad) {
            bad = i;
        }
    }
    sum = block_reduce(sum, shared, Add());
    __syncthreads();
    max = block_reduce(max, shared, Max());
    bad = block_reduce(bad, shared_bad, Min());
    if (threadIdx.x == 0) {
        part_sum[blockIdx.x] = sum;
        part_max[blockIdx.x] = max;
        part_bad[blockIdx.x] = bad;
    }
    if (!last_block_done(ticket)) return;
    sum = 0.0, max = 0.0, bad = n;
    for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS) {
        sum += part_sum[p];
        max = part_max[p] > max ? part_max[p] : max;
        bad = part_bad[p] < bad ? part_bad[p] : bad;
    }
    sum = block_reduce(sum, shared, Add());
    __syncthreads();
    max = block_reduce(max, shared, Max());
    bad = block_reduce(bad, shared_bad, Min());
    if (threadIdx.x == 0) {
        stats[STAT_SUM] = sum;
        stats[STAT_MAX] = max;
        stats[STAT_BAD] = (double)bad;
        stats[STAT_SCALE] = scale;
        if (b_out != nullptr) b_out[0] = metropolis_B(sum, max * scale, n, log_epsilon);
    }
}

// Metropolis B from statistics already on the device (the filter's: the sum
// of stage 2, the maximum 1). One thread.
extern "C" __global__ void metropolis_b(long long n, double log_epsilon,
                                        const double* __restrict__ stats, int* __restrict__ b_out) {
    using namespace pfr;
    b_out[0] = metropolis_B(stats[STAT_SUM], stats[STAT_MAX] * stats[STAT_SCALE], n, log_epsilon);
}

// The SSD (eq. 6.5, Algorithm 6.4; tuning.weights_ssd), sum((N w_i / sum w - 1)^2)
// on the scaled weights (the sum is of w * STAT_SCALE),
// a partial per block, then in the last block to finish: the partials added
// in index order, and FIND-B (Algorithm 6.5; tuning.find_B), the first B with
// table[B] >= SSD, the last B of the table when none is.
template <typename T>
__global__ void uphill_b(const T* __restrict__ w, long long n, double* __restrict__ part_sum,
                         unsigned int* __restrict__ ticket, const double* __restrict__ table,
                         int table_size, double* __restrict__ stats, int* __restrict__ b_out) {
    using namespace pfr;
    __shared__ double shared[REDUCE_THREADS];
    const double total = stats[STAT_SUM], scale = stats[STAT_SCALE];
    double sum = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    for (long long i = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; i < n; i += stride) {
        const double d = (double)n * ((double)w[i] * scale) / total - 1.0;
        sum += d * d;
    }
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) part_sum[blockIdx.x] = sum;
    if (!last_block_done(ticket)) return;
    sum = 0.0;
    for (int p = threadIdx.x; p < (int)gridDim.x; p += REDUCE_THREADS) sum += part_sum[p];
    sum = block_reduce(sum, shared, Add());
    if (threadIdx.x == 0) {
        stats[STAT_SSD] = sum;
        int lo = 0, hi = table_size;  // searchsorted(table, sum, side="left")
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (table[mid] < sum) lo = mid + 1; else hi = mid;
        }
        b_out[0] = lo < table_size - 1 ? lo : table_size - 1;
    }
}
