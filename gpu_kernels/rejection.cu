// rejection.cu -- Rejection resampling (Murray et al.; thesis Algorithm 3.4).
// The twin of src/pfresample/resampling/rejection.py.
//
// Each particle starts at itself (j = i) and accepts j when
// u <= w[j] / w_max; otherwise it draws a new j uniformly and a new u.
// Draw layout on the particle stream: u of the first test at counter 0, then
// for attempt k = 1, 2, ...: the candidate at counter 2k-1, its u at 2k.
// w_max is stats[STAT_MAX] of the weight-statistics kernel (reduce.cu).

#include "lanes.cuh"
#include "stats.cuh"

template <typename T>
__global__ void rejection(const T* __restrict__ w, unsigned int n, long long lanes,
                          const unsigned int* __restrict__ keys, int n_keys, unsigned int k0,
                          unsigned int k1, const double* __restrict__ stats,
                          int* __restrict__ out) {
    using namespace pfr;
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= lanes) return;
    const Lane lane = make_lane(id, n, keys, n_keys, k0, k1);
    const T w_max = (T)stats[STAT_MAX];  // a weight converted to double: exact back
    PhiloxStream s = make_stream(lane.key, DOMAIN_PARTICLE, lane.particle);
    unsigned int j = lane.particle;
    float u = uniform_accept(s.word(0ull));
    for (unsigned long long k = 1; (T)u > w[j] / w_max; ++k) {
        j = uniform_int(s.word(2 * k - 1), n);
        u = uniform_accept(s.word(2 * k));
    }
    out[id] = (int)j;
}
