// lanes.cuh -- lanes and candidate draws shared by the iterative resamplers
// (metropolis.cu, uphill.cu). The twin of src/pfresample/resampling/lanes.py.
//
// A lane is one particle of one replica: a call with K seeds and N particles
// runs K*N lanes, lane = replica * N + particle, one CUDA thread each. Every
// lane draws from its particle stream (seed of its replica, DOMAIN_PARTICLE,
// particle); the coalesced variants also draw an s-segment from the warp
// stream (DOMAIN_WARP, particle / 32). A warp of the contract is 32
// consecutive particles of one replica.
//
// Candidate modes (lanes.py, class Candidates):
//   GLOBAL (0): candidate = offset draw in [0, N)             Alg. 3.3, 6.1
//   ONCE   (1): segment from warp counter 0, fixed for the loop Alg. 5.1, 6.3
//   EVERY  (2): segment from warp counter m at iteration m      Alg. 5.2, 6.2
// and candidate = segment * DC + (offset draw in [0, DC)).
//
// The offset draw in [0, R), R = N (GLOBAL) or DC, is uniform_int(draw, R):
// the draw's high bits. A packed draw (pick_packed) gives it from the draw's
// low log2(R) bits instead, for R a power of two of at most 2^8, so that the
// draw's high 23 bits remain free for Metropolis's acceptance uniform
// (uniform_float23): one 32-bit word serves a whole iteration.

#pragma once
#include "philox.cuh"

namespace pfr {

constexpr int MODE_GLOBAL = 0;
constexpr int MODE_ONCE = 1;
constexpr int MODE_EVERY = 2;
constexpr unsigned int WARP_SIZE = 32u;
// The largest offset range a packed draw serves: 8 of the 9 bits below
// uniform_float23's 23 (lanes.py, PACKED_RANGE).
constexpr unsigned int PACKED_RANGE = 256u;

struct Lane {
    long long id;          // replica * n + particle
    unsigned int particle;
    PhiloxKey key;         // the key of this lane's replica's seed
};

// Lane `id` of a call: `keys` holds (k0, k1) per replica, or is ignored when
// n_keys == 0 and every replica uses (k0, k1).
__device__ __forceinline__ Lane make_lane(long long id, unsigned int n, const unsigned int* keys,
                                          int n_keys, unsigned int k0, unsigned int k1) {
    Lane lane;
    lane.id = id;
    const long long replica = id / n;
    lane.particle = (unsigned int)(id - replica * n);
    if (n_keys) {
        lane.key.k0 = keys[2 * replica];
        lane.key.k1 = keys[2 * replica + 1];
    } else {
        lane.key.k0 = k0;
        lane.key.k1 = k1;
    }
    return lane;
}

// Threads that share one lane's work (gpu.py, lane_group): `group`
// consecutive threads, a power of two of at most a warp that divides the
// block, so that a group lies inside one warp. A thread's lane, its rank in
// the group, and its group's lanes of the warp (the mask of the *_sync
// intrinsics).
struct Group {
    long long lane;
    unsigned int rank;
    unsigned int mask;
};

__device__ __forceinline__ Group make_group(unsigned int group) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    Group g;
    g.lane = tid / group;
    g.rank = (unsigned int)(tid - g.lane * group);
    const unsigned int first = (threadIdx.x & (WARP_SIZE - 1u)) & ~(group - 1u);
    g.mask = group == WARP_SIZE ? 0xFFFFFFFFu : ((1u << group) - 1u) << first;
    return g;
}

// The B of a call: given by the host (b >= 0), else the one a B kernel wrote
// to device memory (reduce.cu), so that no host synchronisation is needed.
__device__ __forceinline__ int loop_length(int b, const int* b_device) {
    return b >= 0 ? b : *b_device;
}

