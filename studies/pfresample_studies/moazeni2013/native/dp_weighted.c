/* Moazeni (2013), chapter 3, on real instances: the recurrence with its triangle term,
 *
 *     t[i][j] = min over i < k < j of (t[i][k] + t[k][j]) + w(i, k, j),  t[i][i+1] = 0,
 *
 * the best CPU code we can write for it, on every core: dp_blocked.c's order (64 x 64
 * blocks, block-major; the diagonal blocks, then each block-diagonal's min-plus products
 * and then its triangular parts, OpenMP over a strip's tiles and blocks), each candidate
 * carrying w. The matrix is the polygon's: vertex i to vertex j, so eq. 2's transformed
 * domain is this t as it stands (k strictly between i and j).
 *
 * Two families (dp_weighted.py gives the NumPy reference and the textbook solver):
 *   chain     (int32): w = (p[i] * p[j]) * p[k], the matrix-chain order of matrices
 *                      p[0] x p[1], ..., p[n-2] x p[n-1]: a triangulation of the n-gon
 *                      whose triangles cost the product of their vertices' weights;
 *   perimeter (float32): w = (d[i][k] + d[k][j]) + d[i][j], d the vertices' distances:
 *                      the triangulation of least total perimeter.
 * A candidate is (t[i][k] + t[k][j]) + w, in that order, everywhere (float32 has only
 * additions here: nothing for a compiler to fuse), and the rest are minima, so the matrix
 * is the reference's bit for bit whatever the order, blocks or threads. The family's
 * arrays are padded with zeros to whole blocks, so that every w that touches the padding
 * is 0: the padding's "no value" sums (INT_INF + INT_INF < 2^31) never overflow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S 64
#define SS (S * S)
#if defined(__AVX512F__)
#define TR 4 /* a tile: 4 rows x 32 columns, w's per-target part beside the accumulators */
#define TC 32
#else
#define TR 2
#define TC 16
#endif
#define TILES ((S / TR) * (S / TC))

/* w's three parts, from the padded arrays: x depends on (i, k), y on (k, j), z on (i, j) */
#define CHAIN_X(f, i, k) ((f)[k])
#define CHAIN_Y(f, N, k, j) 0
#define CHAIN_Z(f, N, i, j) ((f)[i] * (f)[j])
#define CHAIN_W(x, y, z) ((z) * (x))
#define PERIM_X(f, N, i, k) ((f)[(size_t)(i) * (size_t)(N) + (size_t)(k)])
#define PERIM_Y(f, N, k, j) ((f)[(size_t)(k) * (size_t)(N) + (size_t)(j)])
#define PERIM_Z(f, N, i, j) ((f)[(size_t)(i) * (size_t)(N) + (size_t)(j)])
#define PERIM_W(x, y, z) (((x) + (y)) + (z))
#define CHAIN_XN(f, N, i, k) CHAIN_X(f, i, k)

