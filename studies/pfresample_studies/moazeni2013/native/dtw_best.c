/* Moazeni (2013), chapter 7: the best CPU code we can write for the single-dimensional
 * search (Fig 55, §7.4.1), on every core. The task is the GPU's: for every (query
 * dimension, recording dimension) pair, the p windows of least DTW distance at least
 * `exclusion` apart -- mddtw.best_windows of every window's distance (the least
 * distances first, ties by position) -- with the distance of every window that of
 * dtw.c, mddtw.dtw_windows and the GPU kernel (studies/pfresample_studies/moazeni2013/kernels/mddtw.cu): the
 * same float64 operations in the same order on the same window statistics (a point
 * normalised as (x - mean) / dev, cost (q - w)^2, min of up, left and diagonal, a
 * Sakoe-Chiba band). Two codes; both return the same (window, distance) bits:
 *
 * dtw_best_search -- the UCR suite's search [Rakthanmanon et al., "Searching and mining
 *   trillions of time series subsequences under dynamic time warping", KDD 2012]
 *   made exact for a top-p search with an exclusion zone:
 *   - each point normalised when a bound or the DTW first needs it (online
 *     z-normalisation: no window is normalised ahead; the means and deviations are the
 *     study's, mddtw.running_stats or window_stats, so the bits are the GPU's);
 *   - a cascade of lower bounds on the squared DTW cost, cheapest first: LB_Kim (the
 *     first and last cells of every path, then the least cost of each end's second
 *     cell), LB_Keogh EQ (the window against the query's band envelope) and LB_Keogh
 *     EC (the query against the window's envelope), both early-abandoned in the order
 *     of the query's largest magnitudes;
 *   - the DTW abandoned once a row's least cost plus the cumulative LB_Keogh of what
 *     is left (rows below, from EC, or columns past the band, from EQ; the larger)
 *     passes the threshold T.
 *   T must be a bound the p-th selected distance never passes, and it must not rise:
 *   a window dropped against T must stay irrelevant. The p-th distance selected from
 *   the windows computed so far is no such bound: a new window can exclude one
 *   selected before and the p-th then rises (the reason mddtw's pruned reference of
 *   dtw.c is not used here). T is instead the largest of p computed distances whose
 *   windows are pairwise at least 2 exclusion - 1 apart: each window the full
 *   selection takes excludes at most one of them, so the selection takes p windows
 *   before it passes the largest of them (the proof in docs/moazeni2013.md, "The best
 *   CPU code (chapter 7)"). Every such T bounds the p-th selected distance for good,
 *   so T is the least found yet, shared by the threads of a pair (an atomic minimum).
 *   A bound is compared with T x SLACK: a bound and the DTW add the same cell costs
 *   in other orders, so a computed bound may pass the computed distance by the
 *   rounding of m-term sums; SLACK covers it (and keeps a window whose distance's
 *   square root rounds to T's). Windows go in order (the UCR suite's scan), p seed
 *   windows spread over each chunk computed first so that T is finite at once; a
 *   pair's windows are split into chunks when pairs are fewer than threads. The
 *   selection then runs on every computed window under T: the windows it would take
 *   from the full list are among them, in the same order.
 *
 * dtw_best_all -- every window's exact distance, eight windows a SIMD vector (the CPU
 *   twin of the GPU kernel's one thread a window), OpenMP over blocks of windows, then
 *   the selection from the p (2 exclusion - 1) smallest (the full list's selection
 *   takes its p windows within them: each window taken excludes at most 2 exclusion - 1
 *   of the list's entries, itself included).
 *
 * Inputs must be finite (the Python wrapper checks). flaw != 0 (tests only): 1 computes
 * LB_Keogh EQ with a band-0 envelope, the squared Euclidean distance -- no lower bound
 * on DTW, so it drops windows that a warped match makes close. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8
#define LB_BLOCK 8 /* a bound's points a vector step */
enum { ST_KIM, ST_EQ, ST_EC, ST_ABANDONED, ST_COMPLETED, ST_DTW_CELLS, ST_LB_POINTS, NSTAT };

typedef struct {
    double d2, d; /* the squared cost and its square root, the distance */
    int64_t t;
} cand_t;

/* the order of mddtw.best_windows: distance, then position */
static int cand_before(const cand_t *a, const cand_t *b) {
    return a->d < b->d || (a->d == b->d && a->t < b->t);
}

