/* The best CPU code of the cellular particle filter (Gelencser-Horvath et al. 2013, Fig 6)
 * on every core: the library's CPF (filters/cellular.py, resampling/cellular.py) in C with
 * OpenMP, for the first (growth) model and the bearings-only model (models/growth.py,
 * models/bearings.py).
 *
 * One parallel region a run, one contiguous block of particles a thread, one barrier a
 * step. Step k of thread t (block [lo, hi)):
 *   A. prediction and likelihood of its block, in place (Fig 6, IV and II), and the
 *      block's largest log-weight;                                          -- barrier --
 *   B. the ring's largest log-weight M from the blocks' maxima; the weights
 *      a_j = exp(lw_j - M) of its block and of the r particles before it (the ring's
 *      wrap included), computed by the thread itself so that no second barrier is
 *      needed; the cellular choice of each particle of its block (Fig 6, III: the
 *      contract of resampling/cellular.py, below); the gather of the resampled states
 *      into the other buffer and the block's sum for the estimate (Fig 6, III.8).
 * States and log-weights are double-buffered by the step's parity: a thread that is
 * already predicting step k + 1 writes the buffers that no thread reads in step k.
 *
 * The choice (resampling/cellular.py's contract, "Sums" and "Choice"): particle i's
 * neighbourhood is {i, i-1, ..., i-r} mod N; W = ((0 + a_i) + a_{i-1}) + ... + a_{i-r} in
 * that order; t = u W; the ancestor is neighbour d* = #{d : s_d <= t} with the running
 * sums s_d = a_i + ... + a_{i-d} in the same order; where every s_d <= t the farthest
 * neighbour with positive weight; where W = 0 (every weight underflowed) the
 * neighbourhood draws again with its own largest log-weight as the shift
 * (cellular.py's _rechoose), and a neighbourhood of -inf log-weights takes the nearest
 * finite particle before it. The adds of each particle run in the contract's order, so
 * the ancestors equal the NumPy reference's (cellular_log) on the same log-weights and
 * uniforms. The scan visits all r + 1 neighbours twice (W, then the count), eight
 * particles a vector and four vectors at once: O(r) a particle, the paper's kernel's
 * work. A binary search in prefix sums (the GPU's default kernel, O(log r)) rounds
 * differently and, at r <= 256, costs as much as the vectorised scan on a CPU.
 *
 * Random numbers (csrc/pf_cpu.h's counter-based bits): the growth model's normals by
 * Box-Muller in pairs (both halves: particles 2j and 2j + 1 share the pair of stream j),
 * the bearings-only model's two normals a particle from one pair (stream i); counters
 * 4k and 4k + 1 at step k, the resampling uniform of particle i at counter 4k + 2, the
 * initial particles' normals at counters 4T ... 4T + 3. Results are the same on any
 * thread count except for the rounding of the estimate's sum. A replay mode takes the
 * normals and uniforms as arrays instead (the NumPy filter's own draws: the tests'
 * whole-run comparison).
 *
 * Flaws (tests only; the negative controls): 1 drops the farthest neighbour of every
 * neighbourhood (r neighbours instead of r + 1), 2 tempers the weights
 * (exp((lw - M) / 2): the likelihood's variance doubled), 3 keeps every particle as its own
 * ancestor (the weights ignored: a filter that never resamples). */
#include <stdlib.h>
#include <string.h>

#include "pf_cpu.h"

#define PI_ 3.141592653589793
#define TWO_PI_ 6.283185307179586
#define LANES 8  /* doubles a vector */
#define GROUP 4  /* vectors a scan iteration: enough independent adds to hide their latency */
#define MAX_THREADS 1024

enum { MODEL_GROWTH = 0, MODEL_BOT = 1 };
enum { FLAW_NONE = 0, FLAW_DROP_FARTHEST = 1, FLAW_TEMPERED = 2, FLAW_SELF = 3 };

