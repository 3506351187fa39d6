// Moazeni (2013), chapter 6: total-variation regularisation of diffusion-tensor images
// (Christiansen et al. 2007) on the GPU. The NumPy reference and the equations are in
// studies/pfresample_studies/moazeni2013/tv.py; the launches in tv_gpu.py.
//
// Arrays are channel-major float32, [6][n0][n1][n2] with n2 the fastest axis; the six
// channels are the lower triangle in the order 11, 21, 22, 31, 32, 33 (tv.PAIRS).
//
// GlobalSync (§6.3, §6.4.1), five kernels an iteration:
//   tv_llt       D = L L^T per voxel (§6.3.1);
//   tv_norm      |grad d_c|_eps per voxel, summed a block (§6.3.2), once a channel;
//   tv_reduce    one block sums the blocks' partials: TV[d_c], R and the scale
//                w_c TV[d_c] / R of eq. 9 (§6.3.3);
//   tv_p         P = scale * curvature (eq. 10, §6.3.4), once a channel: a TILE x TILE
//                plane of threads marches along n0, the output (TILE-2)^2 columns and
//                the active threads shrinking by one layer a stage (Curvature3D);
//   tv_solver    eqs. 11-14 per voxel: dG/dL and one steepest-descent step (§6.3.5).
// ThreadSync and UnSync (§6.4.2): one kernel an iteration each, each block (ThreadSync)
// or each thread's 2 x 2 x 2 cube (UnSync) an image of its own, TV norms a block.
//
// Compile-time constants: TILE (the block's side), and for tv_p each shared array's
// partition SLOT_<NAME> and their number SLOTS (sharedmem.py: every array its own
// partition, or chapter 5's colouring of their live ranges). With P_ONLY, tv_threadsync
// and tv_unsync do function P alone (the TV norms and the curvature, Fig 53's split):
// no LLT (ThreadSync reads the D a full launch left; UnSync takes its loads as D), no
// fidelity term, no step, and no store.

#ifdef P_ONLY
#define P_ONLY_NEVER (-3.0e38f)  // a sum of bounded curvatures never reaches it
#endif

#ifndef TILE
#define TILE 16
#endif

#define NCH 6

#include "delay.cuh"

__device__ __forceinline__ float weight(int c) { return (c == 1 || c == 3 || c == 4) ? 2.f : 1.f; }

// D = L L^T for one voxel: l and d in PAIRS order.
__device__ __forceinline__ void llt(const float l[6], float d[6]) {
    d[0] = l[0] * l[0];
    d[1] = l[1] * l[0];
    d[2] = l[1] * l[1] + l[2] * l[2];
    d[3] = l[3] * l[0];
    d[4] = l[3] * l[1] + l[4] * l[2];
    d[5] = l[3] * l[3] + l[4] * l[4] + l[5] * l[5];
}

// One steepest-descent step (eqs. 13-14) from dG/dd (dg, PAIRS order): dG/dL = 2 S L
// with S the symmetric matrix of dG/dd, each off-diagonal derivative split in halves.
__device__ __forceinline__ void descend(float l[6], const float dg[6], float step) {
    const float s11 = dg[0], s21 = dg[1] / 2, s22 = dg[2], s31 = dg[3] / 2, s32 = dg[4] / 2,
                s33 = dg[5];
    float g[6];
    g[0] = 2 * (s11 * l[0] + s21 * l[1] + s31 * l[3]);
    g[1] = 2 * (s21 * l[0] + s22 * l[1] + s32 * l[3]);
    g[2] = 2 * (s22 * l[2] + s32 * l[4]);
    g[3] = 2 * (s31 * l[0] + s32 * l[1] + s33 * l[3]);
    g[4] = 2 * (s32 * l[2] + s33 * l[4]);
    g[5] = 2 * (s33 * l[5]);
    for (int c = 0; c < 6; ++c) l[c] -= step * g[c];
}

// The sum of v over a block of TILE x TILE threads, in a fixed order (a tree in
// shared memory), returned to every thread.
__device__ float block_sum(float v, float* scratch) {
    const int t = threadIdx.y * TILE + threadIdx.x;
    __syncthreads();
    scratch[t] = v;
    __syncthreads();
    for (int half = TILE * TILE / 2; half > 0; half /= 2) {
        if (t < half) scratch[t] += scratch[t + half];
        __syncthreads();
    }
    const float total = scratch[0];
    __syncthreads();
    return total;
}

extern "C" __global__ void tv_llt(const float* __restrict__ L, float* __restrict__ D, long long V) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= V) return;
    float l[6], d[6];
    for (int c = 0; c < 6; ++c) l[c] = L[c * V + i];
    llt(l, d);
    for (int c = 0; c < 6; ++c) D[c * V + i] = d[c];
}

