// butterfly.cu -- butterfly resampling (Güldaş 2015, Fig 3.6 and §3.2): the
// twin of src/pfresample/resampling/butterfly.py, whose docstring states the
// contract (scale, sums, draws, search) both follow bit for bit. Stage 1
// with 32 <= r_1 <= SEGMENT_MAX is one kernel, first_stage: a block a
// segment sums it in shared memory (by scan_staged) and draws from there, and
// only the segment totals reach global memory. Any other stage is two
// kernels:
//   1. stage_sums: a warp per segment of r values of the compact array c
//      (the scaled weights at stage 1, the previous stage's segment sums
//      after), a run of ceil(r / 32) values per lane; lane totals combined in
//      order by broadcasts, so every lane knows P_b; C_j = P_b + L_j.
//   2. stage_draws: a thread per (replica, slot): its block's row of C, its
//      uniform, a binary search, and the ancestor composed through the
//      previous stage's ancestors.
// The adaptive butterfly (Fig 3.7) decides on the device whether each stage
// runs: ess_gate sets the stage's flag `go` from the ESS of the compact
// array, and the three kernels read it (a null `go`: the stage runs). A
// stage that does not run leaves the sums alone and passes the ancestors on
// unchanged, so that the last stage's output buffer holds the composed ancestors whenever stage 1 ran (when it did not, no
// kernel writes them: the reader takes every slot as its own ancestor, as
// filter.cu's gather_rows does from the same flag); stage_weights writes the
// output weights of the last stage that ran.

#include "lanes.cuh"
#include "reduce.cuh"
#include "stats.cuh"

namespace pfr {

constexpr int BUTTERFLY_RUNS = 32;  // constants.py's BUTTERFLY_RUNS: a warp a segment
constexpr int DRAW_MULTINOMIAL = 0;  // butterfly.py's DRAWS, in order
constexpr int DRAW_STRATIFIED = 1;
constexpr int DRAW_SYSTEMATIC = 2;
constexpr int SUMS_WARPS = 4;      // geometry.py's BUTTERFLY_SUMS_WARPS
constexpr int SEGMENT_MAX = 1024;  // longest segment staged in shared memory

// A segment in shared memory, padded by one entry per 32: lane l's run of
// consecutive entries then falls in distinct banks for the common runs.
__host__ __device__ constexpr int padded_segment(int j) { return j + j / 32; }

// Value q of the compact array: the scaled weight (stage 1: w[q] * scale,
// in double, rounded to T) or a segment sum of the previous stage (the last C
// of its segment of `prev_r`).
template <typename W, typename T>
__device__ __forceinline__ T compact_value(const W* in, long long q, int prev_r, double scale) {
    if (prev_r == 0) return (T)((double)in[q] * scale);
    return (T)in[q * prev_r + prev_r - 1];
}

// Contract step 2 on one segment of r <= SEGMENT_MAX values staged (padded)
// in shared memory, by one full warp, in place: lane l sums its run of
// ceil(r / 32) values; P_b, the totals of runs 0 ... b-1 added in order,
// comes from broadcasts that every lane adds alike, so each sees the same
// partial sums; C_j = P_b + L_j.
template <typename T>
__device__ void scan_staged(T* staged, int r, int lane) {
    const int run = (r + BUTTERFLY_RUNS - 1) / BUTTERFLY_RUNS;
    const int first = min(lane * run, r), end = min(first + run, r);
    T local = T(0);
    for (int j = first; j < end; ++j) local = local + staged[padded_segment(j)];
    T running = T(0), before = T(0);
#pragma unroll
    for (int b = 0; b < BUTTERFLY_RUNS - 1; ++b) {
        running = running + __shfl_sync(0xFFFFFFFFu, local, b);
        if (lane == b + 1) before = running;
    }
    T partial = T(0);
    for (int j = first; j < end; ++j) {
        partial = partial + staged[padded_segment(j)];
        staged[padded_segment(j)] = before + partial;
    }
}

// A row of C in global memory, or staged (padded) in shared memory.
template <typename T>
struct GlobalRow {
    const T* c;
    __device__ T operator[](int j) const { return c[j]; }
};
template <typename T>
struct StagedRow {
    const T* c;
    __device__ T operator[](int j) const { return c[padded_segment(j)]; }
};

// Contract steps 3-4 for the slot at position t of a block whose row of C
// (r values) is `row`: the member it draws with uniform u.
template <typename T, int DRAW, typename Row>
__device__ __forceinline__ unsigned int member(const Row& row, int r, unsigned int t, T u) {
    const T total = row[r - 1];
    if (total == T(0)) return t;  // an empty block keeps its slots
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
    return (unsigned int)lo;
}

// Slot i's uniform at stage `stage` (contract step 3; systematic: its block's
// first slot's).
template <typename T, int DRAW>
__device__ __forceinline__ T stage_uniform(PhiloxKey key, unsigned int i, unsigned int base,
                                           int stage) {
    const unsigned int stream = DRAW == DRAW_SYSTEMATIC ? base : i;
    return (T)uniform_float(draw_at(key, DOMAIN_PARTICLE, stream, (unsigned long long)stage));
}

// Replica `replica`'s Philox key: its own from `keys`, or the single (k0, k1).
__device__ __forceinline__ PhiloxKey replica_key(const unsigned int* keys, int n_keys,
                                                 unsigned int replica, unsigned int k0,
                                                 unsigned int k1) {
    PhiloxKey key;
    key.k0 = n_keys ? keys[2 * replica] : k0;
    key.k1 = n_keys ? keys[2 * replica + 1] : k1;
    return key;
}

}  // namespace pfr