static int cand_cmp(const void *a, const void *b) {
    const cand_t *x = a, *y = b;
    return cand_before(x, y) ? -1 : cand_before(y, x) ? 1 : 0;
}

/* The greedy selection of mddtw.best_windows on a sorted list: up to p entries, each at
 * least `apart` from those taken before. Returns how many it took (their indices in
 * `took`, when given). */
static int greedy(const cand_t *c, int64_t count, int p, int64_t apart, int64_t *took) {
    int64_t taken_t[p > 0 ? p : 1];
    int taken = 0;
    for (int64_t k = 0; k < count && taken < p; ++k) {
        int ok = 1;
        for (int s = 0; s < taken && ok; ++s)
            if (llabs(c[k].t - taken_t[s]) < apart) ok = 0;
        if (ok) {
            if (took) took[taken] = k;
            taken_t[taken++] = c[k].t;
        }
    }
    return taken;
}

/* The bound T of the header: the largest squared cost of the windows the greedy
 * selection with separation 2 exclusion - 1 takes from a sorted list, if it takes p;
 * +inf otherwise. */
static double separated_bound(const cand_t *c, int64_t count, int p, int64_t exclusion) {
    int64_t took[p];
    if (greedy(c, count, p, 2 * exclusion - 1, took) < p) return INFINITY;
    double worst = 0.0;
    for (int s = 0; s < p; ++s) worst = c[took[s]].d2 > worst ? c[took[s]].d2 : worst;
    return worst;
}

