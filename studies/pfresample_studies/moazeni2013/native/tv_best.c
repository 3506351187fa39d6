/* Moazeni (2013), chapter 6: the best CPU code we can write for GlobalSync's
 * iteration, on every core -- the same discretisation, and per voxel the same float32
 * operations in the same order as tv.c (the document's one-thread baseline), so every
 * voxel's arithmetic gives tv.c's bits; only the TV sums (double) are added in another
 * order (below), so the results differ from tv.c's by the rounding of those sums alone.
 *
 * An iteration is two passes over the volume (the energy's R couples every voxel, so
 * the solver step cannot start before every TV sum is in):
 *   pass 1, a plane p a task: for each row (p, a) and channel, D = L L^T of the rows
 *     it needs (recomputed from L, never stored), the normalised gradient N of row
 *     (p, a) and N0 of row (p - 1, a) (recomputed: its plane belongs to another task),
 *     N1 of row (p, a - 1) carried from the row before, the TV norms' sum of the row,
 *     and P (the adjoint of the differences) of the row, written;
 *   pass 2, a plane a task: R and the scales (one thread), then the Solver step from
 *     L (D recomputed), P and d_hat, L written in place.
 * The bytes it must move an iteration, 144 a voxel (float32, 6 channels): pass 1 reads
 * L (24) and writes P (24); pass 2 reads L, P and d_hat (72) and writes L (24). (A
 * write of P first reads its line unless the hardware avoids it: up to 24 more. The
 * floor of any two-pass code is 96, P recomputed in pass 2 at twice the square roots and
 * divisions.) Inner loops run along the fast axis n2, branch-free (edges as selects),
 * which gcc -O3 -march=native vectorises (vsqrtps, vdivps).
 *
 * The TV sums in a fixed order, the same for any thread count: a row's norms in 8
 * lanes (lane l takes b = l mod 8, in order of b), the lanes added in a fixed tree,
 * the rows of a plane in order of a, the planes in order of p. tv.c adds every voxel in
 * order into one double. Both are double sums of the same float32 norms; they differ
 * by at most (V - 1) 2^-53 of the sum (V the voxels), so the float32 scales differ by
 * at most one unit in the last place, rarely -- the tests bound the difference of L. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const float W[6] = {1, 2, 1, 2, 2, 1};
#define LANES 8

/* D = L L^T of n2 voxels: the six factor rows in, the six tensor rows out */
static void llt6(const float *restrict l11, const float *restrict l21, const float *restrict l22,
                 const float *restrict l31, const float *restrict l32, const float *restrict l33,
                 int64_t n2, float *restrict d0, float *restrict d1, float *restrict d2,
                 float *restrict d3, float *restrict d4, float *restrict d5) {
    for (int64_t b = 0; b < n2; ++b) {
        d0[b] = l11[b] * l11[b];
        d1[b] = l21[b] * l11[b];
        d2[b] = l21[b] * l21[b] + l22[b] * l22[b];
        d3[b] = l31[b] * l11[b];
        d4[b] = l31[b] * l21[b] + l32[b] * l22[b];
        d5[b] = l31[b] * l31[b] + l32[b] * l32[b] + l33[b] * l33[b];
    }
}

/* D of the n2 voxels from index v (channel-major arrays of V voxels), channel c of the
 * result at d + c * stride */
static void llt_row(const float *L, int64_t V, int64_t v, int64_t n2, float *d, int64_t stride) {
    llt6(L + v, L + V + v, L + 2 * V + v, L + 3 * V + v, L + 4 * V + v, L + 5 * V + v, n2, d,
         d + stride, d + 2 * stride, d + 3 * stride, d + 4 * stride, d + 5 * stride);
}

/* The norms |grad u| of a row u (u0: the next row along axis 0, u1: along axis 1; at
 * the volume's edge u itself, so that the difference is tv.c's +0), their sum in the
 * fixed order, and the normalised gradient g / |grad u| into o0, o1, o2. u is read one
 * past its end (rows are padded), the value unused. */
