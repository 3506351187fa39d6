/* Dülger (2017) Fig 6.23: the best CPU SIR filter we can write for the growth model, on
 * every core (OpenMP), the CPU side of the GPU filter's speed-up.
 *
 * The filter is thesis Algorithm 2.4 (pfresample.run_filter with SIR_OPTIONS) on the
 * univariate growth model of eqs. 2.34-2.35 (models/growth.py), T steps, resampling at
 * every step, with either resampler:
 *   - Uphill (thesis Algorithm 6.1, resampling/uphill.py): particle i keeps the heaviest
 *     of itself and B uniformly drawn candidates, a tie keeping the one seen first; B by
 *     the SSD match of §6.4 (eq. 6.5, FIND-B of Algorithm 6.5, tuning.py) on w~;
 *   - Systematic (thesis Algorithms 3.1-3.2, resampling/cumulative.py): r_i = N C_i / C_N,
 *     O_i = min(N, floor(r_i + u)), O_i = N from the last positive weight on, and slot k's
 *     ancestor the first i with O_i > k; the resampler a CPU expert picks for this filter
 *     (O(N), no B, one uniform a step).
 * One step k = 0 ... T-1 (the engine's order, filters/engine.py):
 *   stage 1   x_i <- x_i / 2 + 25 x_i / (1 + x_i^2) + 8 cos(1.2 k) + sqrt(10) v   (eq. 2.34)
 *             l_i  = -(z_k - x_i^2 / 20)^2 / 2 (eq. 2.35; the constant cancels) and max l;
 *   stage 2-3 w~_i = float32(exp(l_i - max l)) and, in the same pass, SUM w~, SUM w~ x (the
 *             estimate SUM w~ x / SUM w~), and SUM (w~ - mean)^2 (Chan, Golub & LeVeque's
 *             pairwise update over blocks of BLOCK particles), from which the SSD of eq. 6.5
 *             (SUM (N w~/SUM w~ - 1)^2 = N^2 SUM (w~ - mean)^2 / (SUM w~)^2) and the ESS
 *             (SUM w~)^2 / SUM w~^2 follow without a further pass or a cancelling difference;
 *   stage 4   resampling with the gather x_new[k] = x[ancestor k] fused into it: no ancestor
 *             array is written or read back.
 * Stage 1 recomputes nothing of stage 4 and stage 2 recomputes l_i from the float32 state
 * (three flops) rather than storing it: a pass over N doubles fewer each step.
 *
 * Precision: states and w~ are float32 as on the GPU (the thesis is single precision,
 * §2.4); the noise, the likelihood, the exponent and every sum are double.
 * Random numbers: pf_cpu.h's counter-based generator, so a particle's draws do not depend
 * on the thread that makes them: initial state pf_normal(s_init, i, 0), noise of step k
 * pf_normal(s_noise, i, 2k), Uphill's candidate m of particle i at step k the half m & 1
 * of pf_bits(s_k, i, m >> 1) with s_k = pf_bits(s_res, k, 0), mapped to [0, N) by
 * (draw * N) >> 32 as the library's uniform_int; Systematic's u = pf_uniform(s_k, 0, 1).
 * The results depend on the thread count only through the rounding of the sums.
 *
 * Threads: the whole run is one OpenMP parallel region (the team exists before the first
 * step; the bench's warm-up call creates libgomp's pool), each thread owning the static
 * range [N t / P, N (t + 1) / P) in every stage, so that its pages stay in its cache and
 * NUMA node; one thread combines the per-thread partials between stages and stamps the
 * stage clock. Uphill runs over tiles of TILE particles: for each candidate m the tile's
 * lanes draw, gather and compare together (vector gathers, TILE independent loads in
 * flight), which is what bounds it -- B N random loads a step.
 *
 * Entry points for the tests (exact comparisons with the library's NumPy resamplers):
 * uphill_from_draws (Algorithm 6.1 on given 32-bit draws), uphill_draws (the filter's own
 * draws), uphill_resample and systematic_resample (the filter's stage-4 code writing
 * ancestors instead of states), systematic_from_ratios (Algorithms 3.1-3.2 on given r).
 * growth_sir_run's `flaw` builds a wrong filter on purpose (the tests' negative controls).
 * The bounds the bench holds the filter to: stream_copy (pf_stream_copy) and gather_bound
 * (Uphill's loads without its comparisons). */

