// stats.cuh -- the layout of the weight-statistics record that reduce.cu
// writes and the resamplers read; gpu.py repeats it (STAT_* there).
#pragma once

namespace pfr {
constexpr int STAT_SUM = 0;  // sum of the weights, float64
constexpr int STAT_MAX = 1;  // largest weight
constexpr int STAT_BAD = 2;  // first index of a NaN, infinite or negative weight; N if none
constexpr int STAT_SSD = 3;  // SSD of the weights (eq. 6.5), when computed
constexpr int STAT_COUNT = 4;
}  // namespace pfr
