// metropolis.cu -- Metropolis resampling and its memory-coalescing variants.
// The twin of src/pfresample/resampling/metropolis.py; same draws, same ancestors.
//
//   MODE_GLOBAL: Metropolis (Murray et al.; thesis Algorithm 3.3)
//   MODE_ONCE:   Metropolis-C1 (Algorithm 5.1)
//   MODE_EVERY:  Metropolis-C2 (Algorithm 5.2)
//   megopolis:   Megopolis (Chesser, Nguyen and Ranasinghe 2021), a kernel of its own
//
// Draw layout, iteration m = 0 .. B-1 (metropolis.py says the same):
//   packed (the offset range R = N or DC a power of two <= 256, lanes.cuh):
//     one particle-stream word at counter m gives u (its high 23 bits) and
//     the candidate offset (its low log2 R bits); one Philox block serves
//     four iterations. The segment variants with s-segments of 2^k weights
//     (the thesis's 32-weight segments) take this layout.
//   otherwise: u at counter 2m and the offset at counter 2m+1; one block
//     serves two iterations.
// Megopolis: u at counter m, the offset from the replica's global stream.
//
// The acceptance test u < w[j] / w[t] is evaluated as fl(u * w[t]) < w[j]
// (metropolis_accepts), which avoids an IEEE division per iteration.
//
// Iteration m's draws depend on (seed, particle, m) alone, so the chain after
// B' < B iterations is the first part of the chain after B. A launch may
// therefore continue chains: start from `start` (the ancestors after m_start
// iterations) and run iterations m_start .. B-1. The experiments use this to
// get every B of a reduced-B ladder (thesis §5.3) for the cost of the largest.

#include "lanes.cuh"

namespace pfr {

// Iterations per batch (a multiple of 4: whole Philox blocks in either
// layout), and whether the next batch's draws and loads are issued before
// the current batch is compared.
// The global and EVERY modes wait on random loads: 8 iterations, pipelined,
// run fastest. C1's loads hit L1 and it is bound by arithmetic, where
// pipelining only costs registers (docs/performance.md has the times); C1 with a
// packed draw and DC <= 32 takes c1_in_registers, which loads nothing.
__host__ __device__ constexpr int metropolis_batch(int mode) { return mode == MODE_ONCE ? 4 : 8; }
__host__ __device__ constexpr bool metropolis_pipeline(int mode) { return mode != MODE_ONCE; }

// Whether u < w[j] / w[t], in the weights' precision (metropolis.py,
// accepts): u = uniform_float23 in [0, 1), tested as fl(u * w[t]) < w[j]. The
// product rounds once, as a ratio would, and costs one multiplication where
// an IEEE division costs a reciprocal, its refinement and a range check; u
// from the bits costs no conversion. A zero weight is never a move's target
// (0 < 0 fails) and a zero w[t] moves to any positive one. The launchers
// scale weights whose maximum is tiny (sums.ratio_scale), so that no product
// falls to the subnormal range, where it would round on a coarse grid.
template <typename T>
__device__ __forceinline__ bool metropolis_accepts(unsigned int u_draw, T wj, T wt) {
    return (T)uniform_float23(u_draw) * wt < wj;
}

// One Metropolis step: move to candidate j when u < w[j] / w[t].
template <typename T>
__device__ __forceinline__ void metropolis_step(unsigned int u_draw, unsigned int j, T wj,
                                                unsigned int& t, T& wt) {
    if (metropolis_accepts(u_draw, wj, wt)) {
        t = j;
        wt = wj;
    }
}


// The draws and candidate weights of BATCH consecutive iterations. The loads
// do not depend on the chain's state, so a batch's loads are in flight
// together (and, pipelined, during the previous batch's comparisons).
template <typename T, int BATCH>
struct MetropolisBatch {
    unsigned int u[BATCH];
    unsigned int j[BATCH];
    T wj[BATCH];
};

// m is a multiple of BATCH, itself a multiple of 4: the batch's draws are
// whole Philox blocks in both layouts.
template <typename T, int MODE, bool SHARED, int BATCH>
__device__ __forceinline__ void metropolis_draw(MetropolisBatch<T, BATCH>& b, int m, const Lane& lane,
                                                Candidates<MODE, SHARED>& cand,
                                                const T* __restrict__ w) {
    if (cand.packed) {
#pragma unroll
        for (int k = 0; k < BATCH; k += 4) {  // one Philox block: iterations m+k .. m+k+3
            const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, (m + k) >> 2);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                b.u[k + i] = a.word((unsigned int)i);
                b.j[k + i] = cand.pick_packed(m + k + i, b.u[k + i]);
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < BATCH; k += 2) {  // one Philox block: iterations m+k, m+k+1
            const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, (m + k) >> 1);
            b.u[k] = a.x;
            b.j[k] = cand.pick(m + k, a.y);
            b.u[k + 1] = a.z;
            b.j[k + 1] = cand.pick(m + k + 1, a.w);
        }
    }
