/* Das, Mazumdar & Banerjee (2014), Table 5: the best CPU code we can write for its two
 * filters on the UUV model (eqs. 11-12), on every core -- the SIR filter with
 * systematic resampling and the D3 filter (§3.1, eqs. 1-6, Table 1) -- as
 * filters/d3.py and resampling/d3.py define them, whole runs of T steps in one call.
 *
 * One OpenMP team for the whole run: its threads are made (and the buffers first
 * touched by the thread that uses them) before the clock starts; a step is a few
 * passes over per-thread blocks of the particles, separated by barriers:
 *
 *   1. propagate and weight, fused per particle (eqs. 11-12; the DVL likelihood, §3.2),
 *      the block's maximum log-likelihood (and for D3 the sums of eq. 2 about the
 *      prior mean mu_k = f(x^_{k-1}));                                      barrier
 *   2. w~ = float32(exp(l - max)) (Das et al.'s float32 weights, D3_OPTIONS) by a
 *      vectorised exp; the block's sums for the estimate x^_k = sum w~ x / sum w~
 *      (eq. 13); the block's running sum of w~ (one sequential pass); D3: the prior
 *      log-weights of eq. 4;                                                barrier
 *   3. the block offsets (sequential over the threads, the same on every thread) added
 *      to the block's running sums: the prefix sum C;                       barrier
 *   4. the strides over a block of *slots* (each thread finds its first by binary
 *      search, then walks): SIR copies x[j_i] into slot i (systematic resampling); D3
 *      takes the first maxima of w and pw over R_i = [min(i, j_i), max(i, j_i)] by a
 *      sliding window (the ranges' ends never decrease, so the maxima of all N ranges
 *      cost O(N): Table 1's scan is O(N + sum |j_i - i|), the library's sparse table
 *      O(N log L)) and makes move (a) of eq. 5;                             barrier (D3)
 *   5. D3: move (b) of eq. 6 by each slot that is the last to claim its j_i. barrier (D3)
 *
 * SIR needs no barrier at the end of a step: the predicted particles alternate between
 * two buffers, so step k + 1's pass 1 writes the buffer that no thread reads in step k's
 * pass 4. D3's pass 5 writes any particle, so the next step waits for it.
 *
 * Conventions (what the tests compare against NumPy, exactly):
 * - C_i: within a thread's block the sequential running sum of w~ from the block's
 *   start, plus the block's offset (the sequential sum of the earlier blocks' totals).
 *   On one thread this is numpy.cumsum's sequence; on more, exact wherever the sums are
 *   (integer weights); its total is the last C.
 * - Systematic (Kitagawa 1996; Table 1's "u = u1 + (i - 1)/N; WHILE (u > CSW[j])"):
 *   slot i takes the first j with C_j > (i + u) C_N / N, at most the last positive
 *   weight; u in [0, 1).
 * - The paper's GPU thresholds (Figs 8-9, resampling.d3.paper_thresholds): slot i takes
 *   the first j with C_j / C_N >= u_i, at most the last positive weight.
 * - D3's ranges, moves and claims: resampling/d3.py's contract (first index of the
 *   maximum, strict >; moves read the predicted particles; move (b) of the last slot
 *   claiming j overwrites move (a) there); the noises in d3.NOISES's order.
 * Random numbers in whole runs: pf_cpu.h's counter-based generator (seed, stream,
 * counter), so a run's particles do not depend on the thread count's schedule -- only
 * on the prefix sum's rounding, as the header says. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include "pf_cpu.h"

#include <stdlib.h>
#include <string.h>

enum { KIND_SIR = 0, KIND_D3 = 1 };
enum { CDF_PREFIX = 0, CDF_PAPER = 1 };
enum { NOISE_EQ5 = 0, NOISE_TABLE1, NOISE_FIG9, NOISE_BETWEEN, NOISE_FIG9NEG, NOISES };
/* Deliberate errors for the tests' negative controls: particle i weighted by particle
 * i + N/2's likelihood (mod N: half a cloud away, so that resampled copies, which sit
 * side by side, do not hide it), and D3's ranges with their last particle left out. */
enum { FLAW_NONE = 0, FLAW_SHIFTED_WEIGHTS = 1, FLAW_OPEN_RANGE = 2, FLAWS };

#define PART 8                                /* doubles a thread's partials take: one line */
#define STREAM_GLOBAL 0xFFFFFFFFFFFFFFFFull   /* the stride's u of a step */
#define STREAM_BLOCKS 0x4000000000000000ull   /* + b: the paper's U_b of block b */
#define DRAWS 16                              /* counters a step: 16 k + draw */

