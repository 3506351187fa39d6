/* Moazeni (2013), chapter 7: the compiled CPU baseline of the single-dimensional
 * search, DTW of a z-normalised query against every z-normalised window of a series,
 * the same operations in the same order as mddtw.dtw_windows and the GPU kernel
 * (gpu_kernels/moazeni2013/mddtw.cu), so all three give the same bits; one thread,
 * the full banded matrix of every window (no lower bound, no early abandoning: the
 * exact computation the GPU does, §7.4.3). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int dtw_windows_f64(const double *q, const double *x, const double *mu, const double *sd,
                    int m, int64_t n, int band, double *out) {
    const int64_t W = n - m + 1;
    double *row = malloc(sizeof(double) * m);
    if (!row) return 1;
    for (int64_t t = 0; t < W; ++t) {
        const double mean = mu[t], dev = sd[t];
        for (int j = 0; j < m; ++j) row[j] = INFINITY;
        for (int i = 0; i < m; ++i) {
            const int lo = i - band > 0 ? i - band : 0;
            const int hi = i + band < m - 1 ? i + band : m - 1;
            double diag = (lo > 0 && i > 0) ? row[lo - 1] : INFINITY, left = INFINITY;
            for (int j = lo; j <= hi; ++j) {
                const double w = (x[t + j] - mean) / dev;
                const double cost = (q[i] - w) * (q[i] - w);
                const double up = (i > 0 && j <= i - 1 + band) ? row[j] : INFINITY;
                double best;
                if (i == 0 && j == 0) {
                    best = 0.0;
                } else {
                    best = up;
                    if (j > 0) best = fmin(best, left);
                    if (i > 0 && j > 0) best = fmin(best, diag);
                }
                diag = up;
                left = cost + best;
                row[j] = left;
            }
        }
        out[t] = sqrt(row[m - 1]);
    }
    free(row);
    return 0;
}