#include "pf_cpu.h"

#include <stdlib.h>
#include <string.h>

#ifndef PF_SCALAR_MATH
/* The vector forms of glibc's libmvec (the loader links it): with these declarations
 * GCC vectorises the stage 1-2 loops' exp, log and cos, which <math.h> declares so only
 * under -ffast-math -- whose other effects (FTZ set process-wide by crtfastmath.o,
 * reassociated sums) this file does not want. */
double exp(double) __attribute__((simd("notinbranch")));
double log(double) __attribute__((simd("notinbranch")));
double cos(double) __attribute__((simd("notinbranch")));
#endif

#define BLOCK 2048      /* stage 2's Chan blocks: 8 KiB of w~, re-read from L1 */
#define TILE 256        /* Uphill's lanes in flight per thread */
#define MAX_THREADS 512

enum { METHOD_UPHILL = 0, METHOD_SYSTEMATIC = 1 };
enum {
    FLAW_NONE = 0,
    FLAW_DROP_WEIGHT_UPDATE = 1, /* every w~ = 1: the measurements are ignored */
    FLAW_UPHILL_TIES_LATER = 2   /* a tie takes the later candidate (<= for <) */
};
enum {
    OK = 0,
    ERR_N = 1,
    ERR_T = 2,
    ERR_METHOD = 3,
    ERR_TABLE = 4,
    ERR_THREADS = 5,
    ERR_ALLOC = 6,
    ERR_FLAW = 7,
    ERR_B = 8
};

static const double SIGMA_V = 3.1622776601683795; /* sqrt(sigma_v^2 = 10), eq. 2.34 */
static const double INIT_SD = 1.4142135623730951; /* sqrt(2): x_0 ~ N(0, 2), §2.6 */

/* What a thread hands the combining thread between stages (a cache line each). */
typedef struct {
    double max;   /* stage 1: the largest l_i */
    double count; /* stage 2: particles, SUM w~, SUM (w~ - mean)^2, SUM w~ x */
    double sum;
    double m2;
    double wx;
    double offset; /* Systematic: C just before the thread's range */
    double pad[2];
} partial_t;

/* Eq. 2.34 without the noise: the mean of x_{k+1} given x_k = x. */
static inline double growth_f(double x) { return 0.5 * x + 25.0 * x / (1.0 + x * x); }

/* Eq. 2.35's log-likelihood of z given x (sigma_n^2 = 1), less its constant. */
static inline double growth_loglik(double z, float x) {
    double xd = (double)x, r = z - xd * xd / 20.0;
    return -0.5 * r * r;
}

/* Chan, Golub & LeVeque (1979): merge (nb, sb, m2b) into (na, sa, m2a), m2 the sum of
 * squared deviations from the mean. */
static inline void chan_merge(double *na, double *sa, double *m2a, double nb, double sb,
                              double m2b) {
    if (nb == 0.0) return;
    if (*na == 0.0) {
        *na = nb;
        *sa = sb;
        *m2a = m2b;
        return;
    }
    double d = sb / nb - *sa / *na;
    *m2a += m2b + d * d * (*na * nb / (*na + nb));
    *na += nb;
    *sa += sb;
}

/* FIND-B (thesis Algorithm 6.5, tuning.find_B): the first B with ssd <= table[B], the
 * last entry where none is. */
static inline int find_B(const double *table, int64_t len, double ssd) {
    int64_t a = 0, b = len; /* searchsorted(table, ssd, side="left") */
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (table[m] < ssd) a = m + 1; else b = m;
    }
    return (int)(a < len ? a : len - 1);
}