/* exp(x) for x <= 0 in double, vectorisable (no libm call in the loop): x = k ln 2 + r,
 * |r| <= ln 2 / 2, exp(r) by its Taylor series to r^12 (relative error below 1e-14,
 * far below the float32 rounding that follows), times 2^k built in the exponent bits.
 * Below -745 (where libm's is 0) it is exp(-745), 5e-324, which float32 rounds to 0 as
 * it does libm's; no branch, so that the loops that call it vectorise. */
static inline double exp_neg(double x) {
    const double log2e = 1.4426950408889634, ln2_hi = 0.6931471803691238,
                 ln2_lo = 1.9082149292705877e-10, shifter = 0x1.8p52;
    double xc = x > -745.0 ? x : -745.0; /* a select under -fno-trapping-math */
    double t = xc * log2e + shifter; /* the nearest integer k in t's low mantissa bits */
    double kd = t - shifter;
    double r = (xc - kd * ln2_hi) - kd * ln2_lo;
    double p = 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* k >= -1075 here; the scale 2^k must be a normal double: split it in two halves */
    int64_t k = (int64_t)kd, k1 = k / 2, k2 = k - k1;
    int64_t e1 = (k1 + 1023) << 52, e2 = (k2 + 1023) << 52;
    union { int64_t i; double d; } s1 = {.i = e1}, s2 = {.i = e2};
    return p * s1.d * s2.d;
}

/* The D3 moves of eqs. 5-6 and their printed variants (resampling.d3.move, the same
 * operations in the same order; -std=c11 keeps them unfused). */
static inline double d3_move(double to, double from, double u, int noise) {
    double d = to - from, half;
    switch (noise) {
    case NOISE_EQ5:
        return to + u * fabs(d);
    case NOISE_TABLE1:
        return to + u * d;
    case NOISE_FIG9:
        half = d * 0.5;
        return (to + half) + half * u;
    case NOISE_BETWEEN:
        return to - u * d;
    default: /* fig9neg */
        half = (from - to) * 0.5;
        return (to + half) + half * u;
    }
}

/* pf_uniform(seed, i, counter) and pf_normal(seed, i, counter) from particle i's stream
 * key pf_mix64(pf_mix64(seed) ^ i), which a run computes once: the same bits with one
 * mix a draw instead of three (pf_cpu.h's pf_bits, its first two mixes hoisted). */
static inline double key_uniform(uint64_t key, uint64_t counter) {
    return (double)(pf_mix64(key ^ counter) >> 11) * 0x1.0p-53;
}

static inline double key_normal(uint64_t key, uint64_t counter) {
    double u1 = 1.0 - key_uniform(key, counter);
    double u2 = key_uniform(key, counter + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Pass 2's running sum of a block: c[i] = w[lo] + ... + w[i] (sequential); the block's
 * total in *sum and its last positive weight's index (or -1) in *lastpos. */
static inline void scan_block(const double *w, double *c, int64_t lo, int64_t hi, double *sum,
                              int64_t *lastpos) {
    double s = 0.0;
    int64_t last = -1;
    for (int64_t i = lo; i < hi; ++i) {
        s += w[i];
        c[i] = s;
        if (w[i] > 0.0) last = i;
    }
    *sum = s;
    *lastpos = last;
}

/* Pass 3: thread t's offset, the total and the last positive weight from the partials
 * (sums at part[PART u], last positive at part[PART u + 1]), the same on every thread. */
static inline void block_offsets(const double *part, int nt, int t, double *offset,
                                 double *total, int64_t *lastpos) {
    double s = 0.0;
    int64_t last = -1;
    for (int u = 0; u < nt; ++u) {
        if (u == t) *offset = s;
        s += part[PART * u];
        if ((int64_t)part[PART * u + 1] > last) last = (int64_t)part[PART * u + 1];
    }
    *total = s;
    *lastpos = last;
}

/* The first j with c[j] > target (n if none): c non-decreasing. */
static inline int64_t first_above(const double *c, int64_t n, double target) {
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (c[m] > target) b = m; else a = m + 1;
    }
    return a;
}

/* The first j with c[j] / total >= u (n if none): c / total non-decreasing. */
static inline int64_t first_at_least(const double *c, int64_t n, double total, double u) {
    int64_t a = 0, b = n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (c[m] / total >= u) b = m; else a = m + 1;
    }
    return a;
}

/* Systematic strides of slots lo ... hi - 1 (the header's convention, capped at lastpos):
 * the first by binary search, the rest by walking. */
