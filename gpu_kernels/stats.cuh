// stats.cuh -- the layout of the weight-statistics record that reduce.cu
// writes and the resamplers read (cuda/workspace.py repeats it: STAT_*
// there), and the power-of-two scaling of the weights (pfresample.sums).
#pragma once

namespace pfr {
constexpr int STAT_SUM = 0;    // sum of w * STAT_SCALE, float64
constexpr int STAT_MAX = 1;    // largest weight
constexpr int STAT_BAD = 2;    // first index of a NaN, infinite or negative weight; N if none
constexpr int STAT_SSD = 3;    // SSD of the weights (eq. 6.5), when computed
constexpr int STAT_SCALE = 4;  // the power of two the sum's terms were multiplied by
constexpr int STAT_COUNT = 5;

// The exponent of a tile without a positive weight (prefix_sum.NO_EXPONENT).
constexpr int NO_EXPONENT = -(1 << 20);

// frexp's exponent of m > 0 (m = f 2^e, f in [0.5, 1)), not below -1022 so
// that 2^-e fits a double (sums.frexp_scale); NO_EXPONENT for m = 0.
__device__ __forceinline__ int scale_exponent(double m) {
    if (!(m > 0.0)) return NO_EXPONENT;
    int e;
    frexp(m, &e);
    return e < -1022 ? -1022 : e;
}
}  // namespace pfr