/* GCC/Clang vector extensions: the compiler maps v8d onto one 512-bit register or two
 * 256-bit ones; the aligned(8) copy is for the unaligned loads of neighbours. */
typedef double v8d __attribute__((vector_size(64)));
typedef double v8d_u __attribute__((vector_size(64), aligned(8)));
typedef long long v8l __attribute__((vector_size(64)));

/* The count d* and the sum W of particles q = 0 ... m - 1 of a block (the contract's scan,
 * the header's "The choice"): e[q + r - d] is the weight of neighbour d of particle q;
 * `nd` neighbours d = 0 ... nd - 1 are visited (r + 1; flaw 1: r). */
static void scan_block(const double *e, const double *u, int64_t m, int r, int nd,
                       double *count, double *wsum) {
    const int64_t step = LANES * GROUP;
    int64_t q0 = 0;
    for (; q0 + step <= m; q0 += step) {
        v8d W[GROUP], s[GROUP], t[GROUP];
        v8l c[GROUP];
        for (int g = 0; g < GROUP; ++g) W[g] = (v8d){0};
        for (int d = 0; d < nd; ++d) {
            const double *p = e + q0 + r - d;
            for (int g = 0; g < GROUP; ++g) W[g] += *(const v8d_u *)(p + g * LANES);
        }
        for (int g = 0; g < GROUP; ++g) {
            t[g] = *(const v8d_u *)(u + q0 + g * LANES) * W[g];
            s[g] = (v8d){0};
            c[g] = (v8l){0};
        }
        for (int d = 0; d < nd; ++d) {
            const double *p = e + q0 + r - d;
            for (int g = 0; g < GROUP; ++g) {
                s[g] += *(const v8d_u *)(p + g * LANES);
                c[g] -= (v8l)(s[g] <= t[g]); /* true is -1 in each lane */
            }
        }
        for (int g = 0; g < GROUP; ++g)
            for (int l = 0; l < LANES; ++l) {
                count[q0 + g * LANES + l] = (double)c[g][l];
                wsum[q0 + g * LANES + l] = W[g][l];
            }
    }
    for (int64_t q = q0; q < m; ++q) { /* the block's tail, one particle at a time */
        double W = 0.0, s = 0.0, c = 0.0;
        for (int d = 0; d < nd; ++d) W += e[q + r - d];
        double t = u[q] * W;
        for (int d = 0; d < nd; ++d) {
            s += e[q + r - d];
            c += s <= t;
        }
        count[q] = c;
        wsum[q] = W;
    }
}

/* The nearest index j, j - 1, ... (around the ring) with a finite log-weight
 * (resampling/cellular.py's nearest_positive_before): at least one is finite. */
static int64_t nearest_finite_before(const double *lw, int64_t n, int64_t j) {
    for (int64_t s = 0; s < n; ++s) {
        int64_t q = ((j - s) % n + n) % n;
        if (isfinite(lw[q])) return q;
    }
    return j;
}

/* d* of particle i whose neighbourhood underflowed under the ring's shift: its own
 * largest log-weight as the shift, running sums in the order d = 0 ... r, the count of
 * those <= u W, the farthest positive one where none is above (cellular.py's
 * _rechoose); -1 where every log-weight of the neighbourhood is -inf. */
static int rechoose(const double *lw, int64_t n, int64_t i, int r, int nd, double u) {
    double top = -INFINITY;
    for (int d = 0; d < nd; ++d) {
        double v = lw[((i - d) % n + n) % n];
        if (v > top) top = v;
    }
    if (top == -INFINITY) return -1;
    double total = 0.0;
    for (int d = 0; d < nd; ++d) total += exp(lw[((i - d) % n + n) % n] - top);
    double t = u * total, s = 0.0;
    int c = 0, far = 0;
    for (int d = 0; d < nd; ++d) {
        double a = exp(lw[((i - d) % n + n) % n] - top);
        s += a;
        c += s <= t;
        if (a > 0.0) far = d;
    }
    return c >= nd ? far : c;
}

