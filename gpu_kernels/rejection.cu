// rejection.cu -- Rejection resampling (Murray et al.; thesis Algorithm 3.4).
// The twin of src/pfresample/resampling/rejection.py.
//
// Each particle starts at itself (j = i) and accepts j when
// u <= w[j] / w_max; otherwise it draws a new j uniformly and a new u.
// Draw layout on the particle stream: u of the first test at counter 0, then
// for attempt k = 1, 2, ...: the candidate at counter 2k-1, its u at 2k.
// w_max is stats[STAT_MAX] of the weight-statistics kernel (reduce.cu).
//
// rejection_grouped, for few lanes: a group of threads shares each lane
// (gpu.py, lane_group). Rank r makes the attempts of pairs r, r + group,
// r + 2 group, ... (pair q: attempts 2q+1 and 2q+2, counters 4q+1 .. 4q+4 --
// words 1-3 of Philox block q and word 0 of block q+1), so that a round tests
// 2 x group attempts at once; the first accepted one in attempt order wins,
// the ancestor that one thread testing them one by one returns. With few
// lanes this turns each lane's long serial chain of loads into a few rounds.
//
// rejection_queued, for many lanes (one thread a lane): a lane's number of
// attempts is geometric, so a warp that ran 32 lanes side by side would wait
// for the slowest of them -- about 4 x the mean when the weights are uneven
// -- with most of its threads idle. Instead each warp takes `chunk`
// consecutive lanes (gpu.py, queue_chunk), and a thread whose lane has
// accepted starts the next lane not yet taken; the warp waits only at the end
// of its chunk. A thread makes its lane's attempts in pairs, as a group of
// one would, so that two loads are in flight at once. A lane keeps its own
// stream whichever thread runs it, so the ancestors are the same.
//
// The tail pass, for lanes that fit the device about once (gpu.py,
// tail_factor): there the step waits for its slowest lane, whose attempts
// are about M (ln N + 0.58) for M = N w_max / sum(w), the mean -- ln N / ln 10
// times Metropolis's B at epsilon = 1/10. So both kernels above stop a lane
// after `cap` pairs (cap_pairs: about factor x M / 2, a multiple of the
// group) and append it to a queue; rejection_tail then gives each queued lane
// a whole warp, which goes on from pair `cap` in rounds of 64 attempts. The
// first accepted attempt in attempt order still wins: the same ancestors.

#include "lanes.cuh"
#include "stats.cuh"

