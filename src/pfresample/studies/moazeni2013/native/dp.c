/* Moazeni (2013), chapter 3: eq. 2 on the CPU, compiled -- the single-thread
 * and multi-thread baselines of the GPU speed-ups (pfresample.studies.
 * moazeni2013.native builds and loads this file).
 *
 * m'[i, j] = min(m'[i, j], min_{i < k < j} m'[i, k] + m'[k, j]), one diagonal
 * d = j - i at a time; the entries of a diagonal are independent, so OpenMP
 * shares them among threads. The column m'[., j] is read from a transposed
 * copy t[j][k] = m'[k][j] so that the inner loop reads two contiguous rows,
 * and runs in LANES independent minima that the compiler vectorises: every
 * candidate is still one addition of two stored values, and minima are exact,
 * so the result equals the NumPy reference bit for bit. */
#include <stdint.h>
#include <stdlib.h>

#define LANES 16
/* A diagonal is shared among threads only when its candidates are worth a barrier:
 * (n1 - d) entries of d - 1 candidates each. */
#define MIN_PARALLEL_WORK 32768
static inline int work(int64_t n1, int64_t d) { return (n1 - d) * (d - 1) >= MIN_PARALLEL_WORK; }

#define DEFINE_SOLVE(NAME, T, INF)                                                     \
    int NAME(T *m, int64_t n1, int threads) {                                          \
        T *t = (T *)malloc(sizeof(T) * (size_t)n1 * (size_t)n1);                       \
        if (!t) return 1;                                                              \
        for (int64_t i = 0; i < n1; ++i)                                               \
            for (int64_t j = 0; j < n1; ++j) t[j * n1 + i] = m[i * n1 + j];            \
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
                m[i * n1 + j] = best;                                                  \
                t[j * n1 + i] = best;                                                  \
            }                                                                          \
        }                                                                              \
        free(t);                                                                       \
        return 0;                                                                      \
    }

DEFINE_SOLVE(solve_f32, float, __builtin_inff())
DEFINE_SOLVE(solve_i32, int32_t, (int32_t)1073741823)
