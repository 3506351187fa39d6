// logweights.cu -- the weights' element-wise maps: log-weights to weights,
// w_i = exp(lw_i - max lw) in the precision of lw (pfresample/logweights.py
// states what a log input means), and a power-of-two scaling (below).
// The exponential is the library's own, step for step that of
// logweights.exp_nonpositive, so that the CPU and the GPU get the same bits:
// k = floor(x log2(e) + 1/2), r = (x - k ln2_hi) - k ln2_lo, exp(r) by its
// Taylor polynomial (Horner, coefficients from the host), then 2^k exp(r).
// Compiled with --fmad=false, every operation rounds as NumPy's does.

namespace pfr {
constexpr double LOG2_E = 1.4426950408889634;  // logweights.LOG2_E
constexpr double LN2_HI = 0.6931471803691238;  // logweights.LN2_HI
constexpr double LN2_LO = 1.9082149292705877e-10;  // logweights.LN2_LO
constexpr double EXP_ZERO_BELOW = -746.0;  // logweights.EXP_ZERO_BELOW

__device__ __forceinline__ double exp_nonpositive(double x, const double* coef, int terms) {
    if (x < EXP_ZERO_BELOW) return 0.0;  // -inf too
    const double k = floor(x * LOG2_E + 0.5);
    const double r = (x - k * LN2_HI) - k * LN2_LO;
    double p = coef[terms - 1];
    for (int i = terms - 2; i >= 0; --i) p = p * r + coef[i];
    return ldexp(p, (int)k);
}
}  // namespace pfr

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
