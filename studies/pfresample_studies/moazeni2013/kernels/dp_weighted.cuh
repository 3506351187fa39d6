// Moazeni (2013) chapter 3 on real instances: dp.cu's strip kernels with the triangle
// term w(i, k, j) in every candidate,
//     t[i][j] = min over i < k < j of (t[i][k] + t[k][j]) + w(i, k, j),  t[i][i+1] = 0,
// for a family F (matrix_chain.cu, triangulation.cu) that gives w's parts from its
// array f (padded with zeros to the matrix's side ld, so that w is 0 wherever it
// touches the padding and the padding's "no value" sums cannot overflow):
//     F::x(i, k), F::y(k, j), F::z(i, j), and w = F::w(x, y, z).
// A candidate is (t[i][k] + t[k][j]) + w in that order, as dp_weighted.py and
// native/dp_weighted.c compute it (compiled with --fmad=false: nothing is fused), and
// the rest are minima, so the matrix is the CPU's bit for bit.
// dp_weighted_gpu.py launches them in dp_gpu's strip order with dp_gpu's job lists.
#include "dp.cu"

// The recurrence inside each diagonal block (I, I) of size s, I = blockIdx.x: one thread
// a row, the diagonals d = 2 ... s - 1 in turn.
template <typename F>
__global__ void wdp_diagonal(typename F::T* m, long long ld, int s, const typename F::T* f) {
    using T = typename F::T;
    const F fam{f, ld};
    const long long o = (long long)blockIdx.x * s;
    for (int d = 2; d < s; ++d) {
        for (int r = threadIdx.x; r + d < s; r += blockDim.x) {
            const long long i = o + r, j = o + r + d;
            const T z = fam.z(i, j);
            T best = m[i * ld + j];
            for (long long k = i + 1; k < j; ++k)
                best = dp_min(best, (m[i * ld + k] + m[k * ld + j]) + F::w(fam.x(i, k), fam.y(k, j), z));
            m[i * ld + j] = best;
        }
        __syncthreads();
    }
}

// Min-plus products with w into p x p targets, jobs, terms and split as dp.cu's
// dp_minplus: DP_TILE x DP_TILE threads a tile of C, one element a thread; A, B and w's
// x and y parts through shared memory.
template <typename F>
__global__ void wdp_minplus(typename F::T* m, long long ld, int p, const int* jobs, int terms,
                            int split, const typename F::T* f) {
    using T = typename F::T;
    __shared__ T a_tile[DP_TILE][DP_TILE], b_tile[DP_TILE][DP_TILE];
    __shared__ T x_tile[DP_TILE][DP_TILE], y_tile[DP_TILE][DP_TILE];
    const F fam{f, ld};
    const int part = blockIdx.z % split;
    const int* job = jobs + (long long)(blockIdx.z / split) * (2 + 4 * terms);
    const int r = blockIdx.y * DP_TILE + threadIdx.y, c = blockIdx.x * DP_TILE + threadIdx.x;
    const long long ci = job[0] + r, cj = job[1] + c;
    const T inf = Inf<T>::value();
    const bool inside = r < p && c < p;
    T best = inside ? m[ci * ld + cj] : inf;
    const T z = inside ? fam.z(ci, cj) : T(0);
    for (int t = part; t < terms; t += split) {
        const long long ar = job[2 + 4 * t], ac = job[3 + 4 * t];
        const long long br = job[4 + 4 * t], bc = job[5 + 4 * t];
        for (int k0 = 0; k0 < p; k0 += DP_TILE) {
            const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
            const bool a_in = r < p && ka < p, b_in = kb < p && c < p;
            a_tile[threadIdx.y][threadIdx.x] = a_in ? m[(ar + r) * ld + ac + ka] : inf;
            x_tile[threadIdx.y][threadIdx.x] = a_in ? fam.x(ar + r, ac + ka) : T(0);
            b_tile[threadIdx.y][threadIdx.x] = b_in ? m[(br + kb) * ld + bc + c] : inf;
            y_tile[threadIdx.y][threadIdx.x] = b_in ? fam.y(br + kb, bc + c) : T(0);
            __syncthreads();
#pragma unroll
            for (int k = 0; k < DP_TILE; ++k)
                best = dp_min(best, (a_tile[threadIdx.y][k] + b_tile[k][threadIdx.x]) +
                                        F::w(x_tile[threadIdx.y][k], y_tile[k][threadIdx.x], z));
            __syncthreads();
        }
    }
    if (inside) {
        if (split == 1) m[ci * ld + cj] = best;
        else dp_atomic_min(&m[ci * ld + cj], best);
    }
}