static inline void systematic_slots(const double *c, int64_t n, double total, int64_t lastpos,
                                    double u, int64_t lo, int64_t hi, int32_t *j_out) {
    if (lo >= hi) return;
    const double step = total / (double)n;
    int64_t j = first_above(c, n, ((double)lo + u) * step);
    if (j > lastpos) j = lastpos;
    for (int64_t i = lo; i < hi; ++i) {
        const double target = ((double)i + u) * step;
        while (j < lastpos && c[j] <= target) ++j;
        j_out[i] = (int32_t)j;
    }
}

/* The paper's threshold of slot i (resampling.d3.paper_thresholds, Figs 8-9, in its
 * order of operations), U_b its block's uniform. */
static inline double paper_threshold(int64_t i, int64_t n, int64_t block, double ub) {
    const double count = (double)n, temp = 1.0 / count;
    const int64_t first = (i / block) * block;
    const double r = temp / 2.0 + (temp / 2.0) * ub;
    const double u1 = (r / count) / 2.0 + ((double)first / count) / 2.0;
    if (i == first) return u1;
    return (u1 / count) / 2.0 + ((double)i / count) / 2.0;
}

/* The paper's strides of slots lo ... hi - 1: thresholds from `thr` where given, else
 * from U_b = pf_uniform(seed, STREAM_BLOCKS + b, counter); capped at lastpos. The
 * thresholds rise with i, so the walk goes forward only. */
static inline void paper_slots(const double *c, int64_t n, double total, int64_t lastpos,
                               const double *thr, int64_t block, uint64_t seed,
                               uint64_t counter, int64_t lo, int64_t hi, int32_t *j_out) {
    if (lo >= hi) return;
    int64_t b = -1;
    double ub = 0.0, u;
    int64_t j = -1;
    for (int64_t i = lo; i < hi; ++i) {
        if (thr) {
            u = thr[i];
        } else {
            if (i / block != b) {
                b = i / block;
                ub = pf_uniform(seed, STREAM_BLOCKS + (uint64_t)b, counter);
            }
            u = paper_threshold(i, n, block, ub);
        }
        if (j < 0) {
            j = first_at_least(c, n, total, u);
            if (j > lastpos) j = lastpos;
        }
        while (j < lastpos && !(c[j] / total >= u)) ++j;
        j_out[i] = (int32_t)j;
    }
}

/* D3's range maxima for slots lo ... hi - 1 (resampling.d3.plan's l_i and p_i): the
 * first index of the maximum of w and of pw over R_i = [min(i, j_i), max(i, j_i)]. The
 * ranges' ends do not decrease with i (j_i does not), so the window slides: a queue of
 * two stacks (the front [a, m) with its suffix maxima, the back [m, b] with its running
 * maximum; when the front empties, one backward scan of the back makes it the front).
 * Every particle is pushed once and scanned once: O(hi - lo + the first range's length),
 * and the inner loops are compare-and-select, without the monotone deque's
 * unpredictable pops. Ties go to the first index: the suffix scan keeps the earlier on
 * >=, the running maximum the earlier on >, and the back (later particles) wins only
 * when strictly greater. buf: 2 (n + 1) ints, the suffix maxima by particle index. */
static inline void range_maxima(const double *w, const double *pw, const int32_t *jj,
                                int64_t lo, int64_t hi, int64_t n, int32_t *buf, int flaw,
                                int32_t *l_out, int32_t *p_out) {
    int32_t *sw = buf, *sp = buf + (n + 1);
    int64_t m = -1, next = -1; /* front [a, m), back [m, next) */
    int64_t bw = -1, bp = -1;  /* the back's first maxima, -1 while it is empty */
    for (int64_t i = lo; i < hi; ++i) {
        const int64_t j = jj[i];
        const int64_t a = i < j ? i : j;
        int64_t b = i < j ? j : i;
        if (flaw == FLAW_OPEN_RANGE && b > a) --b;
        if (a >= next) { /* no pushed particle in the range: start afresh at a */
            m = next = a;
            bw = bp = -1;
        }
        for (; next <= b; ++next) {
            if (bw < 0 || w[next] > w[bw]) bw = next;
            if (bp < 0 || pw[next] > pw[bp]) bp = next;
        }
        if (a >= m) { /* the front is empty: the back [a, next) becomes it */
            int64_t cw = next - 1, cp = next - 1;
            double vw = w[cw], vp = pw[cp];
            for (int64_t q = next - 1; q >= a; --q) {
                if (w[q] >= vw) { vw = w[q]; cw = q; }
                if (pw[q] >= vp) { vp = pw[q]; cp = q; }
                sw[q] = (int32_t)cw;
                sp[q] = (int32_t)cp;
            }
            m = next;
            bw = bp = -1;
        }
        int64_t lw = sw[a], lp = sp[a];
        if (bw >= 0 && w[bw] > w[lw]) lw = bw;
        if (bp >= 0 && pw[bp] > pw[lp]) lp = bp;
        l_out[i] = (int32_t)lw;
        p_out[i] = (int32_t)lp;
    }
}

