// rejection.cu -- Rejection resampling (Murray et al.; thesis Algorithm 3.4).
// The twin of src/pfresample/resampling/rejection.py.
//
// Each particle starts at itself (j = i) and accepts j when
// u <= w[j] / w_max; otherwise it draws a new j uniformly and a new u.
// Draw layout on the particle stream: u of the first test at counter 0, then
// for attempt k = 1, 2, ...: the candidate at counter 2k-1, its u at 2k.
// w_max is stats[STAT_MAX] of the weight-statistics kernel (reduce.cu).
//
// GROUPED: a group of threads shares each lane (gpu.py, lane_group). Rank r
// makes the attempts of pairs r, r + group, r + 2 group, ... (pair q:
// attempts 2q+1 and 2q+2, counters 4q+1 .. 4q+4 -- words 1-3 of Philox block
// q and word 0 of block q+1), so that a round tests 2 x group attempts at
// once; the first accepted one in attempt order wins, the ancestor that one
// thread testing them one by one returns. With few lanes this turns each
// lane's long serial chain of loads into a few rounds.

#include "lanes.cuh"
#include "stats.cuh"

namespace pfr {

// Murray's test, written as the loop's "u > ratio: try again" so that a NaN
// ratio accepts, as on the CPU.
template <typename T>
__device__ __forceinline__ bool accepts(unsigned int u_draw, T wj, T w_max) {
    return !((T)uniform_accept(u_draw) > wj / w_max);
}

// One thread a lane: attempt after attempt until one accepts.
template <typename T>
__device__ __forceinline__ unsigned int rejection_one(const Lane& lane, const T* __restrict__ w,
                                                      unsigned int n, T w_max) {
    PhiloxStream s = make_stream(lane.key, DOMAIN_PARTICLE, lane.particle);
    unsigned int j = lane.particle;
    float u = uniform_accept(s.word(0ull));
    for (unsigned long long k = 1; (T)u > w[j] / w_max; ++k) {  // not accepts(): NaN exits too
        j = uniform_int(s.word(2 * k - 1), n);
        u = uniform_accept(s.word(2 * k));
    }
    return j;
}

// A group of threads a lane: rounds of 2 x group attempts (see above).
template <typename T>
__device__ __forceinline__ unsigned int rejection_group(const Lane& lane, const Group& g,
                                                        unsigned int group,
                                                        const T* __restrict__ w, unsigned int n,
                                                        T w_max) {
    const Philox4x32 first = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, 0ull);
    if (accepts(first.x, w[lane.particle], w_max)) return lane.particle;  // the same in every rank
    unsigned long long q = g.rank;
    Philox4x32 a = q == 0 ? first : philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q);
    for (;; q += group) {
        const Philox4x32 b = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q + 1);
        const unsigned int j1 = uniform_int(a.y, n), j2 = uniform_int(a.w, n);
        const T w1 = w[j1], w2 = w[j2];
        const bool ok1 = accepts(a.z, w1, w_max), ok2 = accepts(b.x, w2, w_max);
        const unsigned int hits = __ballot_sync(g.mask, ok1 || ok2) & g.mask;
        if (hits) {
            const int winner = (__ffs(hits) - 1) - (__ffs(g.mask) - 1);  // the lowest rank
            return __shfl_sync(g.mask, ok1 ? j1 : j2, winner, group);
        }
        a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, q + group);
    }
}

}  // namespace pfr

template <typename T, bool GROUPED>
__global__ void rejection(const T* __restrict__ w, unsigned int n, long long lanes,
                          const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                          unsigned int k1, const double* __restrict__ stats, unsigned int group,
                          int* __restrict__ out) {
    using namespace pfr;
    const Group g = make_group(GROUPED ? group : 1u);
    const long long id = g.lane;
    if (id >= lanes) return;  // whole groups leave
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    const T w_max = (T)stats[STAT_MAX];  // a weight converted to double: exact back
    const unsigned int j = GROUPED ? rejection_group(lane, g, group, w, n, w_max)
                                   : rejection_one(lane, w, n, w_max);
    if (g.rank == 0) out[id] = (int)j;
}