// wdp_minplus register-blocked, for p a multiple of DP_RB (dp.cu's dp_minplus_rb with w):
// DP_RB x DP_RB of C a block of 256 threads, 4 x 4 elements a thread; A and x stored
// transposed (one column of padding), B and y as they are, DP_RK k at a time.
template <typename F>
__global__ void wdp_minplus_rb(typename F::T* m, long long ld, int p, const int* jobs, int terms,
                               int split, const typename F::T* f) {
    using T = typename F::T;
    __shared__ T as[DP_RK][DP_RB + 1], xs[DP_RK][DP_RB + 1];
    __shared__ T bs[DP_RK][DP_RB], ys[DP_RK][DP_RB];
    const F fam{f, ld};
    const int part = blockIdx.z % split;
    const int* job = jobs + (long long)(blockIdx.z / split) * (2 + 4 * terms);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long row0 = (long long)blockIdx.y * DP_RB, col0 = (long long)blockIdx.x * DP_RB;
    const long long ci = job[0] + row0, cj = job[1] + col0;
    T acc[4][4], z[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            acc[i][j] = m[(ci + ty + 16 * i) * ld + cj + tx + 16 * j];
            z[i][j] = fam.z(ci + ty + 16 * i, cj + tx + 16 * j);
        }
    for (int t = part; t < terms; t += split) {
        const long long ar = job[2 + 4 * t] + row0, ac = job[3 + 4 * t];
        const long long br = job[4 + 4 * t], bc = job[5 + 4 * t] + col0;
        for (int k0 = 0; k0 < p; k0 += DP_RK) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int e = threadIdx.x + 256 * q;
                const int ra = e / DP_RK, ka = e % DP_RK;
                as[ka][ra] = m[(ar + ra) * ld + ac + k0 + ka];
                xs[ka][ra] = fam.x(ar + ra, ac + k0 + ka);
                const int kb = e / DP_RB, cb = e % DP_RB;
                bs[kb][cb] = m[(br + k0 + kb) * ld + bc + cb];
                if (F::HAS_Y) ys[kb][cb] = fam.y(br + k0 + kb, bc + cb);
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < DP_RK; ++k) {
                T a[4], b[4], x[4], y[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    a[i] = as[k][ty + 16 * i];
                    x[i] = xs[k][ty + 16 * i];
                }
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    b[j] = bs[k][tx + 16 * j];
                    y[j] = F::HAS_Y ? ys[k][tx + 16 * j] : T(0);
                }
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        acc[i][j] = dp_min(acc[i][j], (a[i] + b[j]) + F::w(x[i], y[j], z[i][j]));
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

// Eq. 5 with w (dp.cu's dp_triangular_shared): the job's C, A and B in shared memory
// (3 p (p + 1) elements), DP_TRI_LANES threads an element combining by warp shuffles,
// one anti-diagonal at a time; w's parts read through the cache (F::x, y, z).
template <typename F>
__global__ void wdp_triangular_shared(typename F::T* m, long long ld, int p, const int* jobs,
                                      const typename F::T* f) {
    using T = typename F::T;
    extern __shared__ unsigned char wdp_shared[];
    const F fam{f, ld};
    const int w = p + 1;
    T* cs = reinterpret_cast<T*>(wdp_shared);
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
        for (int base = r_lo; base < r_hi; base += groups) {
            const int r = base + threadIdx.x / DP_TRI_LANES;
            const bool active = r < r_hi;
            const int c = t - (p - 1 - r);
            T best = inf;
            if (active) {
                const long long i = cr + r, j = cc + c;
                const T z = fam.z(i, j);
                for (int q = r + 1 + lane; q < p; q += DP_TRI_LANES)  // k = ac + q: A's row r
                    best = dp_min(best, (as[r * w + q] + cs[q * w + c]) +
                                            F::w(fam.x(i, ac + q), fam.y(ac + q, j), z));
                for (int q = lane; q < c; q += DP_TRI_LANES)  // k = br + q: B's column c
                    best = dp_min(best, (cs[r * w + q] + bs[q * w + c]) +
                                            F::w(fam.x(i, br + q), fam.y(br + q, j), z));
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