// |grad u|_eps at each voxel of a TILE x TILE tile of plane blockIdx.z, summed: one
// partial a block, at partial[block]. Forward differences, 0 at the far edges.
extern "C" __global__ void tv_norm(const float* __restrict__ u, float* __restrict__ partial,
                                   int n0, int n1, int n2, float eps) {
    __shared__ float scratch[TILE * TILE];
    const int i2 = blockIdx.x * TILE + threadIdx.x, i1 = blockIdx.y * TILE + threadIdx.y;
    const int p = blockIdx.z;
    float value = 0.f;
    if (i1 < n1 && i2 < n2) {
        const long long s0 = (long long)n1 * n2, v = p * s0 + (long long)i1 * n2 + i2;
        const float here = u[v];
        const float g0 = p + 1 < n0 ? u[v + s0] - here : 0.f;
        const float g1 = i1 + 1 < n1 ? u[v + n2] - here : 0.f;
        const float g2 = i2 + 1 < n2 ? u[v + 1] - here : 0.f;
        value = sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
    }
    const float total = block_sum(value, scratch);
    if (threadIdx.x == 0 && threadIdx.y == 0)
        partial[((long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = total;
}

// One block: TV[d_c] = the sum of channel c's partials (in double, a fixed order),
// R = sqrt(sum_c w_c TV_c^2) and scale_c = w_c TV_c / R (eq. 9's TV over alpha).
extern "C" __global__ void tv_reduce(const float* __restrict__ partial, int blocks,
                                     double* __restrict__ tv, float* __restrict__ scale) {
    __shared__ double sums[1024];
    const int t = threadIdx.x;
    for (int c = 0; c < NCH; ++c) {
        double acc = 0.0;
        for (int k = t; k < blocks; k += blockDim.x) acc += partial[(long long)c * blocks + k];
        sums[t] = acc;
        __syncthreads();
        for (int half = blockDim.x / 2; half > 0; half /= 2) {
            if (t < half) sums[t] += sums[t + half];
            __syncthreads();
        }
        if (t == 0) tv[c] = sums[0];
        __syncthreads();
    }
    if (t == 0) {
        double r = 0.0;
        for (int c = 0; c < NCH; ++c) r += weight(c) * tv[c] * tv[c];
        r = sqrt(r);
        for (int c = 0; c < NCH; ++c) scale[c] = (float)(weight(c) * tv[c] / r);
    }
}

// Kernel P for channel c (eq. 10): out = scale[c] * (the adjoint of the forward
// differences applied to grad u / |grad u|_eps). The block's TILE x TILE threads hold a
// plane of the tile (n1, n2 from one below its output to one beyond), march along n0
// over [blockIdx.z * chunk, + chunk), and write its (TILE-2)^2 output columns.
#define U_CUR slot[SLOT_U_CUR]
#define U_NEXT slot[SLOT_U_NEXT]
#define G0 slot[SLOT_G0]
#define G1 slot[SLOT_G1]
#define G2 slot[SLOT_G2]
#define NRM slot[SLOT_NRM]
#define N0 slot[SLOT_N0]
#define N1 slot[SLOT_N1]
#define N2 slot[SLOT_N2]
#define N0_PREV slot[SLOT_N0_PREV]
#define DIV slot[SLOT_DIV]

#ifdef SLOTS
extern "C" __global__ void tv_p(const float* __restrict__ u, float* __restrict__ out,
                                const float* __restrict__ scale, int c, int n0, int n1, int n2,
                                int chunk, float eps) {
    __shared__ float slot[SLOTS][TILE * TILE];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * TILE + tx;
    const int i2 = blockIdx.x * (TILE - 2) - 1 + tx, i1 = blockIdx.y * (TILE - 2) - 1 + ty;
    const bool in = i1 >= 0 && i1 < n1 && i2 >= 0 && i2 < n2;
    const bool grad = tx < TILE - 1 && ty < TILE - 1;                      // S1-S3's threads
    const bool output = in && tx >= 1 && ty >= 1 && tx < TILE - 1 && ty < TILE - 1;  // S4-S5's
    const long long s0 = (long long)n1 * n2, col = in ? (long long)i1 * n2 + i2 : 0;
    const int first = blockIdx.z * chunk, last = min(first + chunk, n0);
    const float sc = scale[c];
    int p = first > 0 ? first - 1 : 0;  // a chunk after the first starts one plane early
    U_CUR[t] = in ? u[p * s0 + col] : 0.f;
    N0_PREV[t] = 0.f;
    __syncthreads();
    for (; p < last; ++p) {
        U_NEXT[t] = in && p + 1 < n0 ? u[(p + 1) * s0 + col] : 0.f;  // S0
        __syncthreads();
        if (grad) {  // S1: 0 at the far edges and outside the volume
            const float here = U_CUR[t];
            G0[t] = in && p + 1 < n0 ? U_NEXT[t] - here : 0.f;
            G1[t] = in && i1 + 1 < n1 ? U_CUR[t + TILE] - here : 0.f;
            G2[t] = in && i2 + 1 < n2 ? U_CUR[t + 1] - here : 0.f;
        }
        __syncthreads();
        if (grad) NRM[t] = sqrtf(G0[t] * G0[t] + G1[t] * G1[t] + G2[t] * G2[t] + eps * eps);  // S2
        __syncthreads();
        if (grad) {  // S3
            N0[t] = G0[t] / NRM[t];
            N1[t] = G1[t] / NRM[t];
            N2[t] = G2[t] / NRM[t];
        }
        __syncthreads();
        if (output)  // S4
            DIV[t] = (N0_PREV[t] - N0[t]) + (N1[t - TILE] - N1[t]) + (N2[t - 1] - N2[t]);
        __syncthreads();
        if (output && p >= first) out[p * s0 + col] = sc * DIV[t];  // S5
        const float carried = N0[t];
        U_CUR[t] = U_NEXT[t];
        N0_PREV[t] = carried;
        __syncthreads();
    }
}
#endif

// Kernel Solver (eqs. 11-14): dG/dd_c = P_c + lambda w_c (d_c - d^_c), then the step.
extern "C" __global__ void tv_solver(float* __restrict__ L, const float* __restrict__ D,
                                     const float* __restrict__ Dhat, const float* __restrict__ P,
                                     long long V, float lam, float step) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= V) return;
    float l[6], dg[6];
    for (int c = 0; c < 6; ++c) {
        l[c] = L[c * V + i];
        dg[c] = P[c * V + i] + lam * weight(c) * (D[c * V + i] - Dhat[c * V + i]);
    }
    descend(l, dg, step);
    for (int c = 0; c < 6; ++c) L[c * V + i] = l[c];
}

// GPU:ThreadSync (§6.4.2): one kernel an iteration; a block of TILE x TILE threads
// regularises a TILE^3 cube as an image of its own (differences cut at its faces, its
// own TV norms), each thread a column of TILE voxels along n0; D and the normalised
// gradients go through global memory (scratch D: 6 V, N: 18 V), with __syncthreads()
// between the stages and no shared memory but the reduction's.
extern "C" __global__ void tv_threadsync(float* __restrict__ L, const float* __restrict__ Dhat,
                                         float* __restrict__ D, float* __restrict__ N,
                                         int n0, int n1, int n2, float lam, float eps,
                                         float step) {
    __shared__ float scratch[TILE * TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i2 = blockIdx.x * TILE + tx, i1 = blockIdx.y * TILE + ty, p0 = blockIdx.z * TILE;
    const long long V = (long long)n0 * n1 * n2, s0 = (long long)n1 * n2;
    const long long col = (long long)i1 * n2 + i2;
#ifndef P_ONLY
    for (int q = 0; q < TILE; ++q) {  // stage 1: D = L L^T
        const long long v = (p0 + q) * s0 + col;
        float l[6], d[6];
        for (int c = 0; c < 6; ++c) l[c] = L[c * V + v];
        llt(l, d);
        for (int c = 0; c < 6; ++c) D[c * V + v] = d[c];
    }
    __syncthreads();
#endif
    float tvc[6];
    for (int c = 0; c < 6; ++c) {  // stage 2: normalised gradients and the cube's TV norms
        const float* u = D + c * V;
        float part = 0.f;
        for (int q = 0; q < TILE; ++q) {
            const long long v = (p0 + q) * s0 + col;
            const float here = u[v];
            const float g0 = q + 1 < TILE ? u[v + s0] - here : 0.f;
            const float g1 = ty + 1 < TILE ? u[v + n2] - here : 0.f;
            const float g2 = tx + 1 < TILE ? u[v + 1] - here : 0.f;
            const float nrm = sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
            part += nrm;
            N[(c * 3 + 0) * V + v] = g0 / nrm;
            N[(c * 3 + 1) * V + v] = g1 / nrm;
            N[(c * 3 + 2) * V + v] = g2 / nrm;
        }
        tvc[c] = block_sum(part, scratch);  // its barriers also order stage 2 before 3
    }
    float r = 0.f;
    for (int c = 0; c < 6; ++c) r += weight(c) * tvc[c] * tvc[c];
    r = sqrtf(r);
#ifdef P_ONLY
    float check = 0.f;
#endif
    for (int q = 0; q < TILE; ++q) {  // stage 3: curvature, dG/dd and the step
        const long long v = (p0 + q) * s0 + col;
        float dg[6];
        for (int c = 0; c < 6; ++c) {
            const float* n = N + c * 3 * V;
            float k = -n[v] - n[V + v] - n[2 * V + v];
            if (q > 0) k += n[v - s0];
            if (ty > 0) k += n[V + v - n2];
            if (tx > 0) k += n[2 * V + v - 1];
#ifdef P_ONLY
            dg[c] = weight(c) * tvc[c] / r * k;
            check += dg[c];
#else
            dg[c] = weight(c) * tvc[c] / r * k + lam * weight(c) * (D[c * V + v] - Dhat[c * V + v]);
#endif
        }
#ifndef P_ONLY
        float l[6];
        for (int c = 0; c < 6; ++c) l[c] = L[c * V + v];
        descend(l, dg, step);
        for (int c = 0; c < 6; ++c) L[c * V + v] = l[c];
#endif
    }
#ifdef P_ONLY
    // P alone (Fig 53): the curvature is summed so that none of it can be left out, and
    // stored only on a sum no run gives, so L (and D) stay as they were.
    if (check == P_ONLY_NEVER) L[p0 * s0 + col] = check;
#endif
}

// GPU:UnSync (§6.4.2): one kernel an iteration; each thread regularises a 2 x 2 x 2
// cube as an image of its own in registers; the TV norms are a block's (its threads'
// cubes: 2 x 2 TILE x 2 TILE voxels). Voxel k = 4 q + 2 r + s of the cube (q along n0,
// r along n1, s along n2).
extern "C" __global__ void tv_unsync(float* __restrict__ L, const float* __restrict__ Dhat,
                                     int n0, int n1, int n2, float lam, float eps, float step) {
    __shared__ float scratch[TILE * TILE];
    const int i2 = 2 * (blockIdx.x * TILE + threadIdx.x), i1 = 2 * (blockIdx.y * TILE + threadIdx.y);
    const int p = 2 * blockIdx.z;
    const long long V = (long long)n0 * n1 * n2, s0 = (long long)n1 * n2;
    long long at[8];
    float l[8][6], d[8][6];
    for (int k = 0; k < 8; ++k) {
        at[k] = (p + (k >> 2)) * s0 + (long long)(i1 + ((k >> 1) & 1)) * n2 + i2 + (k & 1);
        for (int c = 0; c < 6; ++c) l[k][c] = L[c * V + at[k]];
#ifdef P_ONLY
        for (int c = 0; c < 6; ++c) d[k][c] = l[k][c];  // P alone: the loads stand for D
#else
        llt(l[k], d[k]);
#endif
    }
    float tvc[6];
    for (int c = 0; c < 6; ++c) {
        float part = 0.f;
        for (int k = 0; k < 8; ++k) {
            const float g0 = (k & 4) ? 0.f : d[k + 4][c] - d[k][c];
            const float g1 = (k & 2) ? 0.f : d[k + 2][c] - d[k][c];
            const float g2 = (k & 1) ? 0.f : d[k + 1][c] - d[k][c];
            part += sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
        }
        tvc[c] = block_sum(part, scratch);
    }
    float r = 0.f;
    for (int c = 0; c < 6; ++c) r += weight(c) * tvc[c] * tvc[c];
    r = sqrtf(r);
    float dg[8][6];
    for (int c = 0; c < 6; ++c) {
        float n[8][3];
        for (int k = 0; k < 8; ++k) {
            const float g0 = (k & 4) ? 0.f : d[k + 4][c] - d[k][c];
            const float g1 = (k & 2) ? 0.f : d[k + 2][c] - d[k][c];
            const float g2 = (k & 1) ? 0.f : d[k + 1][c] - d[k][c];
            const float nrm = sqrtf(g0 * g0 + g1 * g1 + g2 * g2 + eps * eps);
            n[k][0] = g0 / nrm;
            n[k][1] = g1 / nrm;
            n[k][2] = g2 / nrm;
        }
        for (int k = 0; k < 8; ++k) {
            float kappa = -n[k][0] - n[k][1] - n[k][2];
            if (k & 4) kappa += n[k - 4][0];
            if (k & 2) kappa += n[k - 2][1];
            if (k & 1) kappa += n[k - 1][2];
#ifdef P_ONLY
            dg[k][c] = weight(c) * tvc[c] / r * kappa;
#else
            dg[k][c] = weight(c) * tvc[c] / r * kappa +
                       lam * weight(c) * (d[k][c] - Dhat[c * V + at[k]]);
#endif
        }
    }
#ifdef P_ONLY
    float check = 0.f;  // as in tv_threadsync: every curvature summed, never stored
    for (int k = 0; k < 8; ++k)
        for (int c = 0; c < 6; ++c) check += dg[k][c];
    if (check == P_ONLY_NEVER) L[at[0]] = check;
#else
    for (int k = 0; k < 8; ++k) {
        descend(l[k], dg[k], step);
        for (int c = 0; c < 6; ++c) L[c * V + at[k]] = l[k][c];
    }
#endif
}
