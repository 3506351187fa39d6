// logexp.cuh -- the library's own exponential and logarithms, step for step
// those of pfresample/logweights.py and pfresample/resampling/log_scan.py, so
// that the CPU and the GPU get the same bits (compiled with --fmad=false,
// every operation rounds as NumPy's does).
//
// exp_nonpositive: k = floor(x log2(e) + 1/2), r = (x - k ln2_hi) - k ln2_lo,
// exp(r) by its Taylor polynomial (Horner, coefficients from the host), then
// 2^k exp(r). log1p_unit and log_positive: 2 atanh(z) by its odd series
// (Horner in z^2, coefficients 1 / (2k + 1) from the host). lse: Güldaş (2015)
// Appendix A's log_sum_exp, rounded once to float32.
#pragma once

namespace pfr {
constexpr double LOG2_E = 1.4426950408889634;  // logweights.LOG2_E
constexpr double LN2_HI = 0.6931471803691238;  // logweights.LN2_HI
constexpr double LN2_LO = 1.9082149292705877e-10;  // logweights.LN2_LO
constexpr double EXP_ZERO_BELOW = -746.0;  // logweights.EXP_ZERO_BELOW
constexpr int ATANH_TERMS = 18;  // log_scan.ATANH_TERMS
constexpr int LOG_TERMS = 12;  // log_scan.LOG_TERMS
constexpr double SQRT_HALF = 0.7071067811865476;  // log_scan.SQRT_HALF

__device__ __forceinline__ double minus_inf() { return __longlong_as_double(0xfff0000000000000ULL); }
__device__ __forceinline__ float minus_inf_f() { return __int_as_float(0xff800000); }

__device__ __forceinline__ double exp_nonpositive(double x, const double* coef, int terms) {
    if (x < EXP_ZERO_BELOW) return 0.0;  // -inf too
    const double k = floor(x * LOG2_E + 0.5);
    const double r = (x - k * LN2_HI) - k * LN2_LO;
    double p = coef[terms - 1];
    for (int i = terms - 2; i >= 0; --i) p = p * r + coef[i];
    return ldexp(p, (int)k);
}

// 2 (z + z^3/3 + ...) to `terms` terms (log_scan._atanh_series).
__device__ __forceinline__ double atanh_series(double z, const double* odd, int terms) {
    const double z2 = z * z;
    double p = odd[terms - 1];
    for (int i = terms - 2; i >= 0; --i) p = p * z2 + odd[i];
    return 2.0 * (z * p);
}

// log(1 + t), t in [0, 1] (log_scan.log1p_unit).
__device__ __forceinline__ double log1p_unit(double t, const double* odd) {
    return atanh_series(t / (2.0 + t), odd, ATANH_TERMS);
}

// log w, w >= 0, 0 gives -inf (log_scan.log_positive).
__device__ __forceinline__ double log_positive(double w, const double* odd) {
    if (w == 0.0) return minus_inf();
    int e;
    double m = frexp(w, &e);  // m in [0.5, 1)
    if (m < SQRT_HALF) {
        m = 2.0 * m;
        e -= 1;
    }
    const double de = (double)e;
    return (de * LN2_HI + de * LN2_LO) + atanh_series((m - 1.0) / (m + 1.0), odd, LOG_TERMS);
}

// fl32(log(e^a + e^b)) (log_scan.lse): symmetric, -inf neutral.
__device__ __forceinline__ float lse(float a, float b, const double* coef, int terms,
                                     const double* odd) {
    const double a64 = (double)a, b64 = (double)b;
    const double m = a64 > b64 ? a64 : b64, low = a64 > b64 ? b64 : a64;
    if (m == minus_inf()) return minus_inf_f();
    return (float)(m + log1p_unit(exp_nonpositive(low - m, coef, terms), odd));
}
}  // namespace pfr