/* The ancestors of particles lo ... hi - 1 (Fig 6, III; the header's "The choice"),
 * from the log-weights lw of the ring, its largest M and the uniforms u[0 ... hi - lo).
 * e, count, wsum: the thread's scratch of (hi - lo) + r, hi - lo, hi - lo doubles. */
static void choose_block(const double *lw, double M, int64_t n, int r, int64_t lo, int64_t hi,
                         const double *u, double *e, double *count, double *wsum,
                         int64_t *anc, int flaw) {
    int64_t m = hi - lo;
    int nd = flaw == FLAW_DROP_FARTHEST ? r : r + 1;
    double scale = flaw == FLAW_TEMPERED ? 0.5 : 1.0;
    /* e[q] = a of particle (lo - r + q) mod N: the r before the block, then the block */
    int64_t first = ((lo - r) % n + n) % n;
    for (int64_t q = 0; q < m + r; ++q) {
        int64_t j = first + q;
        if (j >= n) j -= n;
        e[q] = exp(scale * (lw[j] - M));
    }
    scan_block(e, u, m, r, nd, count, wsum);
    for (int64_t q = 0; q < m; ++q) {
        int64_t i = lo + q, d;
        if (flaw == FLAW_SELF) {
            anc[q] = i;
            continue;
        }
        if (wsum[q] > 0.0) {
            d = (int64_t)count[q];
            if (d >= nd) { /* every s_d <= t: the farthest neighbour with positive weight */
                d = 0;
                for (int dd = nd - 1; dd >= 0; --dd)
                    if (e[q + r - dd] > 0.0) {
                        d = dd;
                        break;
                    }
            }
        } else {
            int got = rechoose(lw, n, i, r, nd, u[q]);
            if (got < 0) {
                anc[q] = nearest_finite_before(lw, n, i - r - 1);
                continue;
            }
            d = got;
        }
        int64_t a = i - d;
        anc[q] = a < 0 ? a + n : a;
    }
}

/* The two normals of Box-Muller on the uniforms of (seed, stream) at counters c, c + 1. */
static inline void normal_pair(uint64_t seed, uint64_t stream, uint64_t c, double *z0,
                               double *z1) {
    double u1 = 1.0 - pf_uniform(seed, stream, c); /* (0, 1]: log is finite */
    double u2 = pf_uniform(seed, stream, c + 1);
    double rad = sqrt(-2.0 * log(u1)), ang = TWO_PI_ * u2;
    *z0 = rad * cos(ang);
    *z1 = rad * sin(ang);
}

/* np.mod(a, b) for b > 0 (NumPy's float remainder: fmod, then the sign of b). */
static inline double py_mod(double a, double b) {
    double m = fmod(a, b);
    if (m != 0.0) {
        if (m < 0.0) m += b;
    } else {
        m = 0.0;
    }
    return m;
}

typedef struct {
    int model, start_from_noise;
    int64_t n;
    int r, steps;
    const double *y;
    uint64_t seed;
    const double *noise, *uniforms;
    double *est;
    int flaw;
} Run;

/* Eq. 2.34 and eq. 2.35 (models/growth.py): x' = x/2 + 25x/(1 + x^2) + 8cos(1.2k) + v,
 * v ~ N(0, 10); log p(z | x) = -(z - x^2/20)^2 / 2 - log(2 pi) / 2 (sigma_n^2 = 1). The
 * paper's start: x_0 = 0 and no drift at k = 0 (x_1 ~ N(0, 10)). Returns the block's max. */
