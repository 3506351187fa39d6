// Moazeni (2013), chapter 3: the GPU kernels of non-serial polyadic dynamic programming
// (pfresample_studies.moazeni2013.dp_gpu launches them; dp.py is their CPU reference,
// and its docstring gives the equations). One matrix of side ld, row-major, in the
// transformed domain of eq. 2; T is float (+inf: "no value yet") or int (INT_INF).
// Every candidate is one addition of two stored values and the rest are minima, so the
// result is the CPU's bit for bit whatever the order of evaluation, but for the sign of a
// zero where -0.0 and +0.0 tie (equal as floats: which one a minimum keeps depends on its
// order, in NumPy as here).

// delay_ns: Fig 12's launches are enqueued behind it (experiments.fig12_cell)
#include "delay.cuh"

#define DP_TILE 16

template <typename T> struct Inf;
template <> struct Inf<float> { __device__ static float value() { return __int_as_float(0x7f800000); } };
template <> struct Inf<int> { __device__ static int value() { return 1073741823; } };

template <typename T> __device__ __forceinline__ T dp_min(T a, T b) { return b < a ? b : a; }

// min(c, a + b): one instruction for int32 on Hopper (the DPX __viaddmin_s32; emulated in
// two elsewhere), an add and a minimum for float.
__device__ __forceinline__ int dp_addmin(int a, int b, int c) { return __viaddmin_s32(a, b, c); }
__device__ __forceinline__ float dp_addmin(float a, float b, float c) { return dp_min(c, a + b); }

// *p = min(*p, v) atomically, for targets several thread blocks lower at once. Order of
// the bits: a float whose sign bit is clear (+0.0 ... +inf) orders as its bits read as a
// signed int, and every float whose sign bit is set reads as a negative int, below them
// all; among those (-0.0 ... -inf) the larger the bits read unsigned, the smaller the
// float, and every sign-clear float reads unsigned below 0x80000000 = -0.0's bits. So for
// v with the sign bit clear, atomicMin on the signed bits, and for v with it set,
// atomicMax on the unsigned bits, each leave min(*p, v) in *p whatever *p holds, in the
// total order -inf < ... < -0.0 < +0.0 < ... < +inf (no NaN reaches here: the inputs are
// finite and "no value" is +inf, whose sums are +inf). Each atomic is that minimum, which
// commutes and associates, so the result is the same bits in any order of the blocks; on
// a tie of -0.0 with +0.0, -0.0 wins (the two compare equal, as the CPU checks compare).
// The branch tests the sign bit, not v >= 0: -0.0 >= 0 holds, and -0.0's bits read signed
// are INT_MIN, which would overwrite a negative value another block wrote.
__device__ __forceinline__ void dp_atomic_min(int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void dp_atomic_min(float* p, float v) {
    if (__float_as_int(v) >= 0) atomicMin(reinterpret_cast<int*>(p), __float_as_int(v));
    else atomicMax(reinterpret_cast<unsigned int*>(p), __float_as_uint(v));
}

// Eq. 2 inside each diagonal block (I, I) of size s, I = first + blockIdx.x: one thread
// block a diagonal block, one thread a row, the diagonals d = 2 ... s - 1 in turn.
template <typename T>
__global__ void dp_diagonal(T* m, long long ld, int s, int first) {
    const long long o = (long long)(first + blockIdx.x) * s;
    for (int d = 2; d < s; ++d) {
        for (int r = threadIdx.x; r + d < s; r += blockDim.x) {
            const long long i = o + r, j = o + r + d;
            T best = m[i * ld + j];
            for (long long k = i + 1; k < j; ++k) best = dp_min(best, m[i * ld + k] + m[k * ld + j]);
            m[i * ld + j] = best;
        }
        __syncthreads();
    }
}

// Min-plus products (Definition 1) into p x p targets, one target a job:
// jobs[job * (2 + 4 * terms) ...] = C's row and column, then for each term A's and B's
// corners; C = min(C, min over terms and k of A[i, k] + B[k, j]). The terms of a job
// are summed into its C (the bottom-up strip: K = I+1 ... J-1); no C is an A or a B of
// the same launch. blockIdx.z = job * split + part: part takes terms part, part + split,
// ..., so that a strip of few jobs and many terms still fills the GPU; with split > 1
// the parts lower C atomically (dp_atomic_min), with split = 1 they store it.
// DP_TILE x DP_TILE threads a tile of C, A and B tiles through shared memory.
template <typename T>
__global__ void dp_minplus(T* m, long long ld, int p, const int* jobs, int terms, int split) {
    __shared__ T a_tile[DP_TILE][DP_TILE];
    __shared__ T b_tile[DP_TILE][DP_TILE];
    const int part = blockIdx.z % split;
    const int* job = jobs + (long long)(blockIdx.z / split) * (2 + 4 * terms);
    const int r = blockIdx.y * DP_TILE + threadIdx.y, c = blockIdx.x * DP_TILE + threadIdx.x;
    const long long ci = job[0] + r, cj = job[1] + c;
    const T inf = Inf<T>::value();
    T best = (r < p && c < p) ? m[ci * ld + cj] : inf;
    for (int t = part; t < terms; t += split) {
        const long long ar = job[2 + 4 * t], ac = job[3 + 4 * t];
        const long long br = job[4 + 4 * t], bc = job[5 + 4 * t];
        for (int k0 = 0; k0 < p; k0 += DP_TILE) {
            const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
            a_tile[threadIdx.y][threadIdx.x] =
                (r < p && ka < p) ? m[(ar + r) * ld + ac + ka] : inf;
            b_tile[threadIdx.y][threadIdx.x] =
                (kb < p && c < p) ? m[(br + kb) * ld + bc + c] : inf;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < DP_TILE; ++k)
                best = dp_addmin(a_tile[threadIdx.y][k], b_tile[k][threadIdx.x], best);
            __syncthreads();
        }
    }
    if (r < p && c < p) {
        if (split == 1) m[ci * ld + cj] = best;
        else dp_atomic_min(&m[ci * ld + cj], best);
    }
}