#pragma unroll
    for (int k = 0; k < BATCH; ++k) b.wj[k] = w[b.j[k]];
}

// One iteration on its own (a loop's first or last few).
template <typename T, int MODE, bool SHARED>
__device__ __forceinline__ void metropolis_single(int m, const Lane& lane,
                                                  Candidates<MODE, SHARED>& cand,
                                                  const T* __restrict__ w, unsigned int& t, T& wt) {
    unsigned int u, j;
    if (cand.packed) {
        u = draw_at(lane.key, DOMAIN_PARTICLE, lane.particle, (unsigned long long)m);
        j = cand.pick_packed(m, u);
    } else {
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 1);
        const bool odd = m & 1;
        u = odd ? a.z : a.x;
        j = cand.pick(m, odd ? a.w : a.y);
    }
    metropolis_step(u, j, w[j], t, wt);
}

// Megopolis's offsets: o_m = uniform_int(draw, N) at counter m of the
// replica's global stream (DOMAIN_GLOBAL, stream 0), the same for every lane
// of the replica. SHARED (a hardware warp is 32 particles of one replica): lane
// l evaluates block l of each run of 32 blocks and the words go round by
// __shfl_sync, one Philox evaluation per warp per 128 iterations, as
// Candidates::segment_at. Otherwise each lane evaluates the stream itself.
template <bool SHARED>
struct Offsets {
    PhiloxKey key;
    unsigned int n;
    Philox4x32 held;  // SHARED: this lane's block of the current run; else the current block

    __device__ __forceinline__ void load(int m) {
        const unsigned long long b = (unsigned long long)(m >> 2);
        held = SHARED ? philox_block(key, DOMAIN_GLOBAL, 0u, (b & ~31ull) + (threadIdx.x & 31u))
                      : philox_block(key, DOMAIN_GLOBAL, 0u, b);
    }

    // Before the first iteration m of a loop (a continued chain may start anywhere).
    __device__ __forceinline__ void begin(int m) { load(m); }

    // o_m, for m = the loop's first iteration, then one more at each call.
    __device__ __forceinline__ unsigned int at(int m) {
        if ((m & (SHARED ? 127 : 3)) == 0) load(m);
        unsigned int word = held.word((unsigned int)m & 3u);
        if (SHARED) word = __shfl_sync(0xFFFFFFFFu, word, (m >> 2) & 31);
        return uniform_int(word, n);
    }
};

// Iteration m's candidate for particle i: (i + o_m) mod N.
__device__ __forceinline__ unsigned int megopolis_candidate(unsigned int i, unsigned int o,
                                                            unsigned int n) {
    const unsigned int j = i + o;  // < 2N <= 2^32 - 2: no wrap in 32 bits
    return j >= n ? j - n : j;
}

// Iterations per Megopolis batch: two Philox blocks of the particle stream.
constexpr int MEGOPOLIS_BATCH = 8;