static double predict_growth(const Run *R, int k, double *x, double *lw, int64_t lo,
                             int64_t hi) {
    const double sdv = sqrt(10.0), c = log(2.0 * PI_ * 1.0);
    const double drift = (k == 0 && R->start_from_noise) ? 0.0 : 8.0 * cos(1.2 * k);
    const double yk = R->y[k];
    const double *z = R->noise ? R->noise + R->n + (int64_t)k * R->n : NULL;
    double top = -INFINITY, z0 = 0.0, z1 = 0.0;
    for (int64_t i = lo; i < hi; ++i) {
        double v;
        if (z) {
            v = z[i];
        } else {
            if (i == lo || !(i & 1)) normal_pair(R->seed, (uint64_t)(i >> 1), 4 * (uint64_t)k, &z0, &z1);
            v = (i & 1) ? z1 : z0;
        }
        double xi = x[i];
        double mean = (xi / 2.0 + 25.0 * xi / (1.0 + xi * xi)) + drift;
        xi = mean + sdv * v;
        x[i] = xi;
        double res = yk - xi * xi / 20.0;
        double l = -0.5 * (res * res / 1.0 + c);
        lw[i] = l;
        if (l > top) top = l;
    }
    return top;
}

/* (B1)-(B2) (models/bearings.py): positions advance by their velocities, w ~ N(0, q I),
 * sqrt(q) = 0.001, x += 0.5 w, xdot += w (and y likewise); the bearing atan2(y, x) with
 * N(0, 0.005^2) noise, the residual wrapped into [-pi, pi). States: four arrays. */
static double predict_bot(const Run *R, int k, double *const *x, double *lw, int64_t lo,
                          int64_t hi) {
    const double q = 0.001, var = 0.005 * 0.005, c = log(2.0 * PI_ * var);
    const double yk = R->y[k];
    const double *z = R->noise ? R->noise + 4 * R->n + (int64_t)k * 2 * R->n : NULL;
    double top = -INFINITY;
    double *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    for (int64_t i = lo; i < hi; ++i) {
        double w0, w1;
        if (z) {
            w0 = z[2 * i];
            w1 = z[2 * i + 1];
        } else {
            normal_pair(R->seed, (uint64_t)i, 4 * (uint64_t)k, &w0, &w1);
        }
        w0 *= q;
        w1 *= q;
        double a0 = (x0[i] + x1[i]) + 0.5 * w0, a1 = x1[i] + w0;
        double a2 = (x2[i] + x3[i]) + 0.5 * w1, a3 = x3[i] + w1;
        x0[i] = a0;
        x1[i] = a1;
        x2[i] = a2;
        x3[i] = a3;
        double res = py_mod((yk - atan2(a2, a0)) + PI_, TWO_PI_) - PI_;
        double l = -0.5 * (res * res / var + c);
        lw[i] = l;
        if (l > top) top = l;
    }
    return top;
}

/* The initial particles of a block: growth N(start_mean, start_sd^2) (the paper's start:
 * the point mass 0), bearings-only the prior N((0, 0, 0.4, -0.05), diag(0.5^2, 0.005^2,
 * 0.3^2, 0.01^2)). */
static void init_block(const Run *R, double *const *x, int64_t lo, int64_t hi) {
    uint64_t c0 = 4 * (uint64_t)R->steps;
    if (R->model == MODEL_GROWTH) {
        double mean = 0.0, sd = R->start_from_noise ? 0.0 : sqrt(2.0), z0, z1;
        for (int64_t i = lo; i < hi; ++i) {
            double v;
            if (R->noise) {
                v = R->noise[i];
            } else {
                normal_pair(R->seed, (uint64_t)i, c0, &z0, &z1);
                v = z0;
            }
            x[0][i] = mean + sd * v;
        }
        return;
    }
    static const double mean[4] = {0.0, 0.0, 0.4, -0.05}, sd[4] = {0.5, 0.005, 0.3, 0.01};
    for (int64_t i = lo; i < hi; ++i) {
        double z[4];
        if (R->noise) {
            for (int j = 0; j < 4; ++j) z[j] = R->noise[4 * i + j];
        } else {
            normal_pair(R->seed, (uint64_t)i, c0, &z[0], &z[1]);
            normal_pair(R->seed, (uint64_t)i, c0 + 2, &z[2], &z[3]);
        }
        for (int j = 0; j < 4; ++j) x[j][i] = mean[j] + z[j] * sd[j];
    }
}

