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

template <typename T, int MODE, bool SHARED>
__global__ void uphill(const T* __restrict__ w, unsigned int n, long long lanes,
                       const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                       unsigned int k1, int b, const int* __restrict__ b_device, unsigned int dc,
                       unsigned int sc, int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;  // SHARED: lanes is a multiple of 32, whole warps leave
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    Candidates<MODE, SHARED> cand(lane, n, dc, sc);
    const int B = loop_length(b, b_device);
    unsigned int t = lane.particle;
    T wt = w[t];
    for (int m = 0; m < B; m += 4) {
        const Philox4x32 a = philox_block(lane.key, DOMAIN_PARTICLE, lane.particle, m >> 2);
        if (m + 4 <= B) {
            // Four independent candidate loads in flight at once.
            const unsigned int j0 = cand.pick(m, a.x);
            const unsigned int j1 = cand.pick(m + 1, a.y);
            const unsigned int j2 = cand.pick(m + 2, a.z);
            const unsigned int j3 = cand.pick(m + 3, a.w);
            const T w0 = w[j0], w1 = w[j1], w2 = w[j2], w3 = w[j3];
            if (wt < w0) { t = j0; wt = w0; }
            if (wt < w1) { t = j1; wt = w1; }
            if (wt < w2) { t = j2; wt = w2; }
            if (wt < w3) { t = j3; wt = w3; }
        } else {
            for (int k = 0; m + k < B; ++k) {
                const unsigned int j = cand.pick(m + k, a.word((unsigned int)k));
                const T wj = w[j];
                if (wt < wj) { t = j; wt = wj; }
            }
        }
    }
    out[id] = (int)t;
}