/* The library's uniform_int: a 32-bit draw to [0, n). */
static inline int32_t candidate(uint32_t draw, int64_t n) {
    return (int32_t)(((uint64_t)draw * (uint64_t)n) >> 32);
}

/* Algorithm 6.1's step: candidate j replaces the kept t when it is heavier (ties: the
 * one seen first stays; the flaw takes the later). Branch-free, so it vectorises. */
static inline void uphill_take(int32_t *t, float *wt, int32_t j, float wj, int flaw) {
    int up = flaw == FLAW_UPHILL_TIES_LATER ? (*wt <= wj) : (*wt < wj);
    *t = up ? j : *t;
    *wt = up ? wj : *wt;
}

/* Uphill (Algorithm 6.1) over particles [lo, hi) with the filter's draws, TILE lanes at a
 * time: for each candidate the lanes draw, gather and compare together. Writes
 * xn[i] = x[t_i] (the fused gather), or anc[i] = t_i where anc is given. */
static void uphill_range(const float *w, int64_t n, int B, uint64_t step_seed, int64_t lo,
                         int64_t hi, const float *x, float *xn, int32_t *anc, int flaw) {
    uint64_t base = pf_mix64(step_seed); /* pf_bits(s, i, c) = mix(mix(base ^ i) ^ c) */
    uint64_t key[TILE];
    int32_t t[TILE];
    float wt[TILE];
    for (int64_t i0 = lo; i0 < hi; i0 += TILE) {
        int len = (int)(hi - i0 < TILE ? hi - i0 : TILE);
#pragma omp simd
        for (int l = 0; l < len; ++l) {
            key[l] = pf_mix64(base ^ (uint64_t)(i0 + l));
            t[l] = (int32_t)(i0 + l);
            wt[l] = w[i0 + l];
        }
        int m = 0;
        for (; m + 1 < B; m += 2) { /* one 64-bit word serves candidates m and m + 1 */
            uint64_t c = (uint64_t)(m >> 1);
#pragma omp simd
            for (int l = 0; l < len; ++l) {
                uint64_t bits = pf_mix64(key[l] ^ c);
                int32_t j0 = candidate((uint32_t)bits, n);
                int32_t j1 = candidate((uint32_t)(bits >> 32), n);
                float w0 = w[j0], w1 = w[j1];
                uphill_take(&t[l], &wt[l], j0, w0, flaw);
                uphill_take(&t[l], &wt[l], j1, w1, flaw);
            }
        }
        if (m < B) { /* B odd: the low half of the last word */
            uint64_t c = (uint64_t)(m >> 1);
#pragma omp simd
            for (int l = 0; l < len; ++l) {
                int32_t j0 = candidate((uint32_t)pf_mix64(key[l] ^ c), n);
                uphill_take(&t[l], &wt[l], j0, w[j0], flaw);
            }
        }
        if (anc) {
            for (int l = 0; l < len; ++l) anc[i0 + l] = t[l];
        } else {
#pragma omp simd
            for (int l = 0; l < len; ++l) xn[i0 + l] = x[t[l]];
        }
    }
}

/* Algorithm 3.1's O_i given C_i = s: min(N, floor(s N / total + u)), N from the last
 * positive weight on; scale = N / total (a multiplication where the library divides N C
 * by C_N: the two differ by a rounding of r, which moves an ancestor only where r + u lies
 * within that rounding of an integer). */
static inline int64_t offspring(double s, int64_t i, int64_t last, int64_t n, double scale,
                                double u) {
    if (i >= last) return n;
    int64_t o = (int64_t)(s * scale + u); /* s * scale + u >= 0: truncation is floor */
    return o < n ? o : n;
}

/* Slots [from, to) of the output get particle i: xn[k] = xi, or anc[k] = i. */
static inline void fill(int64_t from, int64_t to, int64_t i, float xi, float *xn,
                        int32_t *anc) {
    if (anc) {
        for (int64_t k = from; k < to; ++k) anc[k] = (int32_t)i;
    } else {
        for (int64_t k = from; k < to; ++k) xn[k] = xi;
    }
}