/* One run of the CPF over T steps (the header): est (T x dim) the mean of the resampled
 * particles of each step; stage (2 doubles, may be NULL) the seconds thread 0 spent in
 * A with the barrier's wait and in B. noise/uniforms: NULL, or the draws to replay
 * (noise: the initial normals, N or N x 4, then T blocks of N or N x 2; uniforms T x N).
 * Returns 0, 1 (no memory) or 2 (bad arguments). */
int cpf_run(int model, int start_from_noise, int64_t n, int r, int steps, const double *y,
            uint64_t seed, int threads, const double *noise, const double *uniforms,
            double *est, double *stage, int flaw) {
    if ((model != MODEL_GROWTH && model != MODEL_BOT) || n < 1 || r < 0 || r >= n ||
        steps < 1 || threads < 1 || threads > MAX_THREADS)
        return 2;
    if (threads > n) threads = (int)n;
    int dim = model == MODEL_GROWTH ? 1 : 4;
    Run R = {model, start_from_noise, n, r, steps, y, seed, noise, uniforms, est, flaw};
    double *xs = malloc(sizeof(double) * 2 * dim * n);
    double *lws = malloc(sizeof(double) * 2 * n);
    double *partial = calloc((size_t)steps * threads * dim, sizeof(double));
    double tmax[2][MAX_THREADS];
    int failed = 0;
    if (!xs || !lws || !partial) {
        free(xs), free(lws), free(partial);
        return 1;
    }
    double t_a = 0.0, t_b = 0.0;
    int used = threads;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), k_threads = omp_get_num_threads();
        int64_t lo = n * t / k_threads, hi = n * (t + 1) / k_threads, m = hi - lo;
        double *e = malloc(sizeof(double) * (m + r + 1));
        double *scratch = malloc(sizeof(double) * 3 * (m + 1));
        int64_t *anc = malloc(sizeof(int64_t) * (m + 1));
        double *x[2][4];
        for (int b = 0; b < 2; ++b)
            for (int j = 0; j < dim; ++j) x[b][j] = xs + (int64_t)(b * dim + j) * n;
        if (t == 0) used = k_threads;
        if (!e || !scratch || !anc) {
#pragma omp atomic write
            failed = 1;
        } else {
            init_block(&R, x[0], lo, hi);
        }
#pragma omp barrier
        int stop; /* every thread sees every allocation's outcome: all run the steps or none */
#pragma omp atomic read
        stop = failed;
        double *u = scratch, *count = scratch + (m + 1), *wsum = scratch + 2 * (m + 1);
        for (int k = 0; k < steps && !stop; ++k) {
            int b = k & 1;
            double *lw = lws + (int64_t)b * n, t0 = omp_get_wtime();
            tmax[b][t] = model == MODEL_GROWTH ? predict_growth(&R, k, x[b][0], lw, lo, hi)
                                               : predict_bot(&R, k, x[b], lw, lo, hi);
#pragma omp barrier
            double t1 = omp_get_wtime(), M = -INFINITY;
            for (int s = 0; s < k_threads; ++s)
                if (tmax[b][s] > M) M = tmax[b][s];
            for (int64_t q = 0; q < m; ++q)
                u[q] = uniforms ? uniforms[(int64_t)k * n + lo + q]
                                : pf_uniform(seed, (uint64_t)(lo + q), 4 * (uint64_t)k + 2);
            choose_block(lw, M, n, r, lo, hi, u, e, count, wsum, anc, flaw);
            double *p = partial + ((int64_t)k * k_threads + t) * dim;
            for (int j = 0; j < dim; ++j) {
                const double *src = x[b][j];
                double *dst = x[b ^ 1][j], sum = 0.0;
                for (int64_t q = 0; q < m; ++q) {
                    double v = src[anc[q]];
                    dst[lo + q] = v;
                    sum += v;
                }
                p[j] = sum;
            }
            if (t == 0) {
                double t2 = omp_get_wtime();
                t_a += t1 - t0;
                t_b += t2 - t1;
            }
        }
        free(e), free(scratch), free(anc);
    }
    if (!failed) {
        int k_threads = used;
        for (int k = 0; k < steps; ++k)
            for (int j = 0; j < dim; ++j) {
                double sum = 0.0;
                for (int s = 0; s < k_threads; ++s) sum += partial[((int64_t)k * k_threads + s) * dim + j];
                est[(int64_t)k * dim + j] = sum / (double)n;
            }
        if (stage) stage[0] = t_a, stage[1] = t_b;
    }
    free(xs), free(lws), free(partial);
    return failed ? 1 : 0;
}

