/* Moazeni (2013), chapter 3: the best CPU code we can write for eq. 2 -- the CPU twin
 * of the GPU's strip kernel (studies/pfresample_studies/moazeni2013/kernels/dp.cu), on every core.
 *
 * The transformed matrix m' (n1 x n1, row-major, in place) is copied into 64 x 64
 * blocks, each block contiguous (block-major: a block is 4 pages, so a product streams
 * whole blocks instead of touching a page a row), padded with "no value" to whole
 * blocks. Then, as dp.cu: the diagonal blocks (eq. 2 inside a block), and for each
 * block-diagonal D = 1, 2, ...: every block (I, I + D) takes eq. 4 (min-plus products
 * A(I, K) x A(K, J), K = I+1 ... J-1) and then eq. 5 (the triangular part). The blocks
 * of a strip are independent: OpenMP shares the products' register tiles (TR rows x TC
 * columns of one block, every K of it) and then the blocks' triangular parts among the
 * threads. A tile's TR x TC accumulators stay in registers for its whole K range; the
 * inner loop is one broadcast of A[r][k] and TC / lanes additions and minima a row, in
 * plain C that gcc -O3 -march=native vectorises (vaddps/vminps, vpaddd/vpminsd).
 *
 * Exact: every candidate is one addition of two final stored values and the rest are
 * minima, so the values equal dp.c's (and NumPy's) for any order, block and thread
 * count. The sign of a zero is not fixed by a minimum (-0 == +0): here, as in dp.c, an
 * entry whose value is 0 is -0 exactly when its initial value is -0 or one of its
 * candidates is (-0) + (-0) -- IEEE 754-2019's minimum, which orders -0 below +0, over
 * the initial value and every candidate. The accumulators keep their initial value on
 * a tie (acc = v < acc ? v : acc), so an initial -0 survives; the rest is a scan,
 * run only where the input holds a -0 at all (without one no sum can make one). int32
 * adds through uint32 (no undefined overflow in the padding's "no value" sums). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S 64 /* block side, as the GPU's best block at n = 8,192 */
#define SS (S * S)
#if defined(__AVX512F__)
#define TR 8  /* a tile: 8 rows x 32 columns = 16 zmm accumulators */
#define TC 32
#else
#define TR 4  /* 4 x 16 = 8 ymm accumulators */
#define TC 16
#endif
#define TILES ((S / TR) * (S / TC))
#define TRI_GROUP 4 /* blocks whose triangular parts one thread interleaves */

#include "zero_sign.h"

#define ADD_f32(a, b) ((a) + (b))
#define ADD_i32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))