template <typename T, bool SHARED>
__device__ __forceinline__ void megopolis_draw(MetropolisBatch<T, MEGOPOLIS_BATCH>& b, int m,
                                               const Lane& lane, Offsets<SHARED>& offsets,
                                               unsigned int n, const T* __restrict__ w) {
#pragma unroll
    for (int k = 0; k < MEGOPOLIS_BATCH; k += 4) {
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, (m + k) >> 2);
        b.u[k] = a.x;
        b.u[k + 1] = a.y;
        b.u[k + 2] = a.z;
        b.u[k + 3] = a.w;
    }
#pragma unroll
    for (int k = 0; k < MEGOPOLIS_BATCH; ++k) {
        b.j[k] = megopolis_candidate(lane.particle, offsets.at(m + k), n);
    }
#pragma unroll
    for (int k = 0; k < MEGOPOLIS_BATCH; ++k) b.wj[k] = w[b.j[k]];
}

// Metropolis-C1 with its segment in registers: every lane of a hardware warp
// draws from the same segment (SHARED, MODE_ONCE), so lane l holds weight
// l mod DC of it and a candidate's weight comes by __shfl_sync from the lane
// that holds it, not from memory. Valid for a packed draw (DC a power of two)
// with DC <= 32 (the thesis's 128-byte segments: 32 float32 or 16 float64
// weights). Same draws, candidates and tests as the general loop, so the same
// ancestors; it saves the address arithmetic and the L1 load of every
// iteration (the general loop's C1 is bound by issued instructions).
template <typename T>
__device__ __forceinline__ unsigned int c1_in_registers(const T* __restrict__ w, const Lane& lane,
                                                        unsigned int segment, unsigned int dc,
                                                        int m, int B, unsigned int t, T wt) {
    const unsigned int base = segment * dc, mask = dc - 1u;
    const T held = w[base + (threadIdx.x & mask)];
    for (; (m & 3) != 0 && m < B; ++m) {  // a continued chain's first few
        const unsigned int draw = draw_at(lane.key, DOMAIN_PARTICLE, lane.particle, m);
        const T wj = __shfl_sync(0xFFFFFFFFu, held, (int)(draw & mask));
        metropolis_step(draw, base | (draw & mask), wj, t, wt);
    }
#pragma unroll 2
    for (; m + 4 <= B; m += 4) {  // one Philox block: iterations m .. m+3
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 2);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const unsigned int draw = a.word((unsigned int)i);
            const T wj = __shfl_sync(0xFFFFFFFFu, held, (int)(draw & mask));
            metropolis_step(draw, base | (draw & mask), wj, t, wt);
        }
    }
    for (; m < B; ++m) {  // the last few
        const unsigned int draw = draw_at(lane.key, DOMAIN_PARTICLE, lane.particle, m);
        const T wj = __shfl_sync(0xFFFFFFFFu, held, (int)(draw & mask));
        metropolis_step(draw, base | (draw & mask), wj, t, wt);
    }
    return t;
}

}  // namespace pfr