/* Systematic (Algorithms 3.1-3.2) over the thread's particles [lo, hi): its running C from
 * `offset` (C just before lo), O_{hi-1} taken from `end` (C just before the next thread's
 * range, the value that thread starts from) so that the threads' output slots meet
 * exactly; slots [O_{i-1}, O_i) get particle i: xn[k] = x[i], or anc[k] = i.
 * Most particles have 0, 1 or 2 offspring, and a loop over their slots mispredicts its
 * exit about once a particle. So each particle writes slots O_{i-1} and O_{i-1} + 1
 * unconditionally, and loops only over slots past those: a slot it does not own belongs
 * to a later particle of the same thread, which overwrites it (particles write in order);
 * near the thread's last slot the plain loop keeps every write inside the thread's own. */
static void systematic_range(const float *w, int64_t n, double u, double total, int64_t last,
                             int64_t lo, int64_t hi, double offset, double end, const float *x,
                             float *xn, int32_t *anc) {
    if (lo >= hi) return;
    const double scale = (double)n / total;
    int64_t o_prev = lo == 0 ? 0 : offspring(offset, lo - 1, last, n, scale, u);
    const int64_t o_end = offspring(end, hi - 1, last, n, scale, u);
    double s = offset;
    for (int64_t i = lo; i < hi - 1; ++i) {
        s += (double)w[i];
        int64_t o = offspring(s, i, last, n, scale, u);
        o = o < o_end ? o : o_end; /* the running sum's rounding past the next offset */
        float xi = anc ? 0.0f : x[i];
        if (o_prev + 2 <= o_end) {
            if (anc) {
                anc[o_prev] = anc[o_prev + 1] = (int32_t)i;
            } else {
                xn[o_prev] = xn[o_prev + 1] = xi;
            }
            if (o > o_prev + 2) fill(o_prev + 2, o, i, xi, xn, anc);
        } else {
            fill(o_prev, o, i, xi, xn, anc);
        }
        o_prev = o > o_prev ? o : o_prev;
    }
    fill(o_prev, o_end, hi - 1, anc ? 0.0f : x[hi - 1], xn, anc);
}

/* The index of the last positive weight (-1: none), as prefix_sum's `last`. */
static int64_t last_positive(const float *w, int64_t n) {
    int64_t i = n - 1;
    while (i >= 0 && !(w[i] > 0.0f)) --i;
    return i;
}

/* Per-thread block sums over [n t / P, n (t + 1) / P) (SUM w~ in double), scanned into the
 * offsets systematic_range starts from; part[P].offset is the total. */
static void block_offsets(const float *w, int64_t n, int P, partial_t *part) {
#pragma omp parallel num_threads(P)
    {
        int t = omp_get_thread_num(), k = omp_get_num_threads();
        int64_t lo = n * t / k, hi = n * (t + 1) / k;
        double s = 0.0;
        for (int64_t i = lo; i < hi; ++i) s += (double)w[i];
        part[t].sum = s;
    }
    part[0].offset = 0.0;
    for (int t = 0; t < P; ++t) part[t + 1].offset = part[t].offset + part[t].sum;
}

/* --- the filter ---------------------------------------------------------------------- */

/* Algorithm 2.4 on the growth model over z_1 ... z_T (y[k] = z_{k+1}), N particles, the
 * resampler `method`, `threads` OpenMP threads. Work arrays xa, xb, w of N floats each
 * (the caller's, so the run allocates nothing). Writes the T estimates, B of each step
 * (-1 for Systematic), the ESS and the seconds of the four stages (T x 4; stage 3 is fused
 * into stage 2 and reads 0). Returns OK or an ERR_ code. */
