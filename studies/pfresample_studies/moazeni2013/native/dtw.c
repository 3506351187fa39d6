/* Moazeni (2013), chapter 7: the compiled CPU baseline of the single-dimensional
 * search, DTW of a z-normalised query against every z-normalised window of a series,
 * the same operations in the same order as mddtw.dtw_windows and the GPU kernel
 * (studies/pfresample_studies/moazeni2013/kernels/mddtw.cu), so all three give the same bits; one thread,
 * the full banded matrix of every window (no lower bound, no early abandoning: the
 * exact computation the GPU does, §7.4.3). Kept apart from dtw_abandon below, which
 * tracks each row's least cost: the full search run through it is half as slow again. */
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

/* The same search pruned, as a CPU implementation would run it (the thesis's CPU side,
 * after [Rakthanmanon]): each window's lower bound (the larger of LB_Kim, its first and
 * last points, and LB_Keogh, the query's band envelope), windows in increasing bound,
 * the exact DTW with early abandoning once a row's least cost passes the threshold tau,
 * and a stop once the next bound does. The p selected windows (at least `exclusion`
 * apart, the least distances first, ties by position: the order of the square roots,
 * which can tie where the squares do not) are exactly mddtw.best_windows of the full
 * distances. tau is not the p-th distance selected so far: that can rise (a window
 * computed later can exclude one selected before) after a window was dropped against
 * it -- the earlier form of this code did so and missed windows, in about 1 % of
 * small random cases. tau is the least yet of the largest distance of p computed
 * windows pairwise 2 exclusion - 1 apart (a bound the p-th selected distance never
 * passes, dtw_best.c's header), compared with a slack for the rounding of the sums.
 * Returns the windows computed through (in `*computed`). */
static const double *lb_key;
static int by_bound(const void *a, const void *b) {
    const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    if (lb_key[i] != lb_key[j]) return lb_key[i] < lb_key[j] ? -1 : 1;
    return (i > j) - (i < j);
}

static double dtw_abandon(const double *q, const double *x, double mean, double dev, int m,
                          int band, double limit, double *row) {
    for (int j = 0; j < m; ++j) row[j] = INFINITY;
    for (int i = 0; i < m; ++i) {
        const int lo = i - band > 0 ? i - band : 0;
        const int hi = i + band < m - 1 ? i + band : m - 1;
        double diag = (lo > 0 && i > 0) ? row[lo - 1] : INFINITY, left = INFINITY;
        double least = INFINITY;
        for (int j = lo; j <= hi; ++j) {
            const double w = (x[j] - mean) / dev;
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
            least = fmin(least, left);
        }
        if (least > limit) return INFINITY; /* every path crosses row i */
    }
    return row[m - 1];
}

int dtw_top_pruned(const double *q, const double *x, const double *mu, const double *sd, int m,
                   int64_t n, int band, int p, int64_t exclusion, int64_t *out_t, double *out_d,
                   int64_t *computed) {
    const int64_t W = n - m + 1;
    double *U = malloc(sizeof(double) * m), *L = malloc(sizeof(double) * m);
    double *lb = malloc(sizeof(double) * W), *row = malloc(sizeof(double) * m);
    int64_t *order = malloc(sizeof(int64_t) * W);
    double *cd = malloc(sizeof(double) * W); /* computed, sorted by (distance, t) */
    double *c2 = malloc(sizeof(double) * W); /* their squared costs */
    int64_t *ct = malloc(sizeof(int64_t) * W), *took = malloc(sizeof(int64_t) * p);
    if (!U || !L || !lb || !row || !order || !cd || !c2 || !ct || !took) {
        free(U), free(L), free(lb), free(row), free(order), free(cd), free(c2), free(ct);
        free(took);
        return 1;
    }
    for (int i = 0; i < m; ++i) {
        U[i] = -INFINITY, L[i] = INFINITY;
        for (int k = i - band; k <= i + band; ++k)
            if (k >= 0 && k < m) U[i] = fmax(U[i], q[k]), L[i] = fmin(L[i], q[k]);
    }
    for (int64_t t = 0; t < W; ++t) {
        const double *w = x + t;
        const double a = (w[0] - mu[t]) / sd[t], b = (w[m - 1] - mu[t]) / sd[t];
        const double kim = (q[0] - a) * (q[0] - a) + (m > 1 ? (q[m - 1] - b) * (q[m - 1] - b) : 0.0);
        double keogh = 0.0;
        for (int j = 0; j < m; ++j) {
            const double v = (w[j] - mu[t]) / sd[t];
            if (v > U[j]) keogh += (v - U[j]) * (v - U[j]);
            else if (v < L[j]) keogh += (v - L[j]) * (v - L[j]);
        }
        lb[t] = fmax(kim, keogh);
        order[t] = t;
    }
    lb_key = lb;
    qsort(order, W, sizeof(int64_t), by_bound);
    /* a bound and the DTW add the same costs in other orders: their roundings differ by
     * less than this factor (m-term sums; and a square root that rounds to tau's) */
    const double slack = 1.0 + (4.0 * m + 16.0) * 0x1.0p-52;
    int64_t count = 0;
    double tau = INFINITY;
    *computed = 0;
    for (int64_t k = 0; k < W; ++k) {
        const int64_t t = order[k];
        if (lb[t] > tau * slack) break;
        *computed = k + 1;
        const double d2 = dtw_abandon(q, x + t, mu[t], sd[t], m, band, tau * slack, row);
        if (d2 == INFINITY) continue;
        const double d = sqrt(d2);
        int64_t at = count++; /* insert (d, t) in order */
        while (at > 0 && (cd[at - 1] > d || (cd[at - 1] == d && ct[at - 1] > t))) {
            cd[at] = cd[at - 1], c2[at] = c2[at - 1], ct[at] = ct[at - 1];
            --at;
        }
        cd[at] = d, c2[at] = d2, ct[at] = t;
        /* tau: the greedy selection with separation 2 exclusion - 1 */
        int taken = 0;
        double worst = 0.0;
        for (int64_t c = 0; c < count && taken < p; ++c) {
            int ok = 1;
            for (int s = 0; s < taken && ok; ++s)
                if (llabs(ct[c] - took[s]) < 2 * exclusion - 1) ok = 0;
            if (ok) took[taken++] = ct[c], worst = fmax(worst, c2[c]);
        }
        if (taken == p) tau = fmin(tau, worst);
    }
    int taken = 0; /* the selection: mddtw.best_windows on what is computed */
    for (int64_t c = 0; c < count && taken < p; ++c) {
        int ok = 1;
        for (int s = 0; s < taken && ok; ++s)
            if (llabs(ct[c] - out_t[s]) < exclusion) ok = 0;
        if (ok) out_t[taken] = ct[c], out_d[taken] = cd[c], ++taken;
    }
    free(U), free(L), free(lb), free(row), free(order), free(cd), free(c2), free(ct), free(took);
    return -taken; /* 0 or minus the windows selected (fewer than p only for short series) */
}