// Stage 1 whole, for 32 <= r <= SEGMENT_MAX: block (q, y) of r threads is
// segment q of replica first_replica + y. It stages the scaled weights of its
// segment (contract step 1), sums them (step 2, warp 0), and each thread
// draws its member from shared memory (steps 3-4) and writes its ancestor
// base + j; replica 0's blocks write the segment totals c_1 that stage 2
// sums. The same bits as stage_sums followed by stage_draws.
template <typename W, typename T, int DRAW>
__global__ void __launch_bounds__(pfr::SEGMENT_MAX)
first_stage(const W* __restrict__ w, double scale, unsigned int n, int r,
            unsigned int first_replica, const unsigned int* __restrict__ keys, int n_keys,
            unsigned int k0, unsigned int k1, T* __restrict__ totals, int* __restrict__ out,
            const int* __restrict__ go) {
    using namespace pfr;
    __shared__ T staged[padded_segment(SEGMENT_MAX)];
    const unsigned int t = threadIdx.x, q = blockIdx.x, base = q * (unsigned int)r;
    const unsigned int i = base + t, replica = first_replica + blockIdx.y;
    if (!gate_open(go)) return;  // no resampling: out is not read (the gate says so)
    staged[padded_segment(t)] = compact_value<W, T>(w, i, 0, scale);
    __syncthreads();
    if (t < 32) scan_staged(staged, r, (int)t);
    __syncthreads();
    if (t == 0 && replica == 0) totals[q] = staged[padded_segment(r - 1)];
    const PhiloxKey key = replica_key(keys, n_keys, replica, k0, k1);
    const T u = stage_uniform<T, DRAW>(key, i, base, 0);
    const unsigned int j = member<T, DRAW>(StagedRow<T>{staged}, r, t, u);
    out[(long long)replica * n + i] = (int)(base + j);
}

// Stage sums (contract step 2) of `segments` segments of r values; `in` is
// the weights (prev_r = 0, with `scale`) or the previous stage's C (prev_r =
// its r). A warp a segment, SUMS_WARPS warps a block. A segment of at most
// SEGMENT_MAX values goes through shared memory, so that the warp reads and
// writes it with coalesced accesses while each lane sums its own run; a
// longer one is read in place (the same arithmetic).
template <typename W, typename T>
__global__ void __launch_bounds__(pfr::SUMS_WARPS * 32)
stage_sums(const W* __restrict__ in, int prev_r, double scale, long long segments, int r,
           T* __restrict__ cum, const int* __restrict__ go) {
    using namespace pfr;
    __shared__ T tile[SUMS_WARPS][padded_segment(SEGMENT_MAX)];
    if (!gate_open(go)) return;
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const long long segment = (long long)blockIdx.x * SUMS_WARPS + warp;
    if (segment >= segments) return;  // a whole warp: the shuffles below see full warps
    const long long q0 = segment * r;
    if (r <= SEGMENT_MAX) {
        T* staged = tile[warp];
        for (int j = lane; j < r; j += 32) {
            staged[padded_segment(j)] = compact_value<W, T>(in, q0 + j, prev_r, scale);
        }
        __syncwarp();
        scan_staged(staged, r, lane);
        __syncwarp();
        for (int j = lane; j < r; j += 32) cum[q0 + j] = staged[padded_segment(j)];
        return;
    }
    // A longer segment in place: scan_staged's arithmetic on global memory.
    const int run = (r + BUTTERFLY_RUNS - 1) / BUTTERFLY_RUNS;
    const int first = min(lane * run, r), end = min(first + run, r);
    T local = T(0);
    for (int j = first; j < end; ++j) local = local + compact_value<W, T>(in, q0 + j, prev_r, scale);
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

// Stage `stage` (0-based) of DRAW for slot i = blockIdx.x * blockDim.x +
// threadIdx.x of replica first_replica + blockIdx.y: the slot of block base
// + t * stride (stride = S_{k-1}, r = r_k) draws member j of its row of C
// (contract steps 3-4), and its ancestor is prev[base + j * stride] (or
// base + j itself at stage 0, prev == nullptr). 32-bit index arithmetic: N <
// 2^31 (64-bit divisions cost more than the rest of the kernel). `log_r` and
// `log_stride` are log2 of r and stride where both are powers of two, -1
// otherwise: then the block geometry takes shifts and masks instead of two
// divisions by runtime values (about 20 instructions each, on a kernel bound
// by its instruction count).
template <typename T, int DRAW>
__global__ void stage_draws(const T* __restrict__ cum, unsigned int n, int r, unsigned int stride,
                            int log_r, int log_stride, int stage, unsigned int first_replica,
                            const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                            unsigned int k1, const int* __restrict__ prev, int* __restrict__ out,
                            const int* __restrict__ go, const int* __restrict__ go_first) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int replica = first_replica + blockIdx.y;
    if (!gate_open(go)) {  // skipped: the ancestors so far, if stage 1 ran (else out is not read)
        const long long at = (long long)replica * n + i;
        if (prev != nullptr && gate_open(go_first)) out[at] = prev[at];
        return;
    }
    const PhiloxKey key = replica_key(keys, n_keys, replica, k0, k1);
    const unsigned int span = stride * (unsigned int)r;
    unsigned int q, t;
    if (log_r >= 0) {  // uniform over the grid: no divergence
        q = i >> (log_r + log_stride);
        t = (i & (span - 1)) >> log_stride;
    } else {
        q = i / span;
        t = (i - q * span) / stride;
    }
    const unsigned int base = i - t * stride;
    const T u = stage_uniform<T, DRAW>(key, i, base, stage);
    const unsigned int j = member<T, DRAW>(GlobalRow<T>{cum + (long long)q * r}, r, t, u);
    const unsigned int chosen = base + j * stride;
    const long long row_start = (long long)replica * n;
    out[row_start + i] = prev ? prev[row_start + chosen] : (int)chosen;
}