// Where candidates come from. SHARED: the 32 lanes of a hardware warp are the
// 32 particles of one contract warp (N and the block size are multiples of
// 32), so in EVERY mode lane l evaluates Philox block l of each run of 32
// warp-stream blocks and the draws are passed around with __shfl_sync: one
// Philox evaluation per warp per 128 iterations instead of one per lane per
// 4 iterations. Without SHARED every lane evaluates the warp stream itself.
template <int MODE, bool SHARED>
struct Candidates {
    unsigned int n, dc, sc;
    unsigned int segment;  // ONCE: the loop's segment
    bool packed;           // the offset range R is a power of two <= PACKED_RANGE
    PhiloxStream warp;     // EVERY, not SHARED
    Philox4x32 shared;     // EVERY, SHARED: this lane's block of the warp stream

    __device__ __forceinline__ Candidates(const Lane& lane, unsigned int n_, unsigned int dc_,
                                          unsigned int sc_)
        : n(n_), dc(dc_), sc(sc_), segment(0u) {
        const unsigned int range = MODE == MODE_GLOBAL ? n : dc;
        packed = range <= PACKED_RANGE && (range & (range - 1u)) == 0u;
        const unsigned int warp_id = lane.particle / WARP_SIZE;
        if (MODE == MODE_ONCE) {
            segment = uniform_int(draw_at(lane.key, DOMAIN_WARP, warp_id, 0ull), sc);
        }
        if (MODE == MODE_EVERY) {
            warp = make_stream(lane.key, DOMAIN_WARP, warp_id);
        }
    }

    // The segment of iteration m (EVERY mode). All 32 lanes of a warp call
    // this at the same m in SHARED mode.
    __device__ __forceinline__ unsigned int segment_at(int m) {
        if (!SHARED) return uniform_int(warp.word((unsigned long long)m), sc);
        const unsigned int lane = threadIdx.x & (WARP_SIZE - 1u);
        if ((m & 127) == 0) {
            shared = philox_block(warp.key, DOMAIN_WARP, warp.stream,
                                  (unsigned long long)(m >> 2) + lane);
        }
        const unsigned int word = __shfl_sync(0xFFFFFFFFu, shared.word((unsigned int)m & 3u),
                                              (m >> 2) & 31);
        return uniform_int(word, sc);
    }

    // A loop that starts at iteration m (a continued chain): SHARED EVERY
    // loads this lane's block of the run of 128 iterations holding m, which
    // segment_at otherwise loads only at the run's first iteration.
    __device__ __forceinline__ void begin(int m) {
        if (MODE == MODE_EVERY && SHARED && (m & 127) != 0) {
            const unsigned int lane = threadIdx.x & (WARP_SIZE - 1u);
            shared = philox_block(warp.key, DOMAIN_WARP, warp.stream,
                                  (unsigned long long)((m >> 2) & ~31) + lane);
        }
    }

    // Candidate index of iteration m given the lane's offset draw.
    __device__ __forceinline__ unsigned int pick(int m, unsigned int offset_draw) {
        if (MODE == MODE_GLOBAL) return uniform_int(offset_draw, n);
        const unsigned int seg = MODE == MODE_ONCE ? segment : segment_at(m);
        return seg * dc + uniform_int(offset_draw, dc);
    }

    // The same from a packed draw (only when `packed`): the offset is the
    // draw's low log2(R) bits.
    __device__ __forceinline__ unsigned int pick_packed(int m, unsigned int draw) {
        if (MODE == MODE_GLOBAL) return draw & (n - 1u);
        const unsigned int seg = MODE == MODE_ONCE ? segment : segment_at(m);
        return seg * dc + (draw & (dc - 1u));
    }
};

// Whether a gated step runs: always without a flag (null), else as the
// adaptive filter's ess_gate (butterfly.cu) set it. Every thread of a grid
// reads the same flag, so a skipped kernel skips in every block alike.
__device__ __forceinline__ bool gate_open(const int* go) { return go == nullptr || go[0] != 0; }

}  // namespace pfr