// dp_minplus register-blocked, for p a multiple of DP_RB: DP_RB x DP_RB of C a thread
// block of 256 threads, each thread 4 x 4 elements of C (rows ty + 16 i, columns
// tx + 16 j: the shared reads broadcast, the global ones coalesce), A and B through
// shared memory DP_RK columns (rows) at a time; A stored transposed with one column of
// padding so that its 16 consecutive k of a row land in 16 banks. Per k a thread reads
// 8 values and does 16 additions and 16 minima, where dp_minplus reads 2 for 1 and 1.
#define DP_RB 64
#define DP_RK 16

// Jobs, terms and split as in dp_minplus.
template <typename T>
__global__ void dp_minplus_rb(T* m, long long ld, int p, const int* jobs, int terms, int split) {
    __shared__ T as[DP_RK][DP_RB + 1];
    __shared__ T bs[DP_RK][DP_RB];
    const int part = blockIdx.z % split;
    const int* job = jobs + (long long)(blockIdx.z / split) * (2 + 4 * terms);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long row0 = (long long)blockIdx.y * DP_RB, col0 = (long long)blockIdx.x * DP_RB;
    const long long ci = job[0] + row0, cj = job[1] + col0;
    T acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = m[(ci + ty + 16 * i) * ld + cj + tx + 16 * j];
    for (int t = part; t < terms; t += split) {
        const long long ar = job[2 + 4 * t] + row0, ac = job[3 + 4 * t];
        const long long br = job[4 + 4 * t], bc = job[5 + 4 * t] + col0;
        for (int k0 = 0; k0 < p; k0 += DP_RK) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int e = threadIdx.x + 256 * q;
                const int ra = e / DP_RK, ka = e % DP_RK;  // A: 16 consecutive k a row
                as[ka][ra] = m[(ar + ra) * ld + ac + k0 + ka];
                const int kb = e / DP_RB, cb = e % DP_RB;  // B: 64 consecutive columns a k
                bs[kb][cb] = m[(br + k0 + kb) * ld + bc + cb];
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < DP_RK; ++k) {
                T a[4], b[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) a[i] = as[k][ty + 16 * i];
#pragma unroll
                for (int j = 0; j < 4; ++j) b[j] = bs[k][tx + 16 * j];
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) acc[i][j] = dp_addmin(a[i], b[j], acc[i][j]);
            }
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            T* target = &m[(ci + ty + 16 * i) * ld + cj + tx + 16 * j];
            if (split == 1) *target = acc[i][j];
            else dp_atomic_min(target, acc[i][j]);
        }
}

