// butterfly.cu -- butterfly resampling (Güldaş 2015, Fig 3.6 and §3.2): the
// twin of src/pfresample/resampling/butterfly.py, whose docstring states the
// contract (scale, sums, draws, search) both follow bit for bit. A stage is
// two kernels:
//   1. stage_sums: a warp per segment of r values of the compact array c
//      (the scaled weights at stage 1, the previous stage's segment sums
//      after), a run of ceil(r / 32) values per lane; lane totals combined in
//      order by broadcasts, so every lane knows P_b; C_j = P_b + L_j.
//   2. stage_draws: a thread per (replica, slot): its block's row of C, its
//      uniform, a binary search, and the ancestor composed through the
//      previous stage's ancestors.
// Slots are addressed by 64-bit indices: N may be up to 2^31 - 1.

#include "lanes.cuh"
#include "stats.cuh"

namespace pfr {

constexpr int BUTTERFLY_RUNS = 32;  // constants.py's BUTTERFLY_RUNS: a warp a segment
constexpr int DRAW_MULTINOMIAL = 0;  // butterfly.py's DRAWS, in order
constexpr int DRAW_STRATIFIED = 1;
constexpr int DRAW_SYSTEMATIC = 2;

// Value q of the compact array: the scaled weight (stage 1: w[q] * scale,
// in double, rounded to T) or a segment sum of the previous stage (the last C
// of its segment of `prev_r`).
template <typename W, typename T>
__device__ __forceinline__ T compact_value(const W* in, long long q, int prev_r, double scale) {
    if (prev_r == 0) return (T)((double)in[q] * scale);
    return (T)in[q * prev_r + prev_r - 1];
}

}  // namespace pfr

// Stage sums (contract step 2) of `segments` segments of r values; `in` is
// the weights (prev_r = 0, with `scale`) or the previous stage's C (prev_r =
// its r). Block of 256 threads: 8 warps, 8 segments.
template <typename W, typename T>
__global__ void stage_sums(const W* __restrict__ in, int prev_r, double scale, long long segments,
                           int r, T* __restrict__ cum) {
    using namespace pfr;
    const long long segment = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (segment >= segments) return;  // a whole warp: the shuffles below see full warps
    const int run = (r + BUTTERFLY_RUNS - 1) / BUTTERFLY_RUNS;
    const int first = min(lane * run, r), end = min(first + run, r);
    const long long q0 = segment * r;
    T local = T(0);
    for (int j = first; j < end; ++j) local = local + compact_value<W, T>(in, q0 + j, prev_r, scale);
    // P_b: the totals of runs 0 ... b-1 added in order. Every lane adds the
    // same broadcast totals, so each sees the same partial sums.
    T running = T(0), before = T(0);
#pragma unroll
    for (int b = 0; b < BUTTERFLY_RUNS - 1; ++b) {
        running = running + __shfl_sync(0xFFFFFFFFu, local, b);
        if (lane == b + 1) before = running;
    }
    T partial = T(0);
    for (int j = first; j < end; ++j) {
        partial = partial + compact_value<W, T>(in, q0 + j, prev_r, scale);
        cum[q0 + j] = before + partial;
    }
}

// Stage `stage` (0-based) of DRAW for every (replica, slot): slot i of block
// base + t * stride (stride = S_{k-1}, r = r_k) draws member j of its row of
// C (contract steps 3-4), and its ancestor is prev[base + j * stride] (or
// base + j itself at stage 0, prev == nullptr).
template <typename T, int DRAW>
__global__ void stage_draws(const T* __restrict__ cum, unsigned int n, long long lanes, int r,
                            long long stride, int stage, const unsigned int* __restrict__ keys,
                            int n_keys, unsigned int k0, unsigned int k1,
                            const int* __restrict__ prev, int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    const long long i = lane.particle, span = stride * r;
    const long long q = i / span, t = (i / stride) % r, base = q * span + i % stride;
    const unsigned int stream = (unsigned int)(DRAW == DRAW_SYSTEMATIC ? base : i);
    const T u = (T)uniform_float(draw_at(lane.key, DOMAIN_PARTICLE, stream, (unsigned long long)stage));
    const T* row = cum + q * r;
    const T total = row[r - 1];
    const T v = DRAW == DRAW_MULTINOMIAL ? u * total : ((T)t + u) * total / (T)r;
    int lo = 0, hi = r;  // the first j with row[j] > v
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (row[mid] <= v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == r) {  // v rounded up to the total: the last member of positive weight
        lo = 0;
        hi = r;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if (row[mid] < total) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
    }
    const long long j = total == T(0) ? t : lo;  // an empty block keeps its slots
    const long long chosen = base + j * stride;
    const long long replica_base = id - i;
    out[id] = prev ? prev[replica_base + chosen] : (int)chosen;
}