// Megopolis: one lane a thread, B iterations from t = the lane's particle (or
// from `start` after m_start iterations, as metropolis). Batches of 8
// iterations, the next batch's draws and loads issued before the current one
// is compared (metropolis's pipelining; the loads are contiguous but mostly
// miss L1).
template <typename T, bool SHARED>
__global__ void megopolis(const T* __restrict__ w, unsigned int n, long long lanes,
                          const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                          unsigned int k1, int b, const int* __restrict__ b_device,
                          const int* __restrict__ start, int m_start, int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;  // SHARED: lanes is a multiple of 32, whole warps leave
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    Offsets<SHARED> offsets{lane.key, n, {}};
    const int B = loop_length(b, b_device);
    unsigned int t = start != nullptr ? (unsigned int)start[id] : lane.particle;
    T wt = w[t];
    int m = m_start;
    if (m < B) offsets.begin(m);
    for (; m % MEGOPOLIS_BATCH != 0 && m < B; ++m) {  // a continued chain's first few
        const unsigned int j = megopolis_candidate(lane.particle, offsets.at(m), n);
        metropolis_step(draw_at(lane.key, DOMAIN_PARTICLE, lane.particle, m), j, w[j], t, wt);
    }
    MetropolisBatch<T, MEGOPOLIS_BATCH> cur, next;
    const int batches = B / MEGOPOLIS_BATCH;
    int q = m / MEGOPOLIS_BATCH;
    if (q < batches) megopolis_draw(cur, q * MEGOPOLIS_BATCH, lane, offsets, n, w);
    for (; q < batches; ++q) {
        const bool more = q + 1 < batches;
        if (more) megopolis_draw(next, (q + 1) * MEGOPOLIS_BATCH, lane, offsets, n, w);
#pragma unroll
        for (int k = 0; k < MEGOPOLIS_BATCH; ++k) {
            metropolis_step(cur.u[k], cur.j[k], cur.wj[k], t, wt);
        }
        if (more) cur = next;
    }
    m = m > q * MEGOPOLIS_BATCH ? m : q * MEGOPOLIS_BATCH;
    for (; m < B; ++m) {  // the last few
        const unsigned int j = megopolis_candidate(lane.particle, offsets.at(m), n);
        metropolis_step(draw_at(lane.key, DOMAIN_PARTICLE, lane.particle, m), j, w[j], t, wt);
    }
    out[id] = (int)t;
}

template <typename T, int MODE, bool SHARED>
__global__ void metropolis(const T* __restrict__ w, unsigned int n, long long lanes,
                           const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                           unsigned int k1, int b, const int* __restrict__ b_device,
                           unsigned int dc, unsigned int sc, const int* __restrict__ start,
                           int m_start, int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;  // SHARED: lanes is a multiple of 32, whole warps leave
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    Candidates<MODE, SHARED> cand(lane, n, dc, sc);
    const int B = loop_length(b, b_device);
    unsigned int t = start != nullptr ? (unsigned int)start[id] : lane.particle;
    T wt = w[t];
#ifndef PFR_C1_FROM_MEMORY  // defined by the profiler's load builds (kernels.GLOBAL_LOADS)
    // Uniform over the grid (n, dc and SHARED are the launch's), so whole
    // warps take the same branch, as __shfl_sync needs.
    if (MODE == MODE_ONCE && SHARED && cand.packed && dc <= WARP_SIZE) {
        out[id] = (int)c1_in_registers(w, lane, cand.segment, dc, m_start, B, t, wt);
        return;
    }
#endif
    constexpr int BATCH = metropolis_batch(MODE);
    constexpr bool PIPELINE = metropolis_pipeline(MODE);
    int m = m_start;
    cand.begin(m);
    // A continued chain's first iterations one by one, up to a multiple of
    // BATCH. The batches then run over q * BATCH, a multiple the compiler can
    // see, which lets it drop the shared draws' refills (segment_at) inside a
    // batch; a loop from a runtime m makes Metropolis-C2 slower
    // (docs/performance.md).
    for (; m % BATCH != 0 && m < B; ++m) metropolis_single(m, lane, cand, w, t, wt);
    MetropolisBatch<T, BATCH> cur, next;
    const int batches = B / BATCH;
    int q = m / BATCH;
    if (PIPELINE && q < batches) metropolis_draw(cur, q * BATCH, lane, cand, w);
    for (; q < batches; ++q) {
        if (!PIPELINE) metropolis_draw(cur, q * BATCH, lane, cand, w);
        const bool more = PIPELINE && q + 1 < batches;
        if (more) metropolis_draw(next, (q + 1) * BATCH, lane, cand, w);
#pragma unroll
        for (int k = 0; k < BATCH; ++k) metropolis_step(cur.u[k], cur.j[k], cur.wj[k], t, wt);
        if (more) cur = next;
    }
    m = m > q * BATCH ? m : q * BATCH;
    for (; m < B; ++m) metropolis_single(m, lane, cand, w, t, wt);  // the last few
    out[id] = (int)t;
}
