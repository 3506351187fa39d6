// logweights.cu -- the weights' element-wise maps: log-weights to weights,
// w_i = exp(lw_i - max lw) in the precision of lw (pfresample/logweights.py
// states what a log input means), and a power-of-two scaling (below).
// The exponential is the library's own, step for step that of
// logweights.exp_nonpositive, so that the CPU and the GPU get the same bits:
// k = floor(x log2(e) + 1/2), r = (x - k ln2_hi) - k ln2_lo, exp(r) by its
// Taylor polynomial (Horner, coefficients from the host), then 2^k exp(r).
// Compiled with --fmad=false, every operation rounds as NumPy's does.

#include "logexp.cuh"

// One thread a weight: w_i = exp(lw_i - top), rounded to T.
template <typename T>
__global__ void log_to_weights(const T* __restrict__ lw, long long n, double top,
                               const double* __restrict__ coef, int terms, T* __restrict__ w) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    w[i] = (T)pfr::exp_nonpositive((double)lw[i] - top, coef, terms);
}

// One thread a weight: out_i = w_i * scale, scale a power of two
// (sums.ratio_scale). Here, not in a CuPy expression: CuPy compiles its
// element-wise kernels with -ftz=true, which would flush the subnormal
// weights this scaling exists for.
template <typename T>
__global__ void scale_weights(const T* __restrict__ w, long long n, T scale, T* __restrict__ out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = w[i] * scale;
}