// The adaptive butterfly's test before a stage (Fig 3.7): the ESS (eq. 1.11)
// of the `count` values of the compact array (`in`, `prev_r` as in
// compact_value, unscaled: the ESS does not depend on the scale), each
// standing for `span` slots, is ESS = span (sum c)^2 / sum c^2; go[0] = 1
// when the previous stage ran (go_prev null or set) and ESS < threshold.
// Also the ESS itself and sum c, where asked (ess_out, total_out: null or
// not). Sums in float64 over a grid whose size depends on `count` alone
// (partials combined in index order by the last block), so a replay gives
// the same bits. Launched with REDUCE_THREADS threads a block.
template <typename W, typename T>
__global__ void ess_gate(const W* __restrict__ in, int prev_r, long long count, double span,
                         double threshold, const int* __restrict__ go_prev, int* __restrict__ go,
                         double* __restrict__ ess_out, double* __restrict__ total_out,
                         double* __restrict__ parts, unsigned int* __restrict__ ticket) {
    using namespace pfr;
    if (go_prev != nullptr && go_prev[0] == 0) {  // every block alike: the ticket stays 0
        if (blockIdx.x == 0 && threadIdx.x == 0) go[0] = 0;
        return;
    }
    double sum = 0.0, squares = 0.0;
    const long long stride = (long long)gridDim.x * REDUCE_THREADS;
    for (long long q = (long long)blockIdx.x * REDUCE_THREADS + threadIdx.x; q < count;
         q += stride) {
        const double c = (double)compact_value<W, T>(in, q, prev_r, 1.0);
        sum += c;
        squares += c * c;
    }
    if (!grid_sum_pair(sum, squares, parts, ticket) || threadIdx.x != 0) return;
    const double ess = span * (sum * sum / squares);
    if (ess_out != nullptr) ess_out[0] = ess;
    if (total_out != nullptr) total_out[0] = sum;
    if (go != nullptr) go[0] = ess < threshold ? 1 : 0;
}

// The output weights of the adaptive butterfly, for the slots of the last
// stage that ran (this stage ran: go set; the next did not: go_next null or
// 0): slot i weighs its segment's sum c[i / span] (the mean times span: the
// same proportions), written linear and as its logarithm (log 0 = -inf: a
// segment whose weights underflowed).
template <typename T>
__global__ void stage_weights(const T* __restrict__ in, int prev_r, unsigned int n,
                              unsigned int span, const int* __restrict__ go,
                              const int* __restrict__ go_next, float* __restrict__ w_out,
                              float* __restrict__ log_w) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || go[0] == 0 || (go_next != nullptr && go_next[0] != 0)) return;
    const float c = (float)compact_value<T, T>(in, i / span, prev_r, 1.0);
    w_out[i] = c;
    log_w[i] = logf(c);
}
