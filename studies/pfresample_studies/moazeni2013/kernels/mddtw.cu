// Moazeni (2013), chapter 7 (§7.4.1, §7.4.3): DTW of a z-normalised query dimension
// against every z-normalised window of a recording dimension, one thread a window, the
// query in shared memory, every (query dimension, recording dimension) pair of a search
// in one launch (blockIdx.y). The NumPy reference is mddtw.dtw_windows: the same
// operations in the same order in float64 (squared difference, the minimum of up, left
// and diagonal, a Sakoe-Chiba band), so the distances are equal bit for bit.
//
// queries: [query dims][m], z-normalised; series: [recording dims][n]; mu, sd: [recording
// dims][W] each window's mean and standard deviation (+inf for a constant window, which
// so normalises to zeros: mddtw.deviations); pair_q, pair_db: the pairs; out: [pairs][W],
// sqrt of the cumulative cost. The row of the dynamic programme lives in local memory
// (MAXM doubles; the band touches 2 band + 1 of them a row, which stay in L1).

#ifndef MAXM
#define MAXM 1024
#endif

extern "C" __global__ void dtw_windows(const double* __restrict__ queries,
                                       const double* __restrict__ series,
                                       const double* __restrict__ mu, const double* __restrict__ sd,
                                       const int* __restrict__ pair_q, const int* __restrict__ pair_db,
                                       int m, long long n, int band, double* __restrict__ out) {
    extern __shared__ double q[];
    const int pair = blockIdx.y;
    const int qd = pair_q[pair], dbd = pair_db[pair];
    for (int i = threadIdx.x; i < m; i += blockDim.x) q[i] = queries[(long long)qd * m + i];
    __syncthreads();
    const long long W = n - m + 1;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= W) return;
    const double* x = series + (long long)dbd * n + t;
    const double mean = mu[(long long)dbd * W + t], dev = sd[(long long)dbd * W + t];
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    double row[MAXM];
    for (int j = 0; j < m; ++j) row[j] = inf;
    for (int i = 0; i < m; ++i) {
        const int lo = max(0, i - band), hi = min(m - 1, i + band);
        double diag = (lo > 0 && i > 0) ? row[lo - 1] : inf;  // row i-1's cell j-1
        double left = inf;                                    // row i's cell j-1
        for (int j = lo; j <= hi; ++j) {
            const double w = (x[j] - mean) / dev;
            const double cost = (q[i] - w) * (q[i] - w);
            const double up = (i > 0 && j <= i - 1 + band) ? row[j] : inf;
            double best;
            if (i == 0 && j == 0) {
                best = 0.0;
            } else {
                best = up;
                if (j > 0) best = fmin(best, left);
                if (i > 0 && j > 0) best = fmin(best, diag);
            }
            diag = up;  // row i-1's cell j, the next column's diagonal
            left = cost + best;
            row[j] = left;
        }
    }
    out[(long long)pair * W + t] = sqrt(row[m - 1]);
}