#define DEFINE_WEIGHTED(SUF, T, INF, XF, YF, ZF, WF)                                            \
    static inline T *blk_##SUF(T *W, int64_t B, int64_t I, int64_t J) {                         \
        return W + ((size_t)I * (size_t)B + (size_t)J) * SS;                                    \
    }                                                                                           \
    /* eq. 4 on one register tile of block (I, J), every K in (I, K1) */                       \
    static void rect_tile_##SUF(T *W, const T *f, int64_t N, int64_t B, int64_t I, int64_t J, \
                                int r0, int c0, int64_t K1, int noweight) {                     \
        T acc[TR][TC], z[TR][TC];                                                               \
        T *c = blk_##SUF(W, B, I, J) + r0 * S + c0;                                             \
        const int64_t i0 = I * S + r0, j0 = J * S + c0;                                         \
        for (int r = 0; r < TR; ++r)                                                            \
            for (int q = 0; q < TC; ++q) {                                                      \
                acc[r][q] = c[r * S + q];                                                       \
                z[r][q] = noweight ? 0 : ZF(f, N, i0 + r, j0 + q);                              \
            }                                                                                   \
        for (int64_t K = I + 1; K < K1; ++K) {                                                  \
            const T *a = blk_##SUF(W, B, I, K) + r0 * S;                                        \
            const T *b = blk_##SUF(W, B, K, J) + c0;                                            \
            for (int k = 0; k < S; ++k) {                                                       \
                const int64_t kk = K * S + k;                                                   \
                const T *brow = b + k * S;                                                      \
                T yv[TC];                                                                       \
                for (int q = 0; q < TC; ++q) yv[q] = noweight ? 0 : YF(f, N, kk, j0 + q);       \
                for (int r = 0; r < TR; ++r) {                                                  \
                    const T x = a[r * S + k];                                                   \
                    const T xw = noweight ? 0 : XF(f, N, i0 + r, kk);                           \
                    for (int q = 0; q < TC; ++q) {                                              \
                        const T v = (x + brow[q]) + WF(xw, yv[q], z[r][q]);                     \
                        acc[r][q] = v < acc[r][q] ? v : acc[r][q];                              \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (int r = 0; r < TR; ++r)                                                            \
            for (int q = 0; q < TC; ++q) c[r * S + q] = acc[r][q];                              \
    }                                                                                           \
    /* row[q] = min(row[q], (x + y[q]) + w(i, kk, j0 + q)) for q in (k, S), masked */          \
    static inline void push_##SUF(T *restrict row, const T *restrict y, T x, int k,            \
                                  const T *f, int64_t N, int64_t i, int64_t kk, int64_t j0,     \
                                  const T *restrict zrow, int noweight) {                       \
        const T xw = noweight ? 0 : XF(f, N, i, kk);                                            \
        for (int q = 0; q < S; ++q) {                                                           \
            const T wv = noweight ? 0 : WF(xw, YF(f, N, kk, j0 + q), zrow[q]);                  \
            const T v = (x + y[q]) + wv;                                                        \
            row[q] = q > k && v < row[q] ? v : row[q];                                          \
        }                                                                                       \
    }                                                                                           \
    /* eq. 5 on block C = (I, I + D): rows bottom to top; row r takes the rows below it    \
     * (k in block I), then its own left part (k in block J) column by column, each final  \
     * when pushed. flaw 2 drops the rows below, 3 the left part */                          \
    static void triangular_##SUF(T *W, const T *f, int64_t N, int64_t B, int64_t I,          \
                                 int64_t D, int flaw, int noweight) {                           \
        const int64_t J = I + D;                                                                \
        T *c = blk_##SUF(W, B, I, J);                                                           \
        const T *ai = blk_##SUF(W, B, I, I), *bj = blk_##SUF(W, B, J, J);                       \
        T row[S], zrow[S];                                                                      \
        for (int r = S - 1; r >= 0; --r) {                                                      \
            const int64_t i = I * S + r;                                                        \
            memcpy(row, c + r * S, sizeof row);                                                 \
            for (int q = 0; q < S; ++q) zrow[q] = noweight ? 0 : ZF(f, N, i, J * S + q);        \
            for (int k = r + 1; k < S && flaw != 2; ++k) {                                      \
                const int64_t kk = I * S + k;                                                   \
                const T x = ai[r * S + k];                                                      \
                const T xw = noweight ? 0 : XF(f, N, i, kk);                                    \
                for (int q = 0; q < S; ++q) {                                                   \
                    const T wv = noweight ? 0 : WF(xw, YF(f, N, kk, J * S + q), zrow[q]);       \
                    const T v = (x + c[k * S + q]) + wv;                                        \
                    row[q] = v < row[q] ? v : row[q];                                           \
                }                                                                               \
            }                                                                                   \
            for (int k = 0; k + 1 < S && flaw != 3; ++k)                                        \
                push_##SUF(row, bj + k * S, row[k], k, f, N, i, J * S + k, J * S, zrow,         \
                           noweight);                                                           \
            memcpy(c + r * S, row, sizeof row);                                                 \
        }                                                                                       \
    }                                                                                           \
    /* the recurrence inside diagonal block (I, I): rows bottom to top, each pushing its   \
     * own entries left to right, each final when pushed */                                     \
    static void diagonal_##SUF(T *W, const T *f, int64_t N, int64_t B, int64_t I,            \
                               int noweight) {                                                  \
        T *c = blk_##SUF(W, B, I, I);                                                           \
        T zrow[S];                                                                              \
        for (int r = S - 3; r >= 0; --r) {                                                      \
            const int64_t i = I * S + r;                                                        \
            for (int q = 0; q < S; ++q) zrow[q] = noweight ? 0 : ZF(f, N, i, I * S + q);        \
            for (int k = r + 1; k + 1 < S; ++k)                                                 \
                push_##SUF(c + r * S, c + k * S, c[r * S + k], k, f, N, i, I * S + k, I * S,    \
                           zrow, noweight);                                                     \
        }                                                                                       \
    }                                                                                           \
    /* m: n x n, row-major, solved in place (its upper triangle j > i + 1; t[i][i+1] and   \
     * the rest as they come); f: the family's array, n (chain) or n x n (perimeter).        \
     * flaw (the tests' negative controls; 0 in use): 1 drops the last product of every     \
     * block (K = J - 1), 2 eq. 5's terms from the rows below, 3 its left terms, 4 w. */     \
    int solve_weighted_##SUF(T *m, const T *f, int64_t n, int threads, int flaw, int matrix) { \
        if (n < 1 || threads < 1) return 2;                                                     \
        const int64_t B = (n + S - 1) / S, N = B * S;                                           \
        const int noweight = flaw == 4;                                                         \
        T *W = (T *)malloc(sizeof(T) * (size_t)N * (size_t)N);                                  \
        T *g = (T *)calloc(matrix ? (size_t)N * (size_t)N : (size_t)N, sizeof(T));              \
        if (!W || !g) {                                                                         \
            free(W);                                                                            \
            free(g);                                                                            \
            return 1;                                                                           \
        }                                                                                       \
        _Pragma("omp parallel num_threads(threads)")                                            \
        {                                                                                       \
            /* the family's array padded with zeros: w is 0 wherever it touches the padding */ \
            if (matrix) {                                                                       \
                _Pragma("omp for schedule(static)")                                             \
                for (int64_t i = 0; i < n; ++i)                                                 \
                    memcpy(g + (size_t)i * (size_t)N, f + (size_t)i * (size_t)n,                \
                           sizeof(T) * (size_t)n);                                              \
            } else {                                                                            \
                _Pragma("omp single")                                                           \
                memcpy(g, f, sizeof(T) * (size_t)n);                                            \
            }                                                                                   \
            /* copy in: the upper triangle j > i, "no value" elsewhere (padding included) */    \
            _Pragma("omp for schedule(dynamic, 1)")                                             \
            for (int64_t I = 0; I < B; ++I)                                                     \
                for (int64_t J = I; J < B; ++J) {                                               \
                    T *c = blk_##SUF(W, B, I, J);                                               \
                    for (int r = 0; r < S; ++r)                                                 \
                        for (int q = 0; q < S; ++q) {                                           \
                            const int64_t i = I * S + r, j = J * S + q;                         \
                            c[r * S + q] = i < n && j > i && j < n ? m[i * n + j] : INF;        \
                        }                                                                       \
                }                                                                               \
            _Pragma("omp for schedule(dynamic, 1)")                                             \
            for (int64_t I = 0; I < B; ++I) diagonal_##SUF(W, g, N, B, I, noweight);            \
            for (int64_t D = 1; D < B; ++D) {                                                   \
                const int64_t blocks = B - D;                                                   \
                if (D >= 2) {                                                                   \
                    _Pragma("omp for schedule(dynamic, 1)")                                     \
                    for (int64_t t = 0; t < blocks * TILES; ++t) {                              \
                        const int64_t I = t / TILES, tile = t % TILES;                          \
                        rect_tile_##SUF(W, g, N, B, I, I + D, (int)(tile / (S / TC)) * TR,      \
                                        (int)(tile % (S / TC)) * TC, I + D - (flaw == 1),        \
                                        noweight);                                              \
                    }                                                                           \
                }                                                                               \
                _Pragma("omp for schedule(dynamic, 1)")                                         \
                for (int64_t I = 0; I < blocks; ++I)                                            \
                    triangular_##SUF(W, g, N, B, I, D, flaw, noweight);                         \
            }                                                                                   \
            /* copy out: the upper triangle j > i + 1 (the rest of m is left as it came) */     \
            _Pragma("omp for schedule(dynamic, 16)")                                            \
            for (int64_t i = 0; i < n; ++i)                                                     \
                for (int64_t j = i + 2; j < n; ++j)                                             \
                    m[i * n + j] = blk_##SUF(W, B, i / S, j / S)[(i % S) * S + j % S];          \
        }                                                                                       \
        free(W);                                                                                \
        free(g);                                                                                \
        return 0;                                                                               \
    }

DEFINE_WEIGHTED(chain, int32_t, (int32_t)1073741823, CHAIN_XN, CHAIN_Y, CHAIN_Z, CHAIN_W)
DEFINE_WEIGHTED(perimeter, float, __builtin_inff(), PERIM_X, PERIM_Y, PERIM_Z, PERIM_W)