int growth_sir_run(const double *y, int64_t T, int64_t n, uint64_t seed, int method,
                   const double *table, int64_t table_len, int threads, int flaw, float *xa,
                   float *xb, float *w, double *estimates, int32_t *B_out, double *ess_out,
                   double *stage_seconds) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    if (T < 1) return ERR_T;
    if (method != METHOD_UPHILL && method != METHOD_SYSTEMATIC) return ERR_METHOD;
    if (method == METHOD_UPHILL && (table == NULL || table_len < 1)) return ERR_TABLE;
    if (threads < 1 || threads > MAX_THREADS) return ERR_THREADS;
    if (flaw < FLAW_NONE || flaw > FLAW_UPHILL_TIES_LATER) return ERR_FLAW;
    partial_t *part = aligned_alloc(64, sizeof(partial_t) * (MAX_THREADS + 1));
    if (!part) return ERR_ALLOC;
    memset(part, 0, sizeof(partial_t) * (MAX_THREADS + 1));
    const uint64_t s_init = pf_mix64(seed ^ 0x1ull), s_noise = pf_mix64(seed ^ 0x2ull),
                   s_res = pf_mix64(seed ^ 0x3ull);
    float *x = xa, *xn = xb; /* shared: swapped by one thread between steps */
    double top = 0.0, total = 0.0, stamp = 0.0, u = 0.0;
    int64_t last = n - 1;
    int B = 0;
    int P = threads;

#pragma omp parallel num_threads(P)
    {
        const int tid = omp_get_thread_num(), k = omp_get_num_threads();
        const int64_t lo = n * tid / k, hi = n * (tid + 1) / k;
        {
            float *x0 = x;
#pragma omp simd
            for (int64_t i = lo; i < hi; ++i)
                x0[i] = (float)(INIT_SD * pf_normal(s_init, (uint64_t)i, 0));
        }
#pragma omp barrier
        for (int64_t step = 0; step < T; ++step) {
#pragma omp single
            stamp = omp_get_wtime();
            /* stage 1: eq. 2.34 and eq. 2.35's log-likelihood, its maximum */
            float *xc = x;
            const double drift = 8.0 * cos(1.2 * (double)step), z = y[step];
            const uint64_t counter = 2 * (uint64_t)step;
            double mx = -INFINITY;
#pragma omp simd reduction(max : mx)
            for (int64_t i = lo; i < hi; ++i) {
                double v = growth_f((double)xc[i]) + drift +
                           SIGMA_V * pf_normal(s_noise, (uint64_t)i, counter);
                float xf = (float)v;
                xc[i] = xf;
                double l = growth_loglik(z, xf);
                mx = l > mx ? l : mx;
            }
            part[tid].max = mx;
#pragma omp barrier
#pragma omp single
            {
                double m = -INFINITY;
                for (int t = 0; t < k; ++t) m = part[t].max > m ? part[t].max : m;
                top = m;
                double now = omp_get_wtime();
                stage_seconds[4 * step] = now - stamp;
                stamp = now;
            }
            /* stages 2-3: w~, its sum, the estimate's sum and Chan's m2, block by block */
            {
                const double tp = top;
                double cnt = 0.0, sum = 0.0, m2 = 0.0, wx = 0.0;
                for (int64_t b0 = lo; b0 < hi; b0 += BLOCK) {
                    int64_t b1 = b0 + BLOCK < hi ? b0 + BLOCK : hi;
                    double s = 0.0, sx = 0.0;
#pragma omp simd reduction(+ : s, sx)
                    for (int64_t i = b0; i < b1; ++i) {
                        float wi = flaw == FLAW_DROP_WEIGHT_UPDATE
                                       ? 1.0f
                                       : (float)exp(growth_loglik(z, xc[i]) - tp);
                        w[i] = wi;
                        s += (double)wi;
                        sx += (double)wi * (double)xc[i];
                    }
                    double mean = s / (double)(b1 - b0), q = 0.0;
#pragma omp simd reduction(+ : q)
                    for (int64_t i = b0; i < b1; ++i) {
                        double d = (double)w[i] - mean;
                        q += d * d;
                    }
                    chan_merge(&cnt, &sum, &m2, (double)(b1 - b0), s, q);
                    wx += sx;
                }
                part[tid].count = cnt;
                part[tid].sum = sum;
                part[tid].m2 = m2;
                part[tid].wx = wx;
            }
#pragma omp barrier
#pragma omp single
            {
                double cnt = 0.0, sum = 0.0, m2 = 0.0, wx = 0.0;
                part[0].offset = 0.0;
                for (int t = 0; t < k; ++t) {
                    chan_merge(&cnt, &sum, &m2, part[t].count, part[t].sum, part[t].m2);
                    wx += part[t].wx;
                    part[t + 1].offset = part[t].offset + part[t].sum;
                }
                total = part[k].offset; /* the offsets' own sum: the last thread ends on it */
                estimates[step] = wx / total;
                ess_out[step] = total * total / (m2 + total * total / (double)n);
                const uint64_t s_k = pf_bits(s_res, (uint64_t)step, 0);
                if (method == METHOD_UPHILL) {
                    double ssd = m2 * ((double)n / total) * ((double)n / total); /* eq. 6.5 */
                    B = find_B(table, table_len, ssd);
                    B_out[step] = B;
                } else {
                    u = pf_uniform(s_k, 0, 1);
                    last = last_positive(w, n);
                    B_out[step] = -1;
                }
                double now = omp_get_wtime();
                stage_seconds[4 * step + 1] = now - stamp;
                stage_seconds[4 * step + 2] = 0.0;
                stamp = now;
            }
            /* stage 4: resampling with the gather fused in */
            if (method == METHOD_UPHILL) {
                uphill_range(w, n, B, pf_bits(s_res, (uint64_t)step, 0), lo, hi, xc, xn, NULL,
                             flaw);
            } else {
                systematic_range(w, n, u, total, last, lo, hi, part[tid].offset,
                                 part[tid + 1].offset, xc, xn, NULL);
            }
#pragma omp barrier
#pragma omp single
            {
                float *swap = x;
                x = xn;
                xn = swap;
                stage_seconds[4 * step + 3] = omp_get_wtime() - stamp;
            }
        }
    }
    free(part);
    return OK;
}