/* Move (a) of eq. 5 for slots lo ... hi - 1, each state component: out[i] =
 * move(x[p_i], x[i], ua). Uniforms from ua (N x 2, row-major) where given, else
 * key_uniform(key[i], counter + 2 d). One loop a noise, so that each vectorises. */
#define MOVES_A(NOISE)                                                                     \
    _Pragma("omp simd") for (int64_t i = lo; i < hi; ++i) {                                \
        const double u0 = key_uniform(key[i], counter);                                    \
        const double u1 = key_uniform(key[i], counter + 2);                                \
        o0[i] = d3_move(x0[p[i]], x0[i], u0, NOISE);                                       \
        o1[i] = d3_move(x1[p[i]], x1[i], u1, NOISE);                                       \
    }
static inline void moves_a(const double *x0, const double *x1, const int32_t *p,
                           const double *ua, const uint64_t *key, uint64_t counter, int noise,
                           int64_t lo, int64_t hi, double *o0, double *o1) {
    if (ua) {
        for (int64_t i = lo; i < hi; ++i) {
            o0[i] = d3_move(x0[p[i]], x0[i], ua[2 * i], noise);
            o1[i] = d3_move(x1[p[i]], x1[i], ua[2 * i + 1], noise);
        }
        return;
    }
    switch (noise) {
    case NOISE_EQ5: MOVES_A(NOISE_EQ5) break;
    case NOISE_TABLE1: MOVES_A(NOISE_TABLE1) break;
    case NOISE_FIG9: MOVES_A(NOISE_FIG9) break;
    case NOISE_BETWEEN: MOVES_A(NOISE_BETWEEN) break;
    default: MOVES_A(NOISE_FIG9NEG) break;
    }
}

/* Move (b) of eq. 6 by slots lo ... hi - 1 that are the last to claim their j_i
 * (j_{i+1} != j_i, or i = N - 1): out[j_i] = move(x[l_i], x[j_i], ub). */
static inline void moves_b(const double *x0, const double *x1, const int32_t *jj,
                           const int32_t *l, const double *ub, const uint64_t *key,
                           uint64_t counter, int noise, int64_t lo, int64_t hi, int64_t n,
                           double *o0, double *o1) {
    for (int64_t i = lo; i < hi; ++i) {
        if (i + 1 < n && jj[i + 1] == jj[i]) continue;
        const int64_t j = jj[i];
        const double u0 = ub ? ub[2 * i] : key_uniform(key[i], counter + 1);
        const double u1 = ub ? ub[2 * i + 1] : key_uniform(key[i], counter + 3);
        o0[j] = d3_move(x0[l[i]], x0[j], u0, noise);
        o1[j] = d3_move(x1[l[i]], x1[j], u1, noise);
    }
}

static void *alloc64(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return NULL;
    return p;
}

static int team_size(int threads) {
    return threads > 0 ? threads : omp_get_max_threads();
}

/* ---- one resampling on given weights: what the tests compare exactly ----------- */

/* Systematic resampling of w (n) with u in [0, 1): ancestors (n). Returns 0, or -1 for
 * bad arguments (n < 1, a weight negative or not finite, no positive weight). */
int d3best_systematic(const double *w_in, int64_t n, double u, int32_t *ancestors,
                      int threads, int flaw) {
    if (n < 1 || n > INT32_MAX || !(u >= 0.0 && u < 1.0) || flaw < 0 || flaw >= FLAWS)
        return -1;
    for (int64_t i = 0; i < n; ++i)
        if (!(w_in[i] >= 0.0) || !isfinite(w_in[i])) return -1;
    const int nt = team_size(threads);
    double *w = alloc64(sizeof(double) * n), *c = alloc64(sizeof(double) * n);
    double *part = alloc64(sizeof(double) * PART * nt);
    int status = 0;
    if (!w || !c || !part) {
        status = -2;
        goto done;
    }
    for (int64_t i = 0; i < n; ++i)
        w[i] = flaw == FLAW_SHIFTED_WEIGHTS ? w_in[(i + n / 2) % n] : w_in[i];
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), k = omp_get_num_threads();
        const int64_t lo = n * t / k, hi = n * (t + 1) / k;
        double sum, offset = 0.0, total;
        int64_t last;
        scan_block(w, c, lo, hi, &sum, &last);
        part[PART * t] = sum;
        part[PART * t + 1] = (double)last;