// Eq. 5 for p x p rectangles C between a complete upper-left triangle A (C's rows) and
// a complete lower-right triangle B (C's columns), one thread block a job (blockIdx.x;
// jobs[6 * job ...] = C's, A's and B's corners): element (r, c) needs the elements below
// it in its column and left of it in its row, so the anti-diagonals t = (p - 1 - r) + c
// are solved in turn, one thread an element of the current one.
template <typename T>
__global__ void dp_triangular(T* m, long long ld, int p, const int* jobs) {
    const int* job = jobs + 6LL * blockIdx.x;
    const long long cr = job[0], cc = job[1], ar = job[2], ac = job[3], br = job[4], bc = job[5];
    for (int t = 0; t < 2 * p - 1; ++t) {
        const int r_lo = max(0, p - 1 - t), r_hi = min(p, 2 * p - 1 - t);
        for (int r = r_lo + threadIdx.x; r < r_hi; r += blockDim.x) {
            const int c = t - (p - 1 - r);
            T best = m[(cr + r) * ld + cc + c];
            for (int q = r + 1; q < p; ++q)  // k in A's block below row r
                best = dp_min(best, m[(ar + r) * ld + ac + q] + m[(cr + q) * ld + cc + c]);
            for (int q = 0; q < c; ++q)  // k in B's block left of column c
                best = dp_min(best, m[(cr + r) * ld + cc + q] + m[(br + q) * ld + bc + c]);
            m[(cr + r) * ld + cc + c] = best;
        }
        __syncthreads();
    }
}

// dp_triangular with the job's C, A and B in shared memory (dynamic, 3 p (p + 1)
// elements, rows padded by one so that a column's reads fall in different banks) and
// DP_TRI_LANES threads an element: the lanes take every DP_TRI_LANES-th k of the
// element's two sums and combine their minima by warp shuffles. The anti-diagonals
// still run in turn, but each step reads shared memory instead of global and is a
// quarter as long.
#define DP_TRI_LANES 4

template <typename T>
__global__ void dp_triangular_shared(T* m, long long ld, int p, const int* jobs) {
    extern __shared__ unsigned char dp_shared[];
    const int w = p + 1;
    T* cs = reinterpret_cast<T*>(dp_shared);
    T* as = cs + p * w;
    T* bs = as + p * w;
    const int* job = jobs + 6LL * blockIdx.x;
    const long long cr = job[0], cc = job[1], ar = job[2], ac = job[3], br = job[4], bc = job[5];
    for (int e = threadIdx.x; e < p * p; e += blockDim.x) {
        const int r = e / p, c = e % p;
        cs[r * w + c] = m[(cr + r) * ld + cc + c];
        as[r * w + c] = m[(ar + r) * ld + ac + c];
        bs[r * w + c] = m[(br + r) * ld + bc + c];
    }
    __syncthreads();
    const T inf = Inf<T>::value();
    const int lane = threadIdx.x % DP_TRI_LANES, groups = blockDim.x / DP_TRI_LANES;
    for (int t = 0; t < 2 * p - 1; ++t) {
        const int r_lo = max(0, p - 1 - t), r_hi = min(p, 2 * p - 1 - t);
        // the same trip count in every thread, so that the shuffles see whole warps
        for (int base = r_lo; base < r_hi; base += groups) {
            const int r = base + threadIdx.x / DP_TRI_LANES;
            const bool active = r < r_hi;
            const int c = t - (p - 1 - r);
            T best = inf;
            if (active) {
                for (int q = r + 1 + lane; q < p; q += DP_TRI_LANES)  // A's row r, C's column c
                    best = dp_addmin(as[r * w + q], cs[q * w + c], best);
                for (int q = lane; q < c; q += DP_TRI_LANES)  // C's row r, B's column c
                    best = dp_addmin(cs[r * w + q], bs[q * w + c], best);
            }
#pragma unroll
            for (int o = 1; o < DP_TRI_LANES; o *= 2)
                best = dp_min(best, __shfl_xor_sync(0xffffffffu, best, o));
            if (active && lane == 0) cs[r * w + c] = dp_min(cs[r * w + c], best);
        }
        __syncthreads();
    }
    for (int e = threadIdx.x; e < p * p; e += blockDim.x) {
        const int r = e / p, c = e % p;
        m[(cr + r) * ld + cc + c] = cs[r * w + c];
    }
}
