// metropolis.cu -- Metropolis resampling and its memory-coalescing variants.
// The twin of src/pfresample/resampling/metropolis.py; same draws, same ancestors.
//
//   MODE_GLOBAL: Metropolis (Murray et al.; thesis Algorithm 3.3)
//   MODE_ONCE:   Metropolis-C1 (Algorithm 5.1)
//   MODE_EVERY:  Metropolis-C2 (Algorithm 5.2)
//
// Draw layout, iteration m = 0 .. B-1: the particle stream gives the
// acceptance uniform u at counter 2m and the candidate offset at counter
// 2m+1, so one Philox block serves two iterations.

#include "lanes.cuh"

namespace pfr {

// One Metropolis step: move to candidate j when u <= w[j] / w[t], the ratio
// in the weights' precision (IEEE division: NVRTC's default -prec-div=true).
template <typename T>
__device__ __forceinline__ void metropolis_step(unsigned int u_draw, unsigned int j, T wj,
                                                unsigned int& t, T& wt) {
    if ((T)uniform_accept(u_draw) <= wj / wt) {
        t = j;
        wt = wj;
    }
}

}  // namespace pfr

template <typename T, int MODE, bool SHARED>
__global__ void metropolis(const T* __restrict__ w, unsigned int n, long long lanes,
                           const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                           unsigned int k1, int b, const int* __restrict__ b_device,
                           unsigned int dc, unsigned int sc, int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;  // SHARED: lanes is a multiple of 32, whole warps leave
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    Candidates<MODE, SHARED> cand(lane, n, dc, sc);
    const int B = loop_length(b, b_device);
    unsigned int t = lane.particle;
    T wt = w[t];
    int m = 0;
    // Four iterations per pass: the four candidate loads do not depend on
    // the chain's state, so they are issued together and their latencies
    // overlap (the kernel is bound by these random loads).
    for (; m + 4 <= B; m += 4) {
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 1);
        const Philox4x32 c = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, (m >> 1) + 1);
        const unsigned int j0 = cand.pick(m, a.y);
        const unsigned int j1 = cand.pick(m + 1, a.w);
        const unsigned int j2 = cand.pick(m + 2, c.y);
        const unsigned int j3 = cand.pick(m + 3, c.w);
        const T w0 = w[j0], w1 = w[j1], w2 = w[j2], w3 = w[j3];
        metropolis_step(a.x, j0, w0, t, wt);
        metropolis_step(a.z, j1, w1, t, wt);
        metropolis_step(c.x, j2, w2, t, wt);
        metropolis_step(c.z, j3, w3, t, wt);
    }
    for (; m < B; ++m) {
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 1);
        const bool odd = m & 1;
        const unsigned int j = cand.pick(m, odd ? a.w : a.y);
        metropolis_step(odd ? a.z : a.x, j, w[j], t, wt);
    }
    out[id] = (int)t;
}