#pragma omp barrier
        block_offsets(part, k, t, &offset, &total, &last);
        if (t > 0)
            for (int64_t i = lo; i < hi; ++i) c[i] += offset;
#pragma omp barrier
        if (last < 0) {
            if (t == 0) status = -1;
        } else {
            systematic_slots(c, n, total, last, u, lo, hi, ancestors);
        }
    }
done:
    free(w);
    free(c);
    free(part);
    return status;
}

/* One D3 resampling (resampling.d3.d3's contract) of particles x (n x 2, row-major) with
 * likelihood weights w and prior (log-)weights pw. The strides: j_in where given, else
 * cdf PREFIX with u (systematic) or PAPER with the thresholds thr (n). Uniforms ua, ub
 * (n x 2). Writes out (n x 2) and, where given, j_out, l_out, p_out (n). Returns 0, or
 * -1 for bad arguments. */
int d3best_d3(const double *x, const double *w, const double *pw, int64_t n, int cdf, double u,
              const double *thr, const int32_t *j_in, const double *ua, const double *ub,
              int noise, int threads, int flaw, double *out, int32_t *j_out, int32_t *l_out,
              int32_t *p_out) {
    if (n < 1 || n > INT32_MAX - 1 || cdf < 0 || cdf > CDF_PAPER || noise < 0 ||
        noise >= NOISES || flaw < 0 || flaw >= FLAWS || !ua || !ub)
        return -1;
    if (!j_in && ((cdf == CDF_PREFIX && !(u >= 0.0 && u < 1.0)) || (cdf == CDF_PAPER && !thr)))
        return -1;
    for (int64_t i = 0; i < n; ++i) {
        if (!(w[i] >= 0.0) || !isfinite(w[i]) || !isfinite(pw[i])) return -1;
        if (j_in && (j_in[i] < 0 || j_in[i] >= n || (i > 0 && j_in[i] < j_in[i - 1]))) return -1;
    }
    const int nt = team_size(threads);
    double *x0 = alloc64(sizeof(double) * n), *x1 = alloc64(sizeof(double) * n);
    double *o0 = alloc64(sizeof(double) * n), *o1 = alloc64(sizeof(double) * n);
    double *ws = alloc64(sizeof(double) * n), *c = alloc64(sizeof(double) * n);
    double *part = alloc64(sizeof(double) * PART * nt);
    int32_t *jj = alloc64(sizeof(int32_t) * n), *l = alloc64(sizeof(int32_t) * n);
    int32_t *p = alloc64(sizeof(int32_t) * n);
    int32_t *dq = alloc64(sizeof(int32_t) * 2 * (size_t)(n + 1) * nt);
    int status = 0;
    if (!x0 || !x1 || !o0 || !o1 || !ws || !c || !part || !jj || !l || !p || !dq) {
        status = -2;
        goto done;
    }
    for (int64_t i = 0; i < n; ++i) {
        x0[i] = x[2 * i];
        x1[i] = x[2 * i + 1];
        ws[i] = flaw == FLAW_SHIFTED_WEIGHTS ? w[(i + n / 2) % n] : w[i];
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), k = omp_get_num_threads();
        const int64_t lo = n * t / k, hi = n * (t + 1) / k;
        double sum, offset = 0.0, total;
        int64_t last;
        scan_block(ws, c, lo, hi, &sum, &last);
        part[PART * t] = sum;
        part[PART * t + 1] = (double)last;
#pragma omp barrier
        block_offsets(part, k, t, &offset, &total, &last);
        if (t > 0)
            for (int64_t i = lo; i < hi; ++i) c[i] += offset;
#pragma omp barrier
        if (last < 0 && !j_in) {
            if (t == 0) status = -1;
        } else {
            if (j_in)
                for (int64_t i = lo; i < hi; ++i) jj[i] = j_in[i];
            else if (cdf == CDF_PREFIX)
                systematic_slots(c, n, total, last, u, lo, hi, jj);
            else
                paper_slots(c, n, total, last, thr, 1, 0, 0, lo, hi, jj);
        }
#pragma omp barrier
        if (status == 0) {
            range_maxima(ws, pw, jj, lo, hi, n, dq + 2 * (size_t)(n + 1) * t, flaw, l, p);
            moves_a(x0, x1, p, ua, NULL, 0, noise, lo, hi, o0, o1);
        }
#pragma omp barrier
        if (status == 0) moves_b(x0, x1, jj, l, ub, NULL, 0, noise, lo, hi, n, o0, o1);
    }
    if (status == 0)
        for (int64_t i = 0; i < n; ++i) {
            out[2 * i] = o0[i];
            out[2 * i + 1] = o1[i];
            if (j_out) j_out[i] = jj[i];
            if (l_out) l_out[i] = l[i];
            if (p_out) p_out[i] = p[i];
        }