namespace pfr {

// Murray's test, written as the loop's "u > ratio: try again" so that a NaN
// ratio accepts, as on the CPU.
template <typename T>
__device__ __forceinline__ bool accepts(unsigned int u_draw, T wj, T w_max) {
    return !((T)uniform_accept(u_draw) > wj / w_max);
}

// Pair q of a lane's attempts (attempts 2q+1 and 2q+2): candidates from words
// 1 and 3 of Philox block q (`a`), their u from word 2 of `a` and word 0 of
// block q+1 (`b`). Both loads are issued before either test. `j` is the
// first accepted candidate in attempt order, when `accepted`.
struct Pair {
    bool accepted;
    unsigned int j;
};

template <typename T>
__device__ __forceinline__ Pair test_pair(const Philox4x32& a, const Philox4x32& b,
                                          const T* __restrict__ w, unsigned int n, T w_max) {
    const unsigned int j1 = uniform_int(a.y, n), j2 = uniform_int(a.w, n);
    const T w1 = w[j1], w2 = w[j2];
    const bool ok1 = accepts(a.z, w1, w_max), ok2 = accepts(b.x, w2, w_max);
    return Pair{ok1 || ok2, ok1 ? j1 : j2};
}

constexpr unsigned int NOT_YET = 0xFFFFFFFFu;  // a lane stopped at its cap: no ancestor yet
constexpr unsigned long long NO_CAP = ~0ull;

// The pairs a lane makes before the tail pass takes it over: ceil(factor x
// M / 2) with M = n w_max / sum, the mean number of attempts, rounded up to a
// multiple of `group` (so that a group's rounds end exactly there); NO_CAP
// when factor is 0 or M is not a moderate number. Every kernel of a call
// computes it from the same statistics, so they agree on where the tail starts.
__device__ __forceinline__ unsigned long long cap_pairs(const double* __restrict__ stats,
                                                        unsigned int n, float factor,
                                                        unsigned int group) {
    const double m = stats[STAT_MAX] * (double)n / stats[STAT_SUM];
    if (!(factor > 0.f) || !(m < 1e12)) return NO_CAP;
    const unsigned long long pairs = (unsigned long long)ceil((double)factor * m / 2.0);
    return max((pairs + group - 1) / group * group, (unsigned long long)group);
}

// A group of threads a lane: rounds of 2 x group attempts (see above), from
// pair q0 (0: the lane's own test first) up to pair `cap` (exclusive;
// NOT_YET when none of them accepted).
template <typename T>
__device__ __forceinline__ unsigned int rejection_group(const Lane& lane, const Group& g,
                                                        unsigned int group,
                                                        const T* __restrict__ w, unsigned int n,
                                                        T w_max, unsigned long long q0,
                                                        unsigned long long cap) {
    Philox4x32 a;
    if (q0 == 0) {
        const Philox4x32 first = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, 0ull);
        if (accepts(first.x, w[lane.particle], w_max)) return lane.particle;  // same in every rank
        a = g.rank == 0 ? first : philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, g.rank);
    } else {
        a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q0 + g.rank);
    }
    for (unsigned long long base = q0; base < cap; base += group) {
        const unsigned long long q = base + g.rank;
        const Philox4x32 b = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q + 1);
        const Pair p = test_pair(a, b, w, n, w_max);
        const unsigned int hits = __ballot_sync(g.mask, p.accepted) & g.mask;
        if (hits) {
            const int winner = (__ffs(hits) - 1) - (__ffs(g.mask) - 1);  // the lowest rank
            return __shfl_sync(g.mask, p.j, winner, group);
        }
        a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q + group);
    }
    return NOT_YET;
}

// Lane `id` into the tail pass's queue (queue[0] counts them, queue[1 ...] holds them).
__device__ __forceinline__ void defer(int* __restrict__ queue, long long id) {
    queue[1 + atomicAdd(queue, 1)] = (int)id;
}

// A lane in a thread of rejection_queued: its key and particle, the Philox
// block `a` whose words 1-3 start its next pair of attempts (block q for pair
// q, as in rejection_group), and the candidate that accepted. start() makes
// the first test, of the lane's own particle, and tells whether it accepted.
struct QueuedLane {
    Lane lane;
    unsigned long long q;
    Philox4x32 a;
    unsigned int j;

    template <typename T>
    __device__ __forceinline__ bool start(long long lane_id, const T* __restrict__ w,
                                          unsigned int n, const unsigned int* keys, int n_keys,
                                          unsigned int k0, unsigned int k1, T w_max) {
        lane = make_lane(lane_id, n, keys, n_keys, k0, k1);
        q = 0;
        a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, 0ull);
        j = lane.particle;
        return accepts(a.x, w[lane.particle], w_max);
    }
};

}  // namespace pfr

template <typename T>
__global__ void rejection_grouped(const T* __restrict__ w, unsigned int n, long long lanes,
                                  const unsigned int* __restrict__ keys, int n_keys,
                                  unsigned int k0, unsigned int k1,
                                  const double* __restrict__ stats, unsigned int group,
                                  float tail_factor, int* __restrict__ queue,
                                  int* __restrict__ out) {
    using namespace pfr;
    const Group g = make_group(group);
    if (g.lane >= lanes) return;  // whole groups leave
    const Lane lane = make_lane(g.lane, n, keys, n_keys, k0, k1);
    const T w_max = (T)stats[STAT_MAX];  // a weight converted to double: exact back
    const unsigned long long cap = cap_pairs(stats, n, tail_factor, group);
    const unsigned int j = rejection_group(lane, g, group, w, n, w_max, 0ull, cap);
    if (g.rank != 0) return;
    if (j == NOT_YET) {
        defer(queue, g.lane);
    } else {
        out[g.lane] = (int)j;
    }
}

