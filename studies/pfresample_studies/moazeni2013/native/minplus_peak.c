/* The core's min-plus peak, the bound the best CPU code of chapter 3 is held to
 * (bench/moazeni2013_best_cpu.py): built with the same compiler and flags as
 * dp_blocked.c, the same register tile of accumulators (PR rows x PC columns: acc =
 * min(acc, x_r + y), x_r broadcast and y in registers) with no memory operand at all;
 * y advances by d each round (PC / lanes additions a round, 1/(2 PR) of the work, counted
 * by the caller as half a min-plus each) so that the compiler cannot hoist the sums.
 * Each of ``threads`` OpenMP threads runs ``rounds`` rounds on its own registers.
 *
 * The float64 peak is chapter 7's bound (bench/moazeni2013_ch7_best_cpu.py: dtw_best.c
 * computes its DTW cells in float64), with the latency of one DTW cell's dependency
 * chain (minplus_chain_f64: best = min(up, acc), best = min(diag, best), acc = cost +
 * best, dtw_best.c's order; one chain, nothing to overlap it with). */
#include <stdint.h>

#if defined(__AVX512F__)
#define PR 8 /* 16 zmm accumulators, 8 broadcasts, y and d: 28 of 32 registers */
#define PC 32
#else
#define PR 4 /* 8 ymm accumulators, 4 broadcasts, y and d: 16 of 16 */
#define PC 16
#endif

int minplus_peak_rows(void) { return PR; }
int minplus_peak_cols(void) { return PC; }
/* float64: half the columns, the same vectors (and registers) as float32's tile */
int minplus_peak_cols_f64(void) { return (PC / 2); }

#define DEFINE_PEAK(SUF, T, ADD)                                                              \
    int minplus_peak_##SUF(int64_t rounds, int threads, const T *seed, T *out) {              \
        _Pragma("omp parallel num_threads(threads)")                                          \
        {                                                                                     \
            T acc[PR][PC], x[PR], y[PC], d[PC];                                               \
            for (int r = 0; r < PR; ++r) {                                                    \
                x[r] = seed[r];                                                               \
                for (int q = 0; q < PC; ++q) acc[r][q] = seed[PR + q];                        \
            }                                                                                 \
            for (int q = 0; q < PC; ++q) y[q] = seed[PR + PC + q], d[q] = seed[PR + 2 * PC + q]; \
            for (int64_t it = 0; it < rounds; ++it) {                                         \
                for (int r = 0; r < PR; ++r)                                                  \
                    for (int q = 0; q < PC; ++q) {                                            \
                        const T v = ADD(x[r], y[q]);                                          \
                        acc[r][q] = v < acc[r][q] ? v : acc[r][q];                            \
                    }                                                                         \
                for (int q = 0; q < PC; ++q) y[q] = ADD(y[q], d[q]);                          \
            }                                                                                 \
            T best = acc[0][0];                                                               \
            for (int r = 0; r < PR; ++r)                                                      \
                for (int q = 0; q < PC; ++q) best = acc[r][q] < best ? acc[r][q] : best;      \
            _Pragma("omp critical") *out = best < *out ? best : *out;                         \
        }                                                                                     \
        return 0;                                                                             \
    }

#define ADD_F(a, b) ((a) + (b))
#define ADD_I(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
DEFINE_PEAK(f32, float, ADD_F)
DEFINE_PEAK(i32, int32_t, ADD_I)

/* float64 in intrinsics: the same tile of vectors as float32's (PR rows x NV vectors; gcc
 * 12 transposes the plain loops in float64 and spends the round permuting) */
#include <immintrin.h>
#if defined(__AVX512F__)
typedef __m512d v64_t;
#define V64_LANES 8
#define V_SET1 _mm512_set1_pd
#define V_LOAD _mm512_loadu_pd
#define V_ADD _mm512_add_pd
#define V_MIN _mm512_min_pd
#define V_STORE _mm512_storeu_pd
#else
typedef __m256d v64_t;
#define V64_LANES 4
#define V_SET1 _mm256_set1_pd
#define V_LOAD _mm256_loadu_pd
#define V_ADD _mm256_add_pd
#define V_MIN _mm256_min_pd
#define V_STORE _mm256_storeu_pd
#endif
#define NV ((PC / 2) / V64_LANES)
int minplus_peak_lanes_f64(void) { return V64_LANES; }

int minplus_peak_f64(int64_t rounds, int threads, const double *seed, double *out) {
#pragma omp parallel num_threads(threads)
    {
        v64_t acc[PR][NV], x[PR], y[NV], d[NV];
        for (int r = 0; r < PR; ++r) {
            x[r] = V_SET1(seed[r]);
            for (int v = 0; v < NV; ++v) acc[r][v] = V_LOAD(seed + PR + v * V64_LANES);
        }
        for (int v = 0; v < NV; ++v) {
            y[v] = V_LOAD(seed + PR + PC / 2 + v * V64_LANES);
            d[v] = V_LOAD(seed + PR + PC + v * V64_LANES);
        }
        for (int64_t it = 0; it < rounds; ++it) {
            for (int r = 0; r < PR; ++r)
                for (int v = 0; v < NV; ++v) acc[r][v] = V_MIN(V_ADD(x[r], y[v]), acc[r][v]);
            for (int v = 0; v < NV; ++v) y[v] = V_ADD(y[v], d[v]);
        }
        double lanes[V64_LANES], best = seed[PR];
        for (int r = 0; r < PR; ++r)
            for (int v = 0; v < NV; ++v) {
                V_STORE(lanes, acc[r][v]);
                for (int l = 0; l < V64_LANES; ++l) best = lanes[l] < best ? lanes[l] : best;
            }
#pragma omp critical
        *out = best < *out ? best : *out;
    }
    return 0;
}

/* ``rounds`` links of one dependent chain of dtw_best.c's cell (two mins, one addition);
 * seed = {up, diag, cost}: with up and diag large, acc grows by cost a link, exactly. */
double minplus_chain_f64(int64_t rounds, const double *seed) {
    const double up = seed[0], diag = seed[1], cost = seed[2];
    double acc = 0.0;
    for (int64_t it = 0; it < rounds; ++it) {
        double best = up < acc ? up : acc;
        best = diag < best ? diag : best;
        acc = cost + best;
    }
    return acc;
}