/* --- entry points for the tests ------------------------------------------------------- */

/* Algorithm 6.1 as the library's NumPy Uphill runs it, on given draws: draws[i * B + m] is
 * particle i's 32-bit draw for candidate m (the library's Philox particle stream at
 * counter m). One thread, the plain loop: the reference the tiled code is checked to. */
int uphill_from_draws(const float *w, int64_t n, int B, const uint32_t *draws, int flaw,
                      int32_t *anc) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    if (B < 0) return ERR_B;
    for (int64_t i = 0; i < n; ++i) {
        int32_t t = (int32_t)i;
        float wt = w[i];
        for (int m = 0; m < B; ++m) {
            int32_t j = candidate(draws[i * B + m], n);
            uphill_take(&t, &wt, j, w[j], flaw);
        }
        anc[i] = t;
    }
    return OK;
}

/* The draws the filter's Uphill makes at a step whose seed is step_seed, laid out as
 * uphill_from_draws takes them. */
int uphill_draws(uint64_t step_seed, int64_t n, int B, uint32_t *draws) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    if (B < 0) return ERR_B;
    for (int64_t i = 0; i < n; ++i)
        for (int m = 0; m < B; ++m) {
            uint64_t bits = pf_bits(step_seed, (uint64_t)i, (uint64_t)(m >> 1));
            draws[i * B + m] = (uint32_t)(m & 1 ? bits >> 32 : bits);
        }
    return OK;
}

/* The filter's stage-4 Uphill (tiles, threads) writing ancestors. */
int uphill_resample(const float *w, int64_t n, int B, uint64_t step_seed, int threads,
                    int flaw, int32_t *anc) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    if (B < 0) return ERR_B;
    if (threads < 1 || threads > MAX_THREADS) return ERR_THREADS;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), k = omp_get_num_threads();
        uphill_range(w, n, B, step_seed, n * t / k, n * (t + 1) / k, NULL, NULL, anc, flaw);
    }
    return OK;
}