static void atomic_min_nonneg(int64_t *slot, double v) {
    /* non-negative doubles order as their bit patterns do */
    int64_t bits, cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    memcpy(&bits, &v, sizeof bits);
    while (bits < cur &&
           !__atomic_compare_exchange_n(slot, &cur, bits, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static double load_bound(const int64_t *slot) {
    int64_t bits = __atomic_load_n(slot, __ATOMIC_RELAXED);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline double sq(double a) { return a * a; }

/* fmin and fmax for the non-NaN values here, inlined (gcc calls libm's otherwise) */
static inline double mn(double a, double b) { return b < a ? b : a; }
static inline double mx(double a, double b) { return b > a ? b : a; }

/* the squared distance of v to [lo, hi] (0 inside), branch-free: at most one of v - hi
 * and lo - v is positive, and its square is (v - hi)^2 or (v - lo)^2 exactly */
static inline double outside(double v, double lo, double hi) {
    const double d = mx(v - hi, 0.0) + mx(lo - v, 0.0);
    return d * d;
}

/* One thread's scratch: the query's envelope and order, the window, the DTW row, the
 * bounds' terms and their cumulative sums, the series' envelope of a chunk. */
typedef struct {
    double *U, *L, *w, *row, *eq, *ec, *cbr, *cbc, *UX, *LX;
    double *Uo, *Lo, *qo, *eqo, *eco; /* in the order of the query's magnitudes */
    int *order;
} scratch_t;

static _Thread_local const double *order_key;
static int by_magnitude(const void *a, const void *b) {
    const double x = fabs(order_key[*(const int *)a]), y = fabs(order_key[*(const int *)b]);
    return x > y ? -1 : x < y ? 1 : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The banded DTW of dtw.c (the same operations in the same order) on the normalised
 * window w, abandoned (returns +inf) once row i's least cost plus the cumulative bound
 * of what the path has left passes `limit`: cbr[k] bounds rows k.. (EC), cbc[k]
 * columns k.. (EQ); a path leaves row i at a column of at most i + band, so it has rows
 * i + 1.. and columns i + band + 1.. still to cross, in distinct cells. */
static double dtw_abandon(const double *q, const double *w, int m, int band, double limit,
                          const double *cbr, const double *cbc, double *row, int64_t *cells) {
    for (int j = 0; j < m; ++j) row[j] = INFINITY;
    for (int i = 0; i < m; ++i) {
        const int lo = i - band > 0 ? i - band : 0;
        const int hi = i + band < m - 1 ? i + band : m - 1;
        double diag = (lo > 0 && i > 0) ? row[lo - 1] : INFINITY, left = INFINITY;
        double least = INFINITY;
        for (int j = lo; j <= hi; ++j) {
            const double cost = (q[i] - w[j]) * (q[i] - w[j]);
            const double up = (i > 0 && j <= i - 1 + band) ? row[j] : INFINITY;
            double best;
            if (i == 0 && j == 0) {
                best = 0.0;
            } else {
                best = up;
                if (j > 0) best = mn(best, left);
                if (i > 0 && j > 0) best = mn(best, diag);
            }
            diag = up;
            left = cost + best;
            row[j] = left;
            least = mn(least, left);
        }
        *cells += hi - lo + 1;
        if (i + 1 < m) {
            const double rest_rows = cbr[i + 1];
            const double rest_cols = i + band + 1 < m ? cbc[i + band + 1] : 0.0;
            if (least + mx(rest_rows, rest_cols) > limit) return INFINITY;
        }
    }
    return row[m - 1];
}

/* a sorted candidate list that grows */
typedef struct {
    cand_t *c;
    int64_t count, cap;
} list_t;

static int list_insert(list_t *l, cand_t v) {
    if (l->count == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        cand_t *c = realloc(l->c, sizeof(cand_t) * cap);
        if (!c) return 1;
        l->c = c, l->cap = cap;
    }
    int64_t at = l->count++;
    while (at > 0 && cand_before(&v, &l->c[at - 1])) {
        l->c[at] = l->c[at - 1];
        --at;
    }
    l->c[at] = v;
    return 0;
}

/* drop the entries over a threshold (the list is sorted by distance) */
static void list_cut(list_t *l, double d2_limit) {
    while (l->count > 0 && l->c[l->count - 1].d2 > d2_limit) --l->count;
}

typedef struct {
    const double *Q, *X, *MU, *SD;
    const int *pair_q, *pair_x;
    int m, band, p, flaw;
    int64_t n, W, exclusion;
    double slack;
} problem_t;

/* One chunk [a, b) of one pair's windows (the header's dtw_best_search). */
static int search_chunk(const problem_t *P, int pair, int64_t a, int64_t b, int64_t *shared,
                        scratch_t *s, list_t *out, int64_t *stat) {
    const int m = P->m, band = P->band, p = P->p;
    const double *q = P->Q + (int64_t)P->pair_q[pair] * m;
    const double *x = P->X + (int64_t)P->pair_x[pair] * P->n;
    const double *mu = P->MU + (int64_t)P->pair_x[pair] * P->W;
    const double *sd = P->SD + (int64_t)P->pair_x[pair] * P->W;
    const int env = P->flaw == 1 ? 0 : band;
    for (int i = 0; i < m; ++i) { /* the query's envelope (Keogh's U and L) */
        s->U[i] = -INFINITY, s->L[i] = INFINITY;
        for (int k = i - env; k <= i + env; ++k)
            if (k >= 0 && k < m) s->U[i] = mx(s->U[i], q[k]), s->L[i] = mn(s->L[i], q[k]);
        s->order[i] = i;
    }
    order_key = q;
    qsort(s->order, m, sizeof(int), by_magnitude);
    for (int k = 0; k < m; ++k) {
        const int i = s->order[k];
        s->Uo[k] = s->U[i], s->Lo[k] = s->L[i], s->qo[k] = q[i];
    }
    /* the series' envelope over this chunk's samples [a, b + m - 1): the extremes of
     * x[s - band .. s + band] within the series (wider than a window's own envelope at
     * its edges: a looser, still valid, bound) */
    const int64_t len = b - a + m - 1;
    for (int64_t k = 0; k < len; ++k) {
        const int64_t g = a + k;
        const int64_t lo = g - band > 0 ? g - band : 0;
        const int64_t hi = g + band < P->n - 1 ? g + band : P->n - 1;
        double u = x[lo], l = x[lo];
        for (int64_t r = lo + 1; r <= hi; ++r) u = mx(u, x[r]), l = mn(l, x[r]);
        s->UX[k] = u, s->LX[k] = l;
    }
    double T2 = load_bound(shared); /* the bound (squared cost); local copy */
    const int64_t stride = (b - a) / p, apart = 2 * P->exclusion - 1;
    const int seeded = stride >= apart;
    out->count = 0;
    for (int64_t k = 0; k < (b - a) + (seeded ? p : 0); ++k) {
        int64_t t;
        if (seeded && k < p) {
            t = a + k * stride; /* the seeds first */
        } else {
            t = a + (k - (seeded ? p : 0));
            if (seeded && (t - a) % stride == 0 && (t - a) / stride < p) continue;
        }
        T2 = mn(T2, load_bound(shared));
        const double limit = T2 * P->slack;
        const double mean = mu[t], dev = sd[t];
        const double *xt = x + t;
        /* LB_Kim: cells (0, 0) and (m - 1, m - 1) are on every path */
        const double w0 = (xt[0] - mean) / dev, w1 = (xt[m - 1] - mean) / dev;
        double kim = sq(q[0] - w0) + (m > 1 ? sq(q[m - 1] - w1) : 0.0);
        if (kim > limit) {
            ++stat[ST_KIM];
            continue;
        }
        if (m >= 4) { /* each path's second and second-to-last cells: the least of three */
            const double a1 = (xt[1] - mean) / dev, b1 = (xt[m - 2] - mean) / dev;
            kim += mn(mn(sq(q[0] - a1), sq(q[1] - w0)), sq(q[1] - a1));
            kim += mn(mn(sq(q[m - 1] - b1), sq(q[m - 2] - w1)), sq(q[m - 2] - b1));
            if (kim > limit) {
                ++stat[ST_KIM];
                continue;
            }
        }
        /* LB_Keogh EQ, early-abandoned: each normalised point against the query's
         * envelope, the query's largest magnitudes first (they part most often), a
         * block of LB_BLOCK points a vector step (a gather), the test after each block */
        double lb_eq = 0.0;
        int k2 = 0;
        while (k2 < m && lb_eq <= limit) {
            const int end = k2 + LB_BLOCK < m ? k2 + LB_BLOCK : m;
            double part = 0.0;
#pragma omp simd reduction(+ : part)
            for (int k = k2; k < end; ++k) {
                const double e = outside((xt[s->order[k]] - mean) / dev, s->Lo[k], s->Uo[k]);
                s->eqo[k] = e;
                part += e;
            }
            lb_eq += part, k2 = end;
        }
        stat[ST_LB_POINTS] += k2;
        if (lb_eq > limit) {
            ++stat[ST_EQ];
            continue;
        }
        /* LB_Keogh EC, early-abandoned: the query against the window's envelope */
        double lb_ec = 0.0;
        k2 = 0;
        const double *UXt = s->UX + (t - a), *LXt = s->LX + (t - a);
        while (k2 < m && lb_ec <= limit) {
            const int end = k2 + LB_BLOCK < m ? k2 + LB_BLOCK : m;
            double part = 0.0;
#pragma omp simd reduction(+ : part)
            for (int k = k2; k < end; ++k) {
                const int i = s->order[k];
                const double e = outside(s->qo[k], (LXt[i] - mean) / dev, (UXt[i] - mean) / dev);
                s->eco[k] = e;
                part += e;
            }
            lb_ec += part, k2 = end;
        }
        stat[ST_LB_POINTS] += k2;
        if (lb_ec > limit) {
            ++stat[ST_EC];
            continue;
        }
        /* the window survives both: its points and the bounds' terms in natural order */
#pragma omp simd
        for (int j = 0; j < m; ++j) s->w[j] = (xt[j] - mean) / dev;
        for (int k = 0; k < m; ++k) s->eq[s->order[k]] = s->eqo[k], s->ec[s->order[k]] = s->eco[k];
        s->cbr[m] = s->cbc[m] = 0.0; /* what rows k.. and columns k.. cost at least */
        for (int k = m - 1; k >= 0; --k) s->cbr[k] = s->cbr[k + 1] + s->ec[k];
        for (int k = m - 1; k >= 0; --k) s->cbc[k] = s->cbc[k + 1] + s->eq[k];
        const double d2 = dtw_abandon(q, s->w, m, band, limit, s->cbr, s->cbc, s->row,
                                      &stat[ST_DTW_CELLS]);
        if (d2 == INFINITY) {
            ++stat[ST_ABANDONED];
            continue;
        }
        ++stat[ST_COMPLETED];
        if (d2 > limit) continue;
        if (list_insert(out, (cand_t){d2, sqrt(d2), t})) return 1;
        if (d2 < T2) {
            const double bound = separated_bound(out->c, out->count, p, P->exclusion);
            if (bound < T2) {
                T2 = bound;
                atomic_min_nonneg(shared, T2);
                if (out->count > 4 * p) list_cut(out, T2 * P->slack);
            }
        }
    }
    list_cut(out, mn(T2, load_bound(shared)) * P->slack);
    return 0;
}

static int scratch_alloc(scratch_t *s, int m, int64_t chunk) {
    double *block = malloc(sizeof(double) * (13 * (size_t)(m + 1) + 2 * (size_t)(chunk + m)));
    s->order = malloc(sizeof(int) * m);
    if (!block || !s->order) {
        free(block), free(s->order);
        s->order = NULL;
        return 1;
    }
    double *b = block;
    s->U = b, b += m + 1;
    s->L = b, b += m + 1;
    s->w = b, b += m + 1;
    s->row = b, b += m + 1;
    s->eq = b, b += m + 1;
    s->ec = b, b += m + 1;
    s->cbr = b, b += m + 1;
    s->cbc = b, b += m + 1;
    s->Uo = b, b += m + 1;
    s->Lo = b, b += m + 1;
    s->qo = b, b += m + 1;
    s->eqo = b, b += m + 1;
    s->eco = b, b += m + 1;
    s->UX = b, b += chunk + m;
    s->LX = b;
    return 0;
}

static void scratch_free(scratch_t *s) { free(s->U), free(s->order); }

static int check_args(int m, int64_t n, int band, int p, int64_t exclusion, int npairs) {
    return m < 1 || n < m || band < 0 || p < 1 || exclusion < 1 || npairs < 1;
}

/* Q: [query dims][m] z-normalised; X: [recording dims][n]; MU, SD: [recording dims][W];
 * pairs (pair_q, pair_x); out_t, out_d: [npairs][p] (out_count[k] taken); stats:
 * [npairs][NSTAT] counters (windows dropped by LB_Kim, by EQ, by EC, DTWs abandoned,
 * completed, DTW cells, bound points); chunks: a pair's chunks (0: enough to keep
 * `threads` busy). Returns 0, 1 (out of memory) or 2 (bad arguments). */
int dtw_best_search(const double *Q, const double *X, const double *MU, const double *SD,
                    const int *pair_q, const int *pair_x, int npairs, int m, int64_t n, int band,
                    int p, int64_t exclusion, int threads, int chunks, int flaw, int64_t *out_t,
                    double *out_d, int *out_count, int64_t *stats) {
    if (check_args(m, n, band, p, exclusion, npairs) || threads < 1 || chunks < 0) return 2;
    const int64_t W = n - m + 1;
    if (chunks == 0) { /* enough chunks for 4 a thread, none shorter than 4,096 windows */
        chunks = (4 * threads + npairs - 1) / npairs;
        const int64_t most = W / 4096 > 1 ? W / 4096 : 1;
        if (chunks > most) chunks = (int)most;
    }
    if (chunks > W) chunks = (int)W;
    const int64_t tasks = (int64_t)npairs * chunks, chunk_len = (W + chunks - 1) / chunks;
    problem_t P = {Q, X, MU, SD, pair_q, pair_x, m, band, p, flaw, n, W, exclusion,
                   1.0 + (4.0 * m + 16.0) * 0x1.0p-52};
    int64_t *shared = malloc(sizeof(int64_t) * npairs);
    list_t *lists = calloc(tasks, sizeof(list_t));
    if (!shared || !lists) {
        free(shared), free(lists);
        return 1;
    }
    const double inf = INFINITY;
    for (int k = 0; k < npairs; ++k) memcpy(&shared[k], &inf, sizeof inf);
    memset(stats, 0, sizeof(int64_t) * NSTAT * npairs);
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        scratch_t s = {0};
        int64_t stat[NSTAT];
        if (scratch_alloc(&s, m, chunk_len)) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; ++task) {
            if (failed) continue;
            const int pair = (int)(task / chunks), c = (int)(task % chunks);
            const int64_t a = c * chunk_len, b = a + chunk_len < W ? a + chunk_len : W;
            if (a >= b) continue;
            memset(stat, 0, sizeof stat);
            if (search_chunk(&P, pair, a, b, &shared[pair], &s, &lists[task], stat)) failed = 1;
            for (int k = 0; k < NSTAT; ++k)
                __atomic_fetch_add(&stats[(int64_t)pair * NSTAT + k], stat[k], __ATOMIC_RELAXED);
        }
        scratch_free(&s);
#pragma omp for schedule(dynamic, 1)
        for (int pair = 0; pair < npairs; ++pair) { /* the selection on what is left */
            int64_t total = 0;
            for (int c = 0; c < chunks; ++c) total += lists[(int64_t)pair * chunks + c].count;
            cand_t *all = malloc(sizeof(cand_t) * (total ? total : 1));
            if (!all) {
                failed = 1;
                continue;
            }
            int64_t at = 0;
            for (int c = 0; c < chunks; ++c) {
                const list_t *l = &lists[(int64_t)pair * chunks + c];
                memcpy(all + at, l->c, sizeof(cand_t) * l->count);
                at += l->count;
            }
            qsort(all, total, sizeof(cand_t), cand_cmp);
            int64_t took[p];
            const int taken = greedy(all, total, p, exclusion, took);
            for (int s2 = 0; s2 < taken; ++s2) {
                out_t[(int64_t)pair * p + s2] = all[took[s2]].t;
                out_d[(int64_t)pair * p + s2] = all[took[s2]].d;
            }
            out_count[pair] = taken;
            free(all);
        }
    }
    for (int64_t k = 0; k < tasks; ++k) free(lists[k].c);
    free(lists), free(shared);
    return failed ? 1 : 0;
}

/* Quickselect: the `k` first entries of c in cand_before order, unsorted, at c[0..k). */
static void select_first(cand_t *c, int64_t count, int64_t k) {
    int64_t lo = 0, hi = count - 1;
    while (lo < hi) {
        const cand_t pivot = c[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (cand_before(&c[i], &pivot)) ++i;
            while (cand_before(&pivot, &c[j])) --j;
            if (i <= j) {
                const cand_t tmp = c[i];
                c[i++] = c[j], c[j--] = tmp;
            }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else break;
    }
}

/* mddtw.best_windows of one row of distances d[W] (squared costs d2[W]): out_t, out_d. */
static int select_row(const double *d, int64_t W, int p, int64_t exclusion, cand_t *work,
                      int64_t *out_t, double *out_d) {
    for (int64_t t = 0; t < W; ++t) work[t] = (cand_t){d[t] * d[t], d[t], t};
    int64_t K = (int64_t)p * (2 * exclusion - 1);
    if (K > W) K = W;
    select_first(work, W, K);
    qsort(work, K, sizeof(cand_t), cand_cmp);
    int64_t took[p];
    const int taken = greedy(work, K, p, exclusion, took);
    for (int s = 0; s < taken; ++s) out_t[s] = work[took[s]].t, out_d[s] = work[took[s]].d;
    return taken;
}

/* The banded DTW of dtw.c for LANES windows at once (lane l: window t0 + l), the same
 * operations in the same order in every lane; the tail's lanes repeat its last window. */
static void dtw_lanes(const double *restrict q, const double *restrict x,
                      const double *restrict mu, const double *restrict sd, int m, int band,
                      int64_t t0, int lanes, double *restrict wv, double *restrict row,
                      double *restrict out) {
    for (int l = 0; l < LANES; ++l) {
        const int64_t t = t0 + (l < lanes ? l : lanes - 1);
        for (int j = 0; j < m; ++j) wv[j * LANES + l] = (x[t + j] - mu[t]) / sd[t];
    }
    for (int k = 0; k < m * LANES; ++k) row[k] = INFINITY;
    double diag[LANES], left[LANES];
    for (int i = 0; i < m; ++i) {
        const int lo = i - band > 0 ? i - band : 0;
        const int hi = i + band < m - 1 ? i + band : m - 1;
        const double qi = q[i];
        for (int l = 0; l < LANES; ++l) {
            diag[l] = (lo > 0 && i > 0) ? row[(lo - 1) * LANES + l] : INFINITY;
            left[l] = INFINITY;
        }
        for (int j = lo; j <= hi; ++j) {
            const int has_up = i > 0 && j <= i - 1 + band, first = i == 0 && j == 0;
            const int has_left = j > 0, has_diag = i > 0 && j > 0;
            double *restrict r = row + j * LANES;
            const double *restrict w = wv + j * LANES;
#pragma omp simd
            for (int l = 0; l < LANES; ++l) {
                const double cost = (qi - w[l]) * (qi - w[l]);
                const double up = has_up ? r[l] : INFINITY;
                double best = up;
                /* fmin's value for the non-negative, non-NaN costs here */
                if (has_left) best = left[l] < best ? left[l] : best;
                if (has_diag) best = diag[l] < best ? diag[l] : best;
                if (first) best = 0.0;
                diag[l] = up;
                left[l] = cost + best;
                r[l] = left[l];
            }
        }
    }
    for (int l = 0; l < lanes; ++l) out[l] = sqrt(row[(m - 1) * LANES + l]);
}

/* Every window's distance of every pair into D[npairs][W] (when D is not NULL, else a
 * scratch), then the selection (the header's dtw_best_all). Returns 0, 1 or 2. */
int dtw_best_all(const double *Q, const double *X, const double *MU, const double *SD,
                 const int *pair_q, const int *pair_x, int npairs, int m, int64_t n, int band,
                 int p, int64_t exclusion, int threads, int64_t *out_t, double *out_d,
                 int *out_count, double *D) {
    if (check_args(m, n, band, p, exclusion, npairs) || threads < 1) return 2;
    const int64_t W = n - m + 1, blocks = (W + LANES - 1) / LANES;
    double *dist = D ? D : malloc(sizeof(double) * (size_t)npairs * W);
    if (!dist) return 1;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        double *wv = malloc(sizeof(double) * m * LANES), *row = malloc(sizeof(double) * m * LANES);
        cand_t *work = malloc(sizeof(cand_t) * W);
        if (!wv || !row || !work) failed = 1;
#pragma omp for schedule(dynamic, 16) collapse(2)
        for (int pair = 0; pair < npairs; ++pair) {
            for (int64_t blk = 0; blk < blocks; ++blk) {
                if (failed) continue;
                const int64_t t0 = blk * LANES;
                const int lanes = (int)(W - t0 < LANES ? W - t0 : LANES);
                const int xd = pair_x[pair];
                dtw_lanes(Q + (int64_t)pair_q[pair] * m, X + (int64_t)xd * n, MU + (int64_t)xd * W,
                          SD + (int64_t)xd * W, m, band, t0, lanes, wv, row,
                          dist + (int64_t)pair * W + t0);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (int pair = 0; pair < npairs; ++pair) {
            if (failed) continue;
            out_count[pair] = select_row(dist + (int64_t)pair * W, W, p, exclusion, work,
                                         out_t + (int64_t)pair * p, out_d + (int64_t)pair * p);
        }
        free(wv), free(row), free(work);
    }
    if (!D) free(dist);
    return failed ? 1 : 0;
}

/* The selection alone on given distances D[rows][W] (the GPU's and the peer's, so
 * that every side ends with the same selection code), on `threads` threads. */
int dtw_select_rows(const double *D, int rows, int64_t W, int p, int64_t exclusion, int threads,
                    int64_t *out_t, double *out_d, int *out_count) {
    if (rows < 1 || W < 1 || p < 1 || exclusion < 1 || threads < 1) return 2;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        cand_t *work = malloc(sizeof(cand_t) * W);
        if (!work) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (int r = 0; r < rows; ++r) {
            if (failed) continue;
            out_count[r] = select_row(D + (int64_t)r * W, W, p, exclusion, work,
                                      out_t + (int64_t)r * p, out_d + (int64_t)r * p);
        }
        free(work);
    }
    return failed ? 1 : 0;
}

/* The selection from each row's K candidates already found (the GPU's sorted indices:
 * idx[rows][K] positions, d[rows][K] their distances, any order), for the GPU side. */
int dtw_select_candidates(const int64_t *idx, const double *d, int rows, int64_t K, int p,
                          int64_t exclusion, int64_t *out_t, double *out_d, int *out_count) {
    if (rows < 1 || K < 1 || p < 1 || exclusion < 1) return 2;
    cand_t *work = malloc(sizeof(cand_t) * K);
    if (!work) return 1;
    for (int r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < K; ++k) {
            const double v = d[(int64_t)r * K + k];
            work[k] = (cand_t){v * v, v, idx[(int64_t)r * K + k]};
        }
        qsort(work, K, sizeof(cand_t), cand_cmp);
        int64_t took[p];
        const int taken = greedy(work, K, p, exclusion, took);
        for (int s = 0; s < taken; ++s)
            out_t[(int64_t)r * p + s] = work[took[s]].t, out_d[(int64_t)r * p + s] = work[took[s]].d;
        out_count[r] = taken;
    }
    free(work);
    return 0;
}