static double norm_row(const float *restrict u, const float *restrict u0,
                       const float *restrict u1, int64_t n2, float eps, float *restrict o0,
                       float *restrict o1, float *restrict o2, float *restrict nrm) {
    for (int64_t b = 0; b < n2; ++b) {
        const float here = u[b];
        const float g0 = u0[b] - here, g1 = u1[b] - here, right = u[b + 1] - here;
        const float g2 = b + 1 < n2 ? right : 0.f;
        const float s = sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
        nrm[b] = s;
        o0[b] = g0 / s;
        o1[b] = g1 / s;
        o2[b] = g2 / s;
    }
    double lane[LANES] = {0};
    int64_t b = 0;
    for (; b + LANES <= n2; b += LANES)
        for (int l = 0; l < LANES; ++l) lane[l] += nrm[b + l];
    for (int l = 0; b < n2; ++b, ++l) lane[l] += nrm[b];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* N0 alone (the first component of norm_row's normalised gradient, the same bits) */
static void norm0_row(const float *restrict u, const float *restrict u0,
                      const float *restrict u1, int64_t n2, float eps, float *restrict o0) {
    for (int64_t b = 0; b < n2; ++b) {
        const float here = u[b];
        const float g0 = u0[b] - here, g1 = u1[b] - here, right = u[b + 1] - here;
        const float g2 = b + 1 < n2 ? right : 0.f;
        o0[b] = g0 / sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
    }
}

/* P of a row (unscaled: pass 2 scales it once R is known), tv.c's order: -N0 - N1 - N2,
 * then + N0 of (p - 1), + N1 of (a - 1), + N2 of (b - 1), each only where it exists
 * (adding a 0 instead would turn a -0 into +0) */
static void p_row(const float *restrict N0, const float *restrict N1, const float *restrict N2,
                  const float *restrict N0m, const float *restrict N1m, int has_m, int has_a,
                  int64_t n2, float *restrict out) {
    for (int64_t b = 0; b < n2; ++b) {
        float k = -N0[b] - N1[b] - N2[b];
        const float km = k + N0m[b];
        k = has_m ? km : k;
        const float ka = k + N1m[b];
        out[b] = has_a ? ka : k;
    }
    for (int64_t b = 1; b < n2; ++b) out[b] += N2[b - 1];
}

/* The Solver step on n voxels, tv.c's expressions: l (the six factor channels) in
 * place, from P (unscaled) and d_hat */
static void solver_row(float *restrict l0, float *restrict l1, float *restrict l2,
                       float *restrict l3, float *restrict l4, float *restrict l5,
                       const float *restrict p0, const float *restrict p1,
                       const float *restrict p2, const float *restrict p3,
                       const float *restrict p4, const float *restrict p5,
                       const float *restrict h0, const float *restrict h1,
                       const float *restrict h2, const float *restrict h3,
                       const float *restrict h4, const float *restrict h5, int64_t n,
                       const float *scale, float lam, float step) {
    const float c0 = scale[0], c1 = scale[1], c2 = scale[2], c3 = scale[3], c4 = scale[4],
                c5 = scale[5];
    const float w0 = lam * W[0], w1 = lam * W[1], w2 = lam * W[2], w3 = lam * W[3],
                w4 = lam * W[4], w5 = lam * W[5];
    for (int64_t i = 0; i < n; ++i) {
        const float a0 = l0[i], a1 = l1[i], a2 = l2[i], a3 = l3[i], a4 = l4[i], a5 = l5[i];
        const float d0 = a0 * a0, d1 = a1 * a0, d2 = a1 * a1 + a2 * a2, d3 = a3 * a0,
                    d4 = a3 * a1 + a4 * a2, d5 = a3 * a3 + a4 * a4 + a5 * a5;
        const float s11 = c0 * p0[i] + w0 * (d0 - h0[i]);
        const float s21 = (c1 * p1[i] + w1 * (d1 - h1[i])) / 2;
        const float s22 = c2 * p2[i] + w2 * (d2 - h2[i]);
        const float s31 = (c3 * p3[i] + w3 * (d3 - h3[i])) / 2;
        const float s32 = (c4 * p4[i] + w4 * (d4 - h4[i])) / 2;
        const float s33 = c5 * p5[i] + w5 * (d5 - h5[i]);
        l0[i] = a0 - step * (2 * (s11 * a0 + s21 * a1 + s31 * a3));
        l1[i] = a1 - step * (2 * (s21 * a0 + s22 * a1 + s32 * a3));
        l2[i] = a2 - step * (2 * (s22 * a2 + s32 * a4));
        l3[i] = a3 - step * (2 * (s31 * a0 + s32 * a1 + s33 * a3));
        l4[i] = a4 - step * (2 * (s32 * a2 + s33 * a4));
        l5[i] = a5 - step * (2 * (s33 * a5));
    }
}

int tv_best_solve_f32(float *L, const float *dhat, int64_t n0, int64_t n1, int64_t n2,
                      float lam, float eps, float step, int iterations, int threads) {
    if (threads < 1 || n0 < 1 || n1 < 1 || n2 < 1) return 2;
    const int64_t V = n0 * n1 * n2, s0 = n1 * n2;
    float *P = malloc(sizeof(float) * 6 * V);
    double *plane = malloc(sizeof(double) * 6 * n0); /* [c][p]: a plane's TV sum */
    if (!P || !plane) {
        free(P), free(plane);
        return 1;
    }
    int failed = 0; /* shared: a thread that could not allocate stops them all */
    float scale[6];
#pragma omp parallel num_threads(threads)
    {
        /* a thread's rows (each padded): D (6 channels) of (p, a), (p, a+1), (p+1, a),
         * (p-1, a), (p-1, a+1); N1 of the row before (6 channels); N0, N1, N2, the
         * norms and N0 of (p-1, a) */
        const int64_t row = n2 + 16, rows = 5 * 6 + 6 + 5;
        float *buf = calloc((size_t)(row * rows), sizeof(float));
        int bad = !buf;
#pragma omp atomic
        failed |= bad;
#pragma omp barrier
        float *dc = buf, *dn = dc + 6 * row, *du = dn + 6 * row, *dm = du + 6 * row,
              *dmn = dm + 6 * row, *n1prev = dmn + 6 * row, *N0 = n1prev + 6 * row,
              *N1 = N0 + row, *N2 = N1 + row, *nrm = N2 + row, *N0m = nrm + row;
        for (int it = 0; it < iterations && !failed; ++it) {
#pragma omp for schedule(static)
            for (int64_t p = 0; p < n0; ++p) {
                double sum[6] = {0};
                const int has_p = p + 1 < n0, has_m = p > 0;
                llt_row(L, V, p * s0, n2, dc, row);
                if (has_m) llt_row(L, V, (p - 1) * s0, n2, dm, row);
                for (int64_t a = 0; a < n1; ++a) {
                    const int64_t v = p * s0 + a * n2;
                    const int has_a = a + 1 < n1;
                    if (has_a) llt_row(L, V, v + n2, n2, dn, row);
                    if (has_p) llt_row(L, V, v + s0, n2, du, row);
                    if (has_m && has_a) llt_row(L, V, v - s0 + n2, n2, dmn, row);
                    for (int c = 0; c < 6; ++c) {
                        const float *u = dc + c * row;
                        sum[c] += norm_row(u, has_p ? du + c * row : u, has_a ? dn + c * row : u,
                                           n2, eps, N0, N1, N2, nrm);
                        if (has_m) { /* N0 of (p - 1, a), whose next row along axis 0 is u */
                            const float *um = dm + c * row;
                            norm0_row(um, u, has_a ? dmn + c * row : um, n2, eps, N0m);
                        }
                        float *prev = n1prev + c * row;
                        p_row(N0, N1, N2, N0m, prev, has_m, a > 0, n2, P + c * V + v);
                        memcpy(prev, N1, sizeof(float) * n2);
                    }
                    /* carry: (p, a+1) becomes (p, a), (p-1, a+1) becomes (p-1, a) */
                    float *t = dc;
                    dc = dn, dn = t;
                    t = dm, dm = dmn, dmn = t;
                }
                for (int c = 0; c < 6; ++c) plane[c * n0 + p] = sum[c];
            }
#pragma omp single
            {
                double tv[6], r = 0;
                for (int c = 0; c < 6; ++c) {
                    tv[c] = 0;
                    for (int64_t p = 0; p < n0; ++p) tv[c] += plane[c * n0 + p];
                }
                for (int c = 0; c < 6; ++c) r += W[c] * tv[c] * tv[c];
                r = sqrt(r);
                for (int c = 0; c < 6; ++c) scale[c] = (float)(W[c] * tv[c] / r);
            }
#pragma omp for schedule(static)
            for (int64_t p = 0; p < n0; ++p) { /* Solver */
                const int64_t i = p * s0;
                solver_row(L + i, L + V + i, L + 2 * V + i, L + 3 * V + i, L + 4 * V + i,
                           L + 5 * V + i, P + i, P + V + i, P + 2 * V + i, P + 3 * V + i,
                           P + 4 * V + i, P + 5 * V + i, dhat + i, dhat + V + i,
                           dhat + 2 * V + i, dhat + 3 * V + i, dhat + 4 * V + i,
                           dhat + 5 * V + i, s0, scale, lam, step);
            }
        }
        free(buf);
    }
    free(P), free(plane);
    return failed ? 1 : 0;
}

/* A STREAM-style copy, dst = src over n floats with ``threads`` threads, ``rounds``
 * times (each thread copies the same static share every round, so its pages stay on
 * its side): the bandwidth bound of the TV step. */
int stream_copy_f32(float *restrict dst, const float *restrict src, int64_t n, int rounds,
                    int threads) {
#pragma omp parallel num_threads(threads)
    for (int r = 0; r < rounds; ++r) {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    }
    return 0;
}