/* The cellular choice alone (Fig 6, III; the header's "The choice") on the log-weights
 * lw and uniforms u of a ring of N: ancestors (N), on `threads` threads. Returns 0, 1 or
 * 2 as cpf_run. */
int cpf_choose(const double *lw, const double *u, int64_t n, int r, int threads,
               int64_t *ancestors, int flaw) {
    if (n < 1 || r < 0 || r >= n || threads < 1 || threads > MAX_THREADS) return 2;
    double M = -INFINITY;
    for (int64_t i = 0; i < n; ++i)
        if (lw[i] > M) M = lw[i];
    if (!(M > -INFINITY) || M == INFINITY) return 2;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {   /* no barrier inside: a thread without memory leaves alone */
        int t = omp_get_thread_num(), k = omp_get_num_threads();
        int64_t lo = n * t / k, hi = n * (t + 1) / k, m = hi - lo;
        double *e = malloc(sizeof(double) * (m + r + 1));
        double *scratch = malloc(sizeof(double) * 2 * (m + 1));
        if (!e || !scratch) failed = 1;
        else choose_block(lw, M, n, r, lo, hi, u + lo, e, scratch, scratch + (m + 1),
                          ancestors + lo, flaw);
        free(e), free(scratch);
    }
    return failed ? 1 : 0;
}

/* The scan's ceiling on this core: scan_block on an L1-resident block (m particles,
 * radius r, 2 (r + 1) adds and r + 1 compares a particle), `rounds` times on each of
 * `threads` threads, no barrier. Returns the sum of the counts (so nothing is elided). */
double cpf_scan_peak(int64_t m, int r, int64_t rounds, int threads) {
    double total = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        double *e = malloc(sizeof(double) * (m + r)), *u = malloc(sizeof(double) * m);
        double *count = malloc(sizeof(double) * m), *wsum = malloc(sizeof(double) * m);
        if (e && u && count && wsum) {
            int t = omp_get_thread_num();
            for (int64_t q = 0; q < m + r; ++q) e[q] = pf_uniform(7, (uint64_t)t, (uint64_t)q);
            for (int64_t q = 0; q < m; ++q) u[q] = pf_uniform(8, (uint64_t)t, (uint64_t)q);
            for (int64_t k = 0; k < rounds; ++k) {
                scan_block(e, u, m, r, r + 1, count, wsum);
                total += count[k % m];
                u[k % m] = 0.5 * (u[k % m] + 0.25); /* the next round's input depends on this one's */
            }
        }
        free(e), free(u), free(count), free(wsum);
    }
    return total;
}

/* pf_stream_copy (csrc/pf_cpu.h) for ctypes: the machine's copy bandwidth. */
void cpf_stream_copy(double *dst, const double *src, int64_t n, int rounds, int threads) {
    pf_stream_copy(dst, src, n, rounds, threads);
}