// Warp `warp` of the launch (blocks hold ceil(blockDim / 32) warps; the last
// warp of a block is partial when blockDim is not a multiple of 32) takes
// lanes [warp * chunk, (warp + 1) * chunk) -- see the header comment.
template <typename T>
__global__ void rejection_queued(const T* __restrict__ w, unsigned int n, long long lanes,
                                 const unsigned int* __restrict__ keys, int n_keys,
                                 unsigned int k0, unsigned int k1,
                                 const double* __restrict__ stats, unsigned int chunk,
                                 float tail_factor, int* __restrict__ queue,
                                 int* __restrict__ out) {
    using namespace pfr;
    const unsigned int rank = threadIdx.x & (WARP_SIZE - 1u);
    const unsigned int first = threadIdx.x - rank;  // the warp's first thread in the block
    const unsigned int size = min(WARP_SIZE, blockDim.x - first);
    const unsigned int mask = size == WARP_SIZE ? 0xFFFFFFFFu : (1u << size) - 1u;
    const long long warp =
        (long long)blockIdx.x * ((blockDim.x + WARP_SIZE - 1u) / WARP_SIZE) + first / WARP_SIZE;
    const long long begin = warp * chunk;
    if (begin >= lanes) return;  // whole warps leave
    const long long end = min(begin + (long long)chunk, lanes);
    const T w_max = (T)stats[STAT_MAX];
    const unsigned long long cap = cap_pairs(stats, n, tail_factor, 1u);

    QueuedLane q;
    long long next = begin + size;  // the first lane no thread has taken yet
    bool live = begin + rank < end;
    bool accepted = live && q.start(begin + rank, w, n, keys, n_keys, k0, k1, w_max);
    while (true) {
        // Threads whose lane accepted write it and take the next lanes; a new
        // lane's first test can accept at once, so repeat until none did.
        for (unsigned int done; (done = __ballot_sync(mask, accepted));) {
            if (accepted) {  // accepted, or stopped at the cap (q.j NOT_YET)
                if (q.j == NOT_YET) {
                    defer(queue, q.lane.id);
                } else {
                    out[q.lane.id] = (int)q.j;
                }
                const long long id = next + __popc(done & ((1u << rank) - 1u));
                live = id < end;
                accepted = live && q.start(id, w, n, keys, n_keys, k0, k1, w_max);
            }
            next += __popc(done);
        }
        if (!__any_sync(mask, live)) break;
        if (live) {  // the lane's next pair of attempts
            const Philox4x32 b =
                philox_block(q.lane.key, DOMAIN_PARTICLE, q.lane.particle, q.q + 1);
            const Pair p = test_pair(q.a, b, w, n, w_max);
            accepted = p.accepted;
            q.j = p.j;
            q.a = b;
            if (++q.q >= cap && !accepted) {  // the rest of this lane is the tail pass's
                accepted = true;
                q.j = NOT_YET;
            }
        }
    }
}

// The tail pass: a warp a queued lane (the lanes the kernels above stopped
// at their cap), going on from that pair; the warps stride over the queue.
// `first_group`: the lane group of the first pass, so that cap_pairs gives
// the same cap as there.
template <typename T>
__global__ void rejection_tail(const T* __restrict__ w, unsigned int n,
                               const unsigned int* __restrict__ keys, int n_keys,
                               unsigned int k0, unsigned int k1,
                               const double* __restrict__ stats, unsigned int first_group,
                               float tail_factor, const int* __restrict__ queue,
                               int* __restrict__ out) {
    using namespace pfr;
    const Group g = make_group(WARP_SIZE);
    const long long warps = (long long)gridDim.x * blockDim.x / WARP_SIZE;
    const long long count = queue[0];
    const unsigned long long q0 = cap_pairs(stats, n, tail_factor, first_group);
    const T w_max = (T)stats[STAT_MAX];
    for (long long i = g.lane; i < count; i += warps) {
        const Lane lane = make_lane(queue[1 + i], n, keys, n_keys, k0, k1);
        const unsigned int j = rejection_group(lane, g, WARP_SIZE, w, n, w_max, q0, NO_CAP);
        if (g.rank == 0) out[lane.id] = (int)j;
    }
}
