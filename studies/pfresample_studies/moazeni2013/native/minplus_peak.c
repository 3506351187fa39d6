/* The core's min-plus peak, the bound the best CPU code of chapter 3 is held to
 * (bench/moazeni2013_best_cpu.py): built with the same compiler and flags as
 * dp_blocked.c, the same register tile of accumulators (PR rows x PC columns: acc =
 * min(acc, x_r + y), x_r broadcast and y in registers) with no memory operand at all;
 * y advances by d each round (PC / lanes additions a round, 1/(2 PR) of the work, counted
 * by the caller as half a min-plus each) so that the compiler cannot hoist the sums.
 * Each of ``threads`` OpenMP threads runs ``rounds`` rounds on its own registers. */
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
