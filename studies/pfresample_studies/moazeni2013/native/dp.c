/* Moazeni (2013), chapter 3: eq. 2 on the CPU, compiled -- the single-thread
 * and multi-thread baselines of the GPU speed-ups (pfresample_studies.
 * moazeni2013.native builds and loads this file).
 *
 * m'[i, j] = min(m'[i, j], min_{i < k < j} m'[i, k] + m'[k, j]), one diagonal
 * d = j - i at a time; the entries of a diagonal are independent, so OpenMP
 * shares them among threads. The column m'[., j] is read from a transposed
 * copy t[j][k] = m'[k][j] so that the inner loop reads two contiguous rows,
 * and runs in LANES independent minima that the compiler vectorises: every
 * candidate is still one addition of two stored values, and minima are exact,
 * so the result equals the NumPy reference bit for bit.
 *
 * The sign of a zero: a minimum does not fix it (-0 == +0), and which zero an order
 * meets first differs between orders (NumPy's and this code's did). Here, as in the
 * best CPU code (dp_blocked.c), an entry whose value is 0 is -0 exactly when its
 * initial value is -0 or one of its candidates is (-0) + (-0): IEEE 754-2019's minimum,
 * which orders -0 below +0, so that every order gives the same bits. The minima below
 * keep the initial value on a tie, so an initial -0 survives; a +0 result is rescanned
 * for a (-0) + (-0) candidate only where the input holds a -0 at all (without one no
 * sum can make one), so inputs without -0 run exactly as before. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zero_sign.h"

#define LANES 16
/* A diagonal is shared among threads only when its candidates are worth a barrier:
 * (n1 - d) entries of d - 1 candidates each. */
#define MIN_PARALLEL_WORK 32768
static inline int work(int64_t n1, int64_t d) { return (n1 - d) * (d - 1) >= MIN_PARALLEL_WORK; }

#define DEFINE_SOLVE(NAME, T, INF, NEGZERO, POSZERO)                                   \
    int NAME(T *m, int64_t n1, int threads) {                                          \
        T *t = (T *)malloc(sizeof(T) * (size_t)n1 * (size_t)n1);                       \
        if (!t) return 1;                                                              \
        int negz = 0;                                                                  \
        for (int64_t i = 0; i < n1; ++i)                                               \
            for (int64_t j = 0; j < n1; ++j) {                                         \
                t[j * n1 + i] = m[i * n1 + j];                                         \
                negz |= j > i && NEGZERO(m[i * n1 + j]);                               \
            }                                                                          \
        for (int64_t d = 2; d < n1; ++d) {                                             \
            _Pragma("omp parallel for schedule(dynamic, 16) num_threads(threads) if(work(n1, d))") \
            for (int64_t i = 0; i < n1 - d; ++i) {                                     \
                const int64_t j = i + d;                                               \
                const T *row = m + i * n1, *col = t + j * n1;                          \
                T lane[LANES];                                                         \
                for (int l = 0; l < LANES; ++l) lane[l] = INF;                         \
                int64_t k = i + 1;                                                     \
                for (; k + LANES <= j; k += LANES)                                     \
                    for (int l = 0; l < LANES; ++l) {                                  \
                        T v = row[k + l] + col[k + l];                                 \
                        lane[l] = v < lane[l] ? v : lane[l];                           \
                    }                                                                  \
                T best = m[i * n1 + j];                                                \
                for (; k < j; ++k) {                                                   \
                    T v = row[k] + col[k];                                             \
                    best = v < best ? v : best;                                        \
                }                                                                      \
                for (int l = 0; l < LANES; ++l) best = lane[l] < best ? lane[l] : best; \
                if (negz && POSZERO(best))                                             \
                    for (int64_t q = i + 1; q < j; ++q)                                \
                        if (NEGZERO(row[q]) && NEGZERO(col[q])) {                      \
                            best = -best;                                              \
                            break;                                                     \
                        }                                                              \
                m[i * n1 + j] = best;                                                  \
                t[j * n1 + i] = best;                                                  \
            }                                                                          \
        }                                                                              \
        free(t);                                                                       \
        return 0;                                                                      \
    }

DEFINE_SOLVE(solve_f32, float, __builtin_inff(), is_negzero, is_poszero)
DEFINE_SOLVE(solve_i32, int32_t, (int32_t)1073741823, never, never)