done:
    free(x0); free(x1); free(o0); free(o1); free(ws); free(c); free(part);
    free(jj); free(l); free(p); free(dq);
    return status;
}

/* ---- whole runs ------------------------------------------------------------------- */

/* A run of the SIR (kind 0) or D3 (kind 1) filter over `steps` steps of the UUV model:
 * F (steps x 4: F_k row-major) and b (steps x 2) of eqs. 11-12 (UuvModel.matrices), the
 * DVL readings y (steps x 2) with noise mean obs_mean and variance obs_var, the filter's
 * process noise sd (0: the paper's regime), the initial particles x (n x 2, row-major;
 * the final ones written back), every step resampled. Writes the estimates est (steps x
 * 2, x^_k before resampling, eq. 13) and seconds[0] = the run's wall time (the team
 * made, the buffers touched), seconds[1] = the time of steps skip + 1 ... steps (the
 * window the CPU baselines time). D3: cdf PREFIX or PAPER (thresholds of `block`
 * threads a block), noise one of d3.NOISES. Returns 0; -1 for bad arguments; -2 when
 * memory runs out; -3 when a step's weights are all zero. */
int d3best_run(int kind, int64_t n, int64_t steps, int64_t skip, const double *F,
               const double *B, const double *Y, double obs_mean, double obs_var, double sd,
               double *x, double *est, int cdf, int noise, int64_t block, uint64_t seed,
               int threads, int flaw, double *seconds) {
    if (kind < KIND_SIR || kind > KIND_D3 || n < 1 || n > INT32_MAX - 1 || steps < 1 ||
        skip < 0 || skip >= steps || !(obs_var > 0.0) || !(sd >= 0.0) || !isfinite(sd) ||
        cdf < 0 || cdf > CDF_PAPER || noise < 0 || noise >= NOISES || block < 1 || flaw < 0 ||
        flaw >= FLAWS)
        return -1;
    for (int64_t i = 0; i < 2 * n; ++i)
        if (!isfinite(x[i])) return -1;
    const int nt = team_size(threads);
    const int d3 = kind == KIND_D3;
    double *cur0 = alloc64(sizeof(double) * n), *cur1 = alloc64(sizeof(double) * n);
    double *pr[2][2] = {{alloc64(sizeof(double) * n), alloc64(sizeof(double) * n)},
                        {alloc64(sizeof(double) * n), alloc64(sizeof(double) * n)}};
    double *ll = alloc64(sizeof(double) * n), *w = alloc64(sizeof(double) * n);
    double *c = alloc64(sizeof(double) * n), *pw = d3 ? alloc64(sizeof(double) * n) : NULL;
    double *part = alloc64(sizeof(double) * PART * nt);
    int32_t *jj = alloc64(sizeof(int32_t) * n);
    uint64_t *key = alloc64(sizeof(uint64_t) * n);
    int32_t *l = d3 ? alloc64(sizeof(int32_t) * n) : NULL;
    int32_t *p = d3 ? alloc64(sizeof(int32_t) * n) : NULL;
    int32_t *dq = d3 ? alloc64(sizeof(int32_t) * 2 * (size_t)(n + 1) * nt) : NULL;
    int status = 0;
    double start = omp_get_wtime(), window = 0.0, stop;
    if (!cur0 || !cur1 || !pr[0][0] || !pr[0][1] || !pr[1][0] || !pr[1][1] || !ll || !w ||
        !c || !part || !jj || !key || (d3 && (!pw || !l || !p || !dq))) {
        status = -2;
        goto done;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), k = omp_get_num_threads();
        const int64_t lo = n * t / k, hi = n * (t + 1) / k;
        double xhat0 = 0.0, xhat1 = 0.0; /* x^_{k-1}, the same on every thread */
        /* first touch by the thread that works on the block; the initial mean */
        for (int64_t i = lo; i < hi; ++i) {
            cur0[i] = x[2 * i];
            cur1[i] = x[2 * i + 1];
            pr[0][0][i] = pr[0][1][i] = pr[1][0][i] = pr[1][1][i] = 0.0;
            ll[i] = w[i] = c[i] = 0.0;
            if (d3) pw[i] = 0.0;
            jj[i] = 0;
            key[i] = pf_mix64(pf_mix64(seed) ^ (uint64_t)i);
        }
        {
            double s0 = 0.0, s1 = 0.0;
            for (int64_t i = lo; i < hi; ++i) {
                s0 += cur0[i];
                s1 += cur1[i];
            }
            part[PART * t + 2] = s0;
            part[PART * t + 3] = s1;
        }
#pragma omp barrier
        for (int u = 0; u < k; ++u) {
            xhat0 += part[PART * u + 2];
            xhat1 += part[PART * u + 3];
        }
        xhat0 /= (double)n;
        xhat1 /= (double)n;
#pragma omp barrier
        if (t == 0) start = omp_get_wtime();
        for (int64_t s = 0; s < steps; ++s) {
            if (s == skip) {
#pragma omp barrier
                if (t == 0) window = omp_get_wtime();
            }
            double *p0 = pr[s & 1][0], *p1 = pr[s & 1][1];
            const double f00 = F[4 * s], f01 = F[4 * s + 1], f10 = F[4 * s + 2],
                         f11 = F[4 * s + 3], b0 = B[2 * s], b1 = B[2 * s + 1];
            const double y0 = Y[2 * s] - obs_mean, y1 = Y[2 * s + 1] - obs_mean;
            const uint64_t ctr = (uint64_t)s * DRAWS;
            /* eq. 2-4's prior mean: the previous estimate through the noise-free model */
            const double mu0 = f00 * xhat0 + f01 * xhat1 + b0, mu1 = f10 * xhat0 + f11 * xhat1 + b1;
            /* pass 1: propagate (eqs. 11-12) and weight (the DVL likelihood), fused */
            double mx = -INFINITY, v0 = 0.0, v1 = 0.0;
            if (sd > 0.0) {
                for (int64_t i = lo; i < hi; ++i) {
                    const double a0 = f00 * cur0[i] + f01 * cur1[i] + b0 +
                                      sd * key_normal(key[i], ctr);
                    const double a1 = f10 * cur0[i] + f11 * cur1[i] + b1 +
                                      sd * key_normal(key[i], ctr + 2);
                    p0[i] = a0;
                    p1[i] = a1;
                }
            } else {
#pragma omp simd
                for (int64_t i = lo; i < hi; ++i) {
                    p0[i] = f00 * cur0[i] + f01 * cur1[i] + b0;
                    p1[i] = f10 * cur0[i] + f11 * cur1[i] + b1;
                }
            }
#pragma omp simd reduction(max : mx) reduction(+ : v0, v1)
            for (int64_t i = lo; i < hi; ++i) {
                const double r0 = y0 - p0[i], r1 = y1 - p1[i];
                const double v = (-0.5 * (r0 * r0)) / obs_var + (-0.5 * (r1 * r1)) / obs_var;
                ll[i] = v;
                mx = v > mx ? v : mx;
                const double d0 = p0[i] - mu0, d1 = p1[i] - mu1;
                v0 += d0 * d0;
                v1 += d1 * d1;
            }
            part[PART * t] = mx;
            part[PART * t + 1] = v0;
            part[PART * t + 2] = v1;
#pragma omp barrier
            double top = -INFINITY, var0 = 0.0, var1 = 0.0;
            for (int u = 0; u < k; ++u) {
                top = part[PART * u] > top ? part[PART * u] : top;
                var0 += part[PART * u + 1];
                var1 += part[PART * u + 2];
            }
            var0 /= (double)(n > 1 ? n - 1 : 1);
            var1 /= (double)(n > 1 ? n - 1 : 1);
            const double inv0 = var0 > 0.0 ? 1.0 / var0 : 0.0, inv1 = var1 > 0.0 ? 1.0 / var1 : 0.0;
            /* pass 2: float32 weights (vectorised exp), the estimate's sums, eq. 4 */
            double e0 = 0.0, e1 = 0.0;
            if (flaw == FLAW_SHIFTED_WEIGHTS) {
                for (int64_t i = lo; i < hi; ++i)
                    w[i] = (double)(float)exp_neg(ll[(i + n / 2) % n] - top);
            } else {
#pragma omp simd
                for (int64_t i = lo; i < hi; ++i) w[i] = (double)(float)exp_neg(ll[i] - top);
            }
#pragma omp simd reduction(+ : e0, e1)
            for (int64_t i = lo; i < hi; ++i) {
                e0 += w[i] * p0[i];
                e1 += w[i] * p1[i];
            }
            if (d3) {
#pragma omp simd
                for (int64_t i = lo; i < hi; ++i) {
                    const double d0 = p0[i] - mu0, d1 = p1[i] - mu1;
                    pw[i] = -0.5 * (d0 * d0 * inv0 + d1 * d1 * inv1);
                }
            }
            double sum;
            int64_t last;
            scan_block(w, c, lo, hi, &sum, &last);
            /* pass 2's partials in the line's second half: pass 1's (first half) may
             * still be read by a thread that has not left the barrier's far side */
            part[PART * t + 4] = sum;
            part[PART * t + 5] = (double)last;
            part[PART * t + 6] = e0;
            part[PART * t + 7] = e1;
#pragma omp barrier
            double offset = 0.0, total;
            block_offsets(part + 4, k, t, &offset, &total, &last);
            double se0 = 0.0, se1 = 0.0;
            for (int u = 0; u < k; ++u) {
                se0 += part[PART * u + 6];
                se1 += part[PART * u + 7];
            }
            if (!(total > 0.0) || last < 0) {
                if (t == 0) status = -3;
#pragma omp barrier
                break;
            }
            xhat0 = se0 / total;
            xhat1 = se1 / total;
            if (t == 0) {
                est[2 * s] = xhat0;
                est[2 * s + 1] = xhat1;
            }
            /* pass 3: the block's offset: the prefix sum */
            if (t > 0) {
#pragma omp simd
                for (int64_t i = lo; i < hi; ++i) c[i] += offset;
            }
#pragma omp barrier
            /* pass 4: the strides of this thread's slots */
            if (!d3) {
                const double u = pf_uniform(seed, STREAM_GLOBAL, (uint64_t)s);
                systematic_slots(c, n, total, last, u, lo, hi, jj);
                for (int64_t i = lo; i < hi; ++i) {
                    cur0[i] = p0[jj[i]];
                    cur1[i] = p1[jj[i]];
                }
                continue; /* the next step writes the other prediction buffer */
            }
            if (cdf == CDF_PREFIX)
                systematic_slots(c, n, total, last, pf_uniform(seed, STREAM_GLOBAL, (uint64_t)s),
                                 lo, hi, jj);
            else
                paper_slots(c, n, total, last, NULL, block, seed, (uint64_t)s, lo, hi, jj);
            range_maxima(w, pw, jj, lo, hi, n, dq + 2 * (size_t)(n + 1) * t, flaw, l, p);
            moves_a(p0, p1, p, NULL, key, ctr + 4, noise, lo, hi, cur0, cur1);
#pragma omp barrier
            /* pass 5: moves (b), which overwrite moves (a) */
            moves_b(p0, p1, jj, l, NULL, key, ctr + 4, noise, lo, hi, n, cur0, cur1);
#pragma omp barrier
        }
#pragma omp barrier
        if (t == 0) {
            stop = omp_get_wtime();
            seconds[0] = stop - start;
            seconds[1] = stop - window;
        }
        for (int64_t i = lo; i < hi; ++i) {
            x[2 * i] = cur0[i];
            x[2 * i + 1] = cur1[i];
        }
    }
