// uphill.cu -- Uphill resampling and its memory-coalescing variants (thesis
// chapter 6). The twin of src/pfresample/resampling/uphill.py.
//
//   MODE_GLOBAL: Uphill (Algorithm 6.1)
//   MODE_EVERY:  Uphill-CA (Algorithm 6.2)
//   MODE_ONCE:   Uphill-C1 (Algorithm 6.3)
//
// Each particle keeps the heaviest of itself and B candidates; on ties the
// one seen first stays (strict comparison). Draw layout: the candidate
// offset of iteration m is the particle stream's counter m, so one Philox
// block serves four iterations.

#include "lanes.cuh"

namespace pfr {

// Iterations per batch (a multiple of 4: four per Philox block), each batch's
// loads issued before the previous batch is compared (see metropolis.cu).
// Each mode takes the faster of 4 and 8 (docs/performance.md).
__host__ __device__ constexpr int uphill_batch(int mode) { return mode == MODE_ONCE ? 8 : 4; }
__host__ __device__ constexpr bool uphill_pipeline(int) { return true; }

// Candidates and their weights for BATCH consecutive iterations.
template <typename T, int BATCH>
struct UphillBatch {
    unsigned int j[BATCH];
    T wj[BATCH];
};

template <typename T, int MODE, bool SHARED, int BATCH>
__device__ __forceinline__ void uphill_draw(UphillBatch<T, BATCH>& b, int m, const Lane& lane,
                                            Candidates<MODE, SHARED>& cand,
                                            const T* __restrict__ w) {
#pragma unroll
    for (int k = 0; k < BATCH; k += 4) {  // one Philox block: iterations m+k .. m+k+3
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, (m + k) >> 2);
        b.j[k] = cand.pick(m + k, a.x);
        b.j[k + 1] = cand.pick(m + k + 1, a.y);
        b.j[k + 2] = cand.pick(m + k + 2, a.z);
        b.j[k + 3] = cand.pick(m + k + 3, a.w);
    }
#pragma unroll
    for (int k = 0; k < BATCH; ++k) b.wj[k] = w[b.j[k]];
}

// Keep the heavier: a candidate replaces t only when strictly heavier.
template <typename T>
__device__ __forceinline__ void uphill_step(unsigned int j, T wj, unsigned int& t, T& wt) {
    if (wt < wj) {
        t = j;
        wt = wj;
    }
}

}  // namespace pfr

// GROUPED: the threads of a group (gpu.py, lane_group) split the B
// iterations into consecutive parts, each a multiple of four iterations
// (whole Philox blocks); each keeps the heaviest of its part (the first
// thread also its particle), and the parts are combined in order, a later
// part's winner replacing an earlier one's only when strictly heavier -- so
// ties keep the candidate seen first, as one thread's loop over all B does.
// Not GROUPED: one thread a lane (its own instantiation, which keeps the
// registers, and so the occupancy, of the plain loop).
template <typename T, int MODE, bool SHARED, bool GROUPED>
__global__ void uphill(const T* __restrict__ w, unsigned int n, long long lanes,
                       const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                       unsigned int k1, int b, const int* __restrict__ b_device, unsigned int dc,
                       unsigned int sc, unsigned int group, int* __restrict__ out) {
    using namespace pfr;
    static_assert(!(SHARED && GROUPED), "shared warp draws need one thread a lane");
    const Group g = make_group(GROUPED ? group : 1u);
    const long long id = g.lane;
    if (id >= lanes) return;  // whole groups leave; SHARED: whole warps
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    Candidates<MODE, SHARED> cand(lane, n, dc, sc);
    const int B = loop_length(b, b_device);
    int m = 0, end = B;
    if (GROUPED) {
        const int part = ((B + (int)group - 1) / (int)group + 3) & ~3;
        m = min(B, (int)g.rank * part);
        end = min(B, m + part);
    }
    unsigned int t = lane.particle;
    T wt = g.rank == 0 ? w[t] : (T)-1;  // -1: any candidate's weight beats it
    constexpr int BATCH = uphill_batch(MODE);
    constexpr bool PIPELINE = uphill_pipeline(MODE);
    UphillBatch<T, BATCH> cur, next;
    if (PIPELINE && m + BATCH <= end) uphill_draw(cur, m, lane, cand, w);
    for (; m + BATCH <= end; m += BATCH) {
        if (!PIPELINE) uphill_draw(cur, m, lane, cand, w);
        const bool more = PIPELINE && m + 2 * BATCH <= end;
        if (more) uphill_draw(next, m + BATCH, lane, cand, w);
#pragma unroll
        for (int k = 0; k < BATCH; ++k) uphill_step(cur.j[k], cur.wj[k], t, wt);
        if (more) cur = next;
    }
    Philox4x32 a;
    for (; m < end; ++m) {  // the last (end - m) mod BATCH; m starts at a multiple of 4
        if ((m & 3) == 0) a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 2);
        const unsigned int j = cand.pick(m, a.word((unsigned int)m & 3u));
        uphill_step(j, w[j], t, wt);
    }
    if (GROUPED) {
        for (unsigned int o = 1; o < group; o <<= 1) {  // rank r takes in ranks r+o .. r+2o-1
            const unsigned int t_later = __shfl_down_sync(g.mask, t, o, group);
            const T w_later = __shfl_down_sync(g.mask, wt, o, group);
            uphill_step(t_later, w_later, t, wt);
        }
    }
    if (g.rank == 0) out[id] = (int)t;
}