/* The filter's stage-4 Systematic (per-thread block sums in double, then each thread's
 * scan and slots) writing ancestors, with the given u. Where no weight is positive every
 * ancestor is 0 (the library's resamplers refuse such weights before). */
int systematic_resample(const float *w, int64_t n, double u, int threads, int32_t *anc) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    if (threads < 1 || threads > MAX_THREADS) return ERR_THREADS;
    partial_t *part = aligned_alloc(64, sizeof(partial_t) * (MAX_THREADS + 1));
    if (!part) return ERR_ALLOC;
    block_offsets(w, n, threads, part);
    double total = part[threads].offset;
    int64_t last = last_positive(w, n);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), k = omp_get_num_threads();
        systematic_range(w, n, u, total, last, n * t / k, n * (t + 1) / k, part[t].offset,
                         part[t + 1].offset, NULL, NULL, anc);
    }
    free(part);
    return OK;
}

/* Algorithms 3.1-3.2 on given ratios r_i = N C_i / C_N (the library's scaled_prefix_sum)
 * and its `last`: O_i = min(N, floor(r_i + u)), O = N from `last` on, slot k's ancestor the
 * first i with O_i > k. One thread. */
int systematic_from_ratios(const double *r, int64_t n, double u, int64_t last, int32_t *anc) {
    if (n < 1 || n > INT32_MAX) return ERR_N;
    int64_t o_prev = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t o = n;
        if (i < last) {
            o = (int64_t)(r[i] + u);
            o = o < n ? o : n;
        }
        for (int64_t k = o_prev; k < o; ++k) anc[k] = (int32_t)i;
        if (o > o_prev) o_prev = o;
    }
    return OK;
}

/* --- the bounds the bench holds the filter to ------------------------------------------ */

/* pf_stream_copy on the caller's arrays (its bytes read and written a second: the bound). */
void stream_copy(double *dst, const double *src, int64_t n, int rounds, int threads) {
    pf_stream_copy(dst, src, n, rounds, threads);
}

/* Uphill's memory traffic without its bookkeeping: `rounds` times (as a run's steps, a
 * round's draws its own), `per_particle` random loads of w (n floats) a particle, with
 * the filter's draws, tiles and thread ranges inside one parallel region; only their
 * maximum is kept (no index, no state gather), the maxima's sum returned so that the
 * loads happen. The candidates a second this reaches bound Uphill's stage 4, which also
 * keeps the index and gathers the states. */
double gather_bound(const float *w, int64_t n, int per_particle, int rounds, uint64_t seed,
                    int threads) {
    double total = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        int t = omp_get_thread_num(), k = omp_get_num_threads();
        int64_t lo = n * t / k, hi = n * (t + 1) / k;
        uint64_t key[TILE];
        float acc[TILE];
        for (int r = 0; r < rounds; ++r) {
            uint64_t base = pf_mix64(pf_bits(seed, (uint64_t)r, 0));
            for (int64_t i0 = lo; i0 < hi; i0 += TILE) {
                int len = (int)(hi - i0 < TILE ? hi - i0 : TILE);
#pragma omp simd
                for (int l = 0; l < len; ++l) {
                    key[l] = pf_mix64(base ^ (uint64_t)(i0 + l));
                    acc[l] = 0.0f;
                }
                for (int m = 0; m + 1 < per_particle; m += 2) {
                    uint64_t c = (uint64_t)(m >> 1);
#pragma omp simd
                    for (int l = 0; l < len; ++l) {
                        uint64_t bits = pf_mix64(key[l] ^ c);
                        float w0 = w[candidate((uint32_t)bits, n)];
                        float w1 = w[candidate((uint32_t)(bits >> 32), n)];
                        float m01 = w0 > w1 ? w0 : w1;
                        acc[l] = acc[l] > m01 ? acc[l] : m01;
                    }
                }
                for (int l = 0; l < len; ++l) total += acc[l];
            }
#pragma omp barrier
        }
    }
    return total;
}