#define DEFINE_BLOCKED(SUF, T, INF, NEGZERO, POSZERO)                                           \
    /* the block (I, J) of the block-major copy, B blocks a side */                             \
    static inline T *blk_##SUF(T *W, int64_t B, int64_t I, int64_t J) {                         \
        return W + ((size_t)I * (size_t)B + (size_t)J) * SS;                                    \
    }                                                                                           \
    static inline T at_##SUF(T *W, int64_t B, int64_t i, int64_t j) {                           \
        return blk_##SUF(W, B, i / S, j / S)[(i % S) * S + j % S];                              \
    }                                                                                           \
    /* eq. 4 on one register tile: C[r0.., c0..] = min(C, min_K A(I, K) x A(K, J)), K < K1 */   \
    static void rect_tile_##SUF(T *W, int64_t B, int64_t I, int64_t J, int r0, int c0,          \
                                int64_t K1) {                                                   \
        T acc[TR][TC];                                                                          \
        T *c = blk_##SUF(W, B, I, J) + r0 * S + c0;                                             \
        for (int r = 0; r < TR; ++r)                                                            \
            for (int q = 0; q < TC; ++q) acc[r][q] = c[r * S + q];                              \
        for (int64_t K = I + 1; K < K1; ++K) {                                                  \
            const T *a = blk_##SUF(W, B, I, K) + r0 * S;                                        \
            const T *b = blk_##SUF(W, B, K, J) + c0;                                            \
            for (int k = 0; k < S; ++k) {                                                       \
                const T *brow = b + k * S;                                                      \
                for (int r = 0; r < TR; ++r) {                                                  \
                    const T x = a[r * S + k];                                                   \
                    for (int q = 0; q < TC; ++q) {                                              \
                        const T v = ADD_##SUF(x, brow[q]);                                      \
                        acc[r][q] = v < acc[r][q] ? v : acc[r][q];                              \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (int r = 0; r < TR; ++r)                                                            \
            for (int q = 0; q < TC; ++q) c[r * S + q] = acc[r][q];                              \
    }                                                                                           \
    /* row[q] = min(row[q], x + y[q]) for q in (k, S): the whole row, the entries     \
     * q <= k masked off (masked vector operations: no scalar prologue, which a loop from \
     * k + 1 gets and which costs more than the masked-off work) */                          \
    static inline void push_##SUF(T *restrict row, const T *restrict y, T x, int k) {          \
        for (int q = 0; q < S; ++q) {                                                           \
            const T v = ADD_##SUF(x, y[q]);                                                     \
            row[q] = q > k && v < row[q] ? v : row[q];                                          \
        }                                                                                       \
    }                                                                                           \
    /* eq. 5 on the blocks C = (I, I + D), I = I0 ... I0 + count - 1, their chains          \
     * interleaved (a row's own part is a chain of dependent steps: the blocks' chains      \
     * overlap in the core). Each block: rows bottom to top; row r first takes the rows     \
     * below it (k in block I: A(I, I)[r][k] + C[k][:]), then its own left part (k in       \
     * block J: C[r][k] + A(J, J)[k][:]) column by column, each final when pushed */            \
    static void triangular_##SUF(T *W, int64_t B, int64_t I0, int count, int64_t D,            \
                                 int flaw /* tests: 2 drops the down terms, 1 the left */) {    \
        T rows[TRI_GROUP][S];                                                                   \
        for (int r = S - 1; r >= 0; --r) {                                                      \
            for (int g = 0; g < count; ++g) {                                                   \
                const T *c = blk_##SUF(W, B, I0 + g, I0 + g + D);                               \
                const T *ai = blk_##SUF(W, B, I0 + g, I0 + g);                                  \
                memcpy(rows[g], c + r * S, sizeof rows[g]);                                     \
                for (int k = r + 1; k < S && flaw != 2; ++k) {                                  \
                    const T x = ai[r * S + k];                                                  \
                    for (int q = 0; q < S; ++q) {                                               \
                        const T v = ADD_##SUF(x, c[k * S + q]);                                 \
                        rows[g][q] = v < rows[g][q] ? v : rows[g][q];                           \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            for (int k = 0; k + 1 < S && flaw != 1; ++k)                                         \
                for (int g = 0; g < count; ++g)                                                 \
                    push_##SUF(rows[g], blk_##SUF(W, B, I0 + g + D, I0 + g + D) + k * S,        \
                               rows[g][k], k);                                                  \
            for (int g = 0; g < count; ++g)                                                     \
                memcpy(blk_##SUF(W, B, I0 + g, I0 + g + D) + r * S, rows[g], sizeof rows[g]);   \
        }                                                                                       \
    }                                                                                           \
    /* eq. 2 inside diagonal block (I, I): rows bottom to top, each pushing its own        \
     * entries left to right, each final when pushed */                                         \
    static void diagonal_##SUF(T *W, int64_t B, int64_t I) {                                    \
        T *c = blk_##SUF(W, B, I, I);                                                           \
        for (int r = S - 3; r >= 0; --r)                                                        \
            for (int k = r + 1; k + 1 < S; ++k) push_##SUF(c + r * S, c + k * S, c[r * S + k], k); \
    }                                                                                           \
    /* the sign of the zeros of block (I, J) (see the top), in an order where every entry   \
     * an entry reads is done first: rows bottom to top, columns left to right */               \
    static void zero_signs_##SUF(T *W, int64_t B, int64_t I, int64_t J) {                       \
        T *c = blk_##SUF(W, B, I, J);                                                           \
        for (int r = S - 1; r >= 0; --r)                                                        \
            for (int q = 0; q < S; ++q) {                                                       \
                const int64_t i = I * S + r, j = J * S + q;                                     \
                if (j <= i + 1 || !POSZERO(c[r * S + q])) continue;                             \
                for (int64_t k = i + 1; k < j; ++k)                                             \
                    if (NEGZERO(at_##SUF(W, B, i, k)) && NEGZERO(at_##SUF(W, B, k, j))) {       \
                        c[r * S + q] = -c[r * S + q];                                           \
                        break;                                                                  \
                    }                                                                           \
            }                                                                                   \
    }                                                                                           \
    /* flaw (the tests' negative controls; 0 in use): 1 drops the last product of every    \
     * block (K = J - 1), 2 eq. 5's terms from the rows below, 3 its terms from the row's   \
     * own left part. (A wrong order is no such control: eq. 2 takes every split of an      \
     * interval, so in exact arithmetic most misorderings still find every partition.) */    \
    int solve_blocked_flawed_##SUF(T *m, int64_t n1, int threads, int flaw) {                   \
        if (n1 < 1 || threads < 1) return 2;                                                    \
        const int64_t B = (n1 + S - 1) / S, N = B * S;                                          \
        /* only the upper blocks are written: the lower ones' pages are never touched */       \
        T *W = (T *)malloc(sizeof(T) * (size_t)N * (size_t)N);                                  \
        if (!W) return 1;                                                                       \
        int negz = 0;                                                                           \
        _Pragma("omp parallel num_threads(threads) reduction(|: negz)")                         \
        {                                                                                       \
            /* copy in: the upper triangle j > i, "no value" elsewhere (padding included) */    \
            _Pragma("omp for schedule(dynamic, 1)")                                             \
            for (int64_t I = 0; I < B; ++I)                                                     \
                for (int64_t J = I; J < B; ++J) {                                               \
                    T *c = blk_##SUF(W, B, I, J);                                               \
                    for (int r = 0; r < S; ++r) {                                               \
                        const int64_t i = I * S + r, j0 = J * S;                                \
                        if (J > I && j0 + S <= n1) { /* inside the matrix and above i */        \
                            memcpy(c + r * S, m + i * n1 + j0, sizeof(T) * S);                  \
                            int any = 0;                                                        \
                            for (int q = 0; q < S; ++q) any |= NEGZERO(c[r * S + q]);           \
                            negz |= any;                                                        \
                            continue;                                                           \
                        }                                                                       \
                        for (int q = 0; q < S; ++q) {                                           \
                            const int64_t j = j0 + q;                                           \
                            const int ok = i < n1 && j > i && j < n1;                           \
                            const T v = ok ? m[i * n1 + j] : INF;                               \
                            negz |= ok && NEGZERO(v);                                           \
                            c[r * S + q] = v;                                                   \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
            _Pragma("omp for schedule(dynamic, 1)")                                             \
            for (int64_t I = 0; I < B; ++I) diagonal_##SUF(W, B, I);                            \
        }                                                                                       \
        _Pragma("omp parallel num_threads(threads)")                                            \
        {                                                                                       \
            if (negz) {                                                                         \
                _Pragma("omp for schedule(dynamic, 1)")                                         \
                for (int64_t I = 0; I < B; ++I) zero_signs_##SUF(W, B, I, I);                   \
            }                                                                                   \
            for (int64_t D = 1; D < B; ++D) {                                                   \
                const int64_t blocks = B - D;                                                   \
                for (int phase = 0; phase < 2; ++phase) {                                       \
                    if (phase == 0) { /* eq. 4: the products */                                 \
                        if (D < 2) continue;                                                    \
                        _Pragma("omp for schedule(dynamic, 1)")                                 \
                        for (int64_t t = 0; t < blocks * TILES; ++t) {                          \
                            const int64_t I = t / TILES, tile = t % TILES;                      \
                            rect_tile_##SUF(W, B, I, I + D, (int)(tile / (S / TC)) * TR,         \
                                            (int)(tile % (S / TC)) * TC, I + D - (flaw == 1));  \
                        }                                                                       \
                        continue;                                                               \
                    }                                                                           \
                    /* eq. 5, groups of TRI_GROUP blocks (fewer where the strip has few) */     \
                    const int64_t group = blocks >= TRI_GROUP * threads ? TRI_GROUP : 1;        \
                    _Pragma("omp for schedule(dynamic, 1)")                                     \
                    for (int64_t I0 = 0; I0 < blocks; I0 += group) {                            \
                        const int count = (int)(blocks - I0 < group ? blocks - I0 : group);     \
                        triangular_##SUF(W, B, I0, count, D, flaw == 2 ? 2 : flaw == 3);        \
                        for (int g = 0; negz && g < count; ++g)                                 \
                            zero_signs_##SUF(W, B, I0 + g, I0 + g + D);                         \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            /* copy out: the upper triangle (the rest of m is left as it came) */               \
            _Pragma("omp for schedule(dynamic, 16)")                                            \
            for (int64_t i = 0; i < n1; ++i)                                                    \
                for (int64_t J = i / S; J < B; ++J) {                                           \
                    const int64_t j0 = J * S > i + 1 ? J * S : i + 1;                           \
                    const int64_t j1 = J * S + S < n1 ? J * S + S : n1;                         \
                    if (j1 > j0)                                                                \
                        memcpy(m + i * n1 + j0, blk_##SUF(W, B, i / S, J) + (i % S) * S + (j0 - J * S), \
                               sizeof(T) * (size_t)(j1 - j0));                                  \
                }                                                                               \
        }                                                                                       \
        free(W);                                                                                \
        return 0;                                                                               \
    }                                                                                           \
    int solve_blocked_##SUF(T *m, int64_t n1, int threads) {                                    \
        return solve_blocked_flawed_##SUF(m, n1, threads, 0);                                   \
    }

DEFINE_BLOCKED(f32, float, __builtin_inff(), is_negzero, is_poszero)
DEFINE_BLOCKED(i32, int32_t, (int32_t)1073741823, never, never)
