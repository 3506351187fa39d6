/* Moazeni (2013), chapter 6: the compiled single-thread CPU solver of GlobalSync
 * (the thesis's speed-ups are over a CPU version compiled with gcc -O3, §6.5): the same
 * discretisation and order of work as tv.cu's five kernels, in float32, the TV sums in
 * double. Arrays are channel-major, [6][n0][n1][n2], n2 the fastest axis (tv_gpu.py). */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static const float W[6] = {1, 2, 1, 2, 2, 1};

/* Table 10's kernels in the order of phases[] (tv_solve_phases_f32). */
enum { PH_LLT, PH_TVNORM, PH_P, PH_REDUCTION, PH_SOLVER, PH_COUNT };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Adds the seconds since *mark to phases[k] and moves the mark (no-op without phases,
 * so the plain solver reads no clock). */
static void lap(double *phases, int k, double *mark) {
    if (!phases) return;
    const double t = now();
    phases[k] += t - *mark;
    *mark = t;
}

static int solve(float *L, const float *dhat, int64_t n0, int64_t n1, int64_t n2, float lam,
                 float eps, float step, int iterations, double *phases) {
    const int64_t V = n0 * n1 * n2, s0 = n1 * n2;
    float *D = malloc(sizeof(float) * 6 * V), *P = malloc(sizeof(float) * 6 * V);
    float *N = malloc(sizeof(float) * 3 * V);
    if (!D || !P || !N) {
        free(D), free(P), free(N);
        return 1;
    }
    double mark = phases ? now() : 0;
    for (int it = 0; it < iterations; ++it) {
        for (int64_t i = 0; i < V; ++i) { /* LLT */
            const float l11 = L[i], l21 = L[V + i], l22 = L[2 * V + i], l31 = L[3 * V + i],
                        l32 = L[4 * V + i], l33 = L[5 * V + i];
            D[i] = l11 * l11;
            D[V + i] = l21 * l11;
            D[2 * V + i] = l21 * l21 + l22 * l22;
            D[3 * V + i] = l31 * l11;
            D[4 * V + i] = l31 * l21 + l32 * l22;
            D[5 * V + i] = l31 * l31 + l32 * l32 + l33 * l33;
        }
        lap(phases, PH_LLT, &mark);
        double tv[6], r = 0;
        for (int c = 0; c < 6; ++c) { /* TVnorm and the normalised gradient */
            const float *u = D + c * V;
            double acc = 0;
            for (int64_t p = 0; p < n0; ++p)
                for (int64_t a = 0; a < n1; ++a)
                    for (int64_t b = 0; b < n2; ++b) {
                        const int64_t v = p * s0 + a * n2 + b;
                        const float here = u[v];
                        const float g0 = p + 1 < n0 ? u[v + s0] - here : 0.f;
                        const float g1 = a + 1 < n1 ? u[v + n2] - here : 0.f;
                        const float g2 = b + 1 < n2 ? u[v + 1] - here : 0.f;
                        const float nrm = sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
                        acc += nrm;
                        N[v] = g0 / nrm, N[V + v] = g1 / nrm, N[2 * V + v] = g2 / nrm;
                    }
            tv[c] = acc;
            lap(phases, PH_TVNORM, &mark);
            for (int64_t p = 0; p < n0; ++p) /* P: the adjoint of the differences */
                for (int64_t a = 0; a < n1; ++a)
                    for (int64_t b = 0; b < n2; ++b) {
                        const int64_t v = p * s0 + a * n2 + b;
                        float k = -N[v] - N[V + v] - N[2 * V + v];
                        if (p > 0) k += N[v - s0];
                        if (a > 0) k += N[V + v - n2];
                        if (b > 0) k += N[2 * V + v - 1];
                        P[c * V + v] = k; /* scaled below, once R is known */
                    }
            lap(phases, PH_P, &mark);
        }
        for (int c = 0; c < 6; ++c) r += W[c] * tv[c] * tv[c];
        r = sqrt(r);
        float scale[6];
        for (int c = 0; c < 6; ++c) scale[c] = (float)(W[c] * tv[c] / r);
        lap(phases, PH_REDUCTION, &mark);
        for (int64_t i = 0; i < V; ++i) { /* Solver */
            float l[6], dg[6], g[6];
            for (int c = 0; c < 6; ++c) {
                l[c] = L[c * V + i];
                dg[c] = scale[c] * P[c * V + i] + lam * W[c] * (D[c * V + i] - dhat[c * V + i]);
            }
            const float s11 = dg[0], s21 = dg[1] / 2, s22 = dg[2], s31 = dg[3] / 2,
                        s32 = dg[4] / 2, s33 = dg[5];
            g[0] = 2 * (s11 * l[0] + s21 * l[1] + s31 * l[3]);
            g[1] = 2 * (s21 * l[0] + s22 * l[1] + s32 * l[3]);
            g[2] = 2 * (s22 * l[2] + s32 * l[4]);
            g[3] = 2 * (s31 * l[0] + s32 * l[1] + s33 * l[3]);
            g[4] = 2 * (s32 * l[2] + s33 * l[4]);
            g[5] = 2 * (s33 * l[5]);
            for (int c = 0; c < 6; ++c) L[c * V + i] = l[c] - step * g[c];
        }
        lap(phases, PH_SOLVER, &mark);
    }
    free(D), free(P), free(N);
    return 0;
}

int tv_solve_f32(float *L, const float *dhat, int64_t n0, int64_t n1, int64_t n2, float lam,
                 float eps, float step, int iterations) {
    return solve(L, dhat, n0, n1, n2, lam, eps, step, iterations, NULL);
}

/* The same solver with each kernel's seconds (all iterations) added to phases[0..4]:
 * LLT, TVnorm, P, Reduction, Solver (Fig 53's split of an iteration on the CPU). */
int tv_solve_phases_f32(float *L, const float *dhat, int64_t n0, int64_t n1, int64_t n2,
                        float lam, float eps, float step, int iterations, double *phases) {
    for (int k = 0; k < PH_COUNT; ++k) phases[k] = 0;
    return solve(L, dhat, n0, n1, n2, lam, eps, step, iterations, phases);
}