done:
    free(cur0); free(cur1); free(pr[0][0]); free(pr[0][1]); free(pr[1][0]); free(pr[1][1]);
    free(ll); free(w); free(c); free(pw); free(part); free(jj); free(key); free(l); free(p); free(dq);
    return status;
}

/* ---- the machine's bounds, measured in the same run ---------------------------------- */

/* Seconds of `rounds` STREAM-style copies of n doubles on `threads` threads (pf_cpu.h's
 * pf_stream_copy, one parallel region a round: the same fork and join a filter pass
 * pays), after one untimed round; bytes = 16 n a round. */
double d3best_copy_seconds(int64_t n, int rounds, int threads) {
    if (n < 1 || rounds < 1) return -1.0;
    double *a = alloc64(sizeof(double) * n), *b = alloc64(sizeof(double) * n);
    if (!a || !b) {
        free(a);
        free(b);
        return -2.0;
    }
    const int nt = team_size(threads);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        a[i] = (double)i;
        b[i] = 0.0;
    }
    pf_stream_copy(b, a, n, 1, nt);
    double start = omp_get_wtime();
    pf_stream_copy(b, a, n, rounds, nt);
    double seconds = omp_get_wtime() - start;
    free(a);
    free(b);
    return seconds;
}

/* Seconds of one OpenMP barrier among `threads` threads (the mean over `rounds`, inside
 * one parallel region): the floor a pass of a step pays on top of its bytes. */
double d3best_barrier_seconds(int rounds, int threads) {
    if (rounds < 1) return -1.0;
    const int nt = team_size(threads);
    double seconds = 0.0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp barrier
        double start = omp_get_wtime();
        for (int r = 0; r < rounds; ++r) {
#pragma omp barrier
        }
        if (omp_get_thread_num() == 0) seconds = (omp_get_wtime() - start) / rounds;
    }
    return seconds;
}

/* exp_neg over an array (the tests compare it with libm's exp). */
void d3best_exp(const double *x, double *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = exp_neg(x[i]);
}

int d3best_threads(void) { return omp_get_max_threads(); }
