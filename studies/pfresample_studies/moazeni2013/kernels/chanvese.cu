// Moazeni (2013), chapter 5's segmentation benchmark: one explicit step of Chan-Vese
// active contours (Chan and Vese 2001) on a 2-D image, its curvature (Curvature2D) in
// shared memory. The NumPy reference is studies/pfresample_studies/moazeni2013/chanvese.py.
//
//   phi <- phi + dt delta_h(phi) (mu kappa - nu - l1 (I - c1)^2 + l2 (I - c2)^2),
//   kappa = div(grad phi / |grad phi|_eps), delta_h(x) = h / (pi (h^2 + x^2)),
//
// with forward differences (0 at the far edges) and the divergence their adjoint. A
// block of TILE x TILE threads holds a tile from one row and column before its output
// to its end; the output is (TILE-2)^2 pixels and the active threads shrink by one
// layer a stage. Each shared array's partition is SLOT_<NAME> of SLOTS (sharedmem.py:
// every array its own, or chapter 5's colouring of their live ranges). Arrays are
// row-major float32, h x w, w the fastest axis.

#ifndef TILE
#define TILE 16
#endif

#include "delay.cuh"

#define PHI slot[SLOT_PHI]
#define G0 slot[SLOT_G0]
#define G1 slot[SLOT_G1]
#define NRM slot[SLOT_NRM]
#define N0 slot[SLOT_N0]
#define N1 slot[SLOT_N1]
#define DIV slot[SLOT_DIV]

extern "C" __global__ void cv_step(const float* __restrict__ phi, const float* __restrict__ image,
                                   float* __restrict__ out, int h, int w, float c1, float c2,
                                   float mu, float nu, float l1, float l2, float dt, float eps,
                                   float heps) {
    __shared__ float slot[SLOTS][TILE * TILE];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * TILE + tx;
    const int i1 = blockIdx.x * (TILE - 2) - 1 + tx, i0 = blockIdx.y * (TILE - 2) - 1 + ty;
    const bool in = i0 >= 0 && i0 < h && i1 >= 0 && i1 < w;
    const bool grad = tx < TILE - 1 && ty < TILE - 1;
    const bool output = in && tx >= 1 && ty >= 1 && tx < TILE - 1 && ty < TILE - 1;
    const long long at = in ? (long long)i0 * w + i1 : 0;
    PHI[t] = in ? phi[at] : 0.f;  // S0
    __syncthreads();
    const float own = PHI[t];
    if (grad) {  // S1
        G0[t] = in && i0 + 1 < h ? PHI[t + TILE] - own : 0.f;
        G1[t] = in && i1 + 1 < w ? PHI[t + 1] - own : 0.f;
    }
    __syncthreads();
    if (grad) NRM[t] = sqrtf(G0[t] * G0[t] + G1[t] * G1[t] + eps * eps);  // S2
    __syncthreads();
    if (grad) {  // S3
        N0[t] = G0[t] / NRM[t];
        N1[t] = G1[t] / NRM[t];
    }
    __syncthreads();
    if (output) DIV[t] = (N0[t] - N0[t - TILE]) + (N1[t] - N1[t - 1]);  // S4
    __syncthreads();
    if (output) {  // S5
        const float I = image[at], a = I - c1, b = I - c2;
        const float delta = heps / (3.14159265358979f * (heps * heps + own * own));
        out[at] = own + dt * delta * (mu * DIV[t] - nu - l1 * a * a + l2 * b * b);
    }
}
