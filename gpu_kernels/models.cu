// models.cu -- stage 1 of the SIR filter (thesis Algorithm 2.4) on the GPU:
// prediction and weight update of the growth model (eqs. 2.34-2.35) and the
// radar model (eqs. 7.1-7.2), one thread per particle; and the same for
// Güldaş's filters (filters/adaptive_gpu.py, filters/smcem_gpu.py): the
// bimodal model (eqs. 4.7-4.8) and the stochastic-volatility model with
// its sufficient statistics (§4.3.1). The arithmetic lives
// in models.cuh (checked on the host against NumPy); the driver is
// src/pfresample/filters/sir_gpu.py, the other stages are filter.cu.
//
// States are float32, as everything in the thesis is single precision
// (§2.4). A kernel writes log p(z_k | x_k^i) up to a constant and raises
// top[0] to the largest of them (as to_ordered, reduce.cuh): the filter
// subtracts it before exponentiating (filters/sir.py, weights_from_log, says
// why). The model noise comes from models.cuh's normals4 under the run's
// noise key -- a key of its own, from the run seed's noise child
// (filters/sir.py, derive_seeds), so it never meets a resampler's draws.
//
// The noise key and the measurement are read from device memory, not passed
// by value: the filter is one CUDA graph, captured once and replayed for
// every run, and a run only rewrites those inputs. Blocks have
// REDUCE_THREADS threads (the maximum is a block reduction).

#include "models.cuh"
#include "reduce.cuh"

namespace pfr {

// top[0] = max(top[0], the block's largest log-weight). Threads past the
// last particle bring -inf. One atomic per block at most: most blocks see a
// top already above theirs and skip it.
__device__ void raise_top(float log_w, unsigned int* top) {
    const float m = block_max(log_w);
    if (threadIdx.x == 0) {
        const unsigned int key = to_ordered(m);
        if (key > *(volatile unsigned int*)top) atomicMax(top, key);
    }
}

// The loop of every model with one normal a particle a step (growth,
// bimodal, volatility): a thread per Philox block of stream g (normals4),
// PER_BLOCK particles i = g + j * streams each taking normal v[j], so that a
// warp still reads and writes 32 neighbouring particles. `update(i, v)`
// moves particle i and returns its new log-weight; with `top`, top[0] is
// raised to their maximum (every thread of the block takes part).
template <int PER_BLOCK, typename Update>
__device__ void scalar_particles(unsigned int n, const unsigned int* noise_key,
                                 unsigned long long block, unsigned int* top, Update update) {
    const unsigned int g = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int streams = (n + PER_BLOCK - 1) / PER_BLOCK;
    float best = __uint_as_float(0xff800000u);  // -inf (NVRTC has no INFINITY)
    if (g < streams) {
        float v[4];
        normals4(PhiloxKey{noise_key[0], noise_key[1]}, g, block, v);
        for (int j = 0; j < PER_BLOCK; ++j) {
            const unsigned int i = g + j * streams;
            if (i >= n) break;
            best = fmaxf(best, update(i, v[j]));
        }
    }
    if (top != nullptr) raise_top(best, top);
}

}  // namespace pfr

// x^i ~ N(mean, sd^2): the growth model's initial particles (§2.6). A
// thread per Philox block (GROWTH_PER_BLOCK particles, models.cuh), as
// growth_predict.
extern "C" __global__ void growth_init(float* __restrict__ x, unsigned int n,
                                       const unsigned int* __restrict__ noise_key, float mean,
                                       float sd) {
    using namespace pfr;
    scalar_particles<GROWTH_PER_BLOCK>(n, noise_key, 0ull, nullptr, [&](unsigned int i, float v) {
        x[i] = mean + sd * v;
        return 0.0f;
    });
}

// Eq. 2.34 in place (drift = 8 cos(1.2 k) from the host), then eq. 2.35
// with the measurement z[0]; a thread per Philox block (GROWTH_PER_BLOCK
// particles).
extern "C" __global__ void growth_predict(float* __restrict__ x, float* __restrict__ log_w,
                                          unsigned int n, const unsigned int* __restrict__ noise_key,
                                          unsigned long long block, float drift, float sigma_v,
                                          const float* __restrict__ z, float inv_var_n,
                                          unsigned int* __restrict__ top) {
    using namespace pfr;
    const float y = z[0];
    scalar_particles<GROWTH_PER_BLOCK>(n, noise_key, block, top, [&](unsigned int i, float v) {
        const float next = growth_step(x[i], drift, sigma_v, v);
        x[i] = next;
        return log_w[i] = growth_log_likelihood(next, y, inv_var_n);
    });
}

// growth_predict from the last step's states through its ancestors (null at
// the first step: in place), without a gather kernel between the steps
// (models.cuh, growth_through): dst[i] = eq. 2.34 of src[ancestors[i]].
// The same noise, states and log-weights as gather_rows then growth_predict.
extern "C" __global__ void growth_predict_through(const float* src, const int* ancestors,
                                                  float* dst, float* __restrict__ log_w,
                                                  unsigned int n,
                                                  const unsigned int* __restrict__ noise_key,
                                                  unsigned long long block, float drift,
                                                  float sigma_v, const float* __restrict__ z,
                                                  float inv_var_n, unsigned int* __restrict__ top) {
    using namespace pfr;
    const PhiloxKey noise{noise_key[0], noise_key[1]};
    raise_top(growth_through(src, ancestors, dst, log_w, n, noise, block, drift, sigma_v, z[0],
                             inv_var_n),
              top);
}

// The four rows of x (4, n) from N(m, diag(s^2)): the radar model's p_x,
// p_y, v_x, v_y ~ N(x_0, P_0) (Tables 7.1 / 7.4), the bearings-only model's
// x, xdot, y, ydot from its prior.
extern "C" __global__ void rows4_init(float* __restrict__ x, unsigned int n,
                                      const unsigned int* __restrict__ noise_key, float m0,
                                      float m1, float m2, float m3, float s0, float s1, float s2,
                                      float s3) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float z[4];
    normals4(PhiloxKey{noise_key[0], noise_key[1]}, i, 0ull, z);
    x[i] = m0 + s0 * z[0];
    x[n + i] = m1 + s1 * z[1];
    x[2 * n + i] = m2 + s2 * z[2];
    x[3 * n + i] = m3 + s3 * z[3];
}

// Eq. 7.1 in place (q ~ N(0, diag(q_sd^2))), then eq. 7.2 with the
// measurement (range, bearing) = (z[0], z[1]); a thread per Philox block
// (RADAR_PER_BLOCK particles, two normals each).
extern "C" __global__ void radar_predict(float* __restrict__ x, float* __restrict__ log_w,
                                         unsigned int n, const unsigned int* __restrict__ noise_key,
                                         unsigned long long block, float dt, float q_sd_x,
                                         float q_sd_y, float sensor_x, float sensor_y,
                                         const float* __restrict__ z, float inv_var_range,
                                         float inv_var_bearing, unsigned int* __restrict__ top) {
    using namespace pfr;
    const unsigned int g = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int streams = (n + RADAR_PER_BLOCK - 1) / RADAR_PER_BLOCK;
    float best = __uint_as_float(0xff800000u);  // -inf
    if (g < streams) {
        float q[4];
        normals4(PhiloxKey{noise_key[0], noise_key[1]}, g, block, q);
        const float y_range = z[0], y_bearing = z[1];
        for (int j = 0; j < RADAR_PER_BLOCK; ++j) {
            const unsigned int i = g + j * streams;
            if (i >= n) break;
            RadarState s{x[i], x[n + i], x[2 * n + i], x[3 * n + i]};
            s = radar_step(s, dt, q_sd_x * q[2 * j], q_sd_y * q[2 * j + 1]);
            x[i] = s.px;
            x[n + i] = s.py;
            x[2 * n + i] = s.vx;
            x[3 * n + i] = s.vy;
            const float lw = radar_log_likelihood(s, sensor_x, sensor_y, y_range, y_bearing,
                                                  inv_var_range, inv_var_bearing);
            log_w[i] = lw;
            best = fmaxf(best, lw);
        }
    }
    raise_top(best, top);
}

// Eq. 4.7 in place, x += sigma_1 v, then log_w = (carry ? log_w : 0) +
// log g_t(x) (eq. 4.8, the modes at +-mode[0]): the bootstrap filter starts
// each step from even weights, the adaptive filter carries them. A thread
// per Philox block (SCALAR_PER_BLOCK particles), as growth_predict.
extern "C" __global__ void bimodal_predict(float* __restrict__ x, float* __restrict__ log_w,
                                           unsigned int n,
                                           const unsigned int* __restrict__ noise_key,
                                           unsigned long long block, float sigma_1,
                                           const float* __restrict__ mode, float inv_two_var,
                                           int carry, unsigned int* __restrict__ top) {
    using namespace pfr;
    const float m = mode[0];
    scalar_particles<SCALAR_PER_BLOCK>(n, noise_key, block, top, [&](unsigned int i, float v) {
        const float next = x[i] + sigma_1 * v;
        x[i] = next;
        const float before = carry ? log_w[i] : 0.0f;
        return log_w[i] = before + bimodal_log_likelihood(next, m, inv_two_var);
    });
}

// The volatility model's particles as five rows of n: the state x and the
// running sums S_1 ... S_4 of §4.3.1 (filters/smcem.py). `theta` holds
// (alpha, sigma, 1 / (2 beta^2)) on the device, so that one captured filter
// serves every EM iteration; `y` the observations y_0 ... y_n.

// Time 0: x_0 ~ N(0, sigma^2), S_1 = S_3 = 0, S_2 = x_0^2, S_4 = y_0^2
// exp(-x_0), log_w = log g_0(x_0).
extern "C" __global__ void volatility_init(float* __restrict__ xs, unsigned int n,
                                           const unsigned int* __restrict__ noise_key,
                                           const float* __restrict__ theta,
                                           const float* __restrict__ y, float* __restrict__ log_w,
                                           unsigned int* __restrict__ top) {
    using namespace pfr;
    const float sigma = theta[1], y2 = y[0] * y[0], inv_two_beta2 = theta[2];
    scalar_particles<SCALAR_PER_BLOCK>(n, noise_key, 0ull, top, [&](unsigned int i, float v) {
        const float x = sigma * v;
        xs[i] = x;
        xs[n + i] = 0.0f;
        xs[2 * n + i] = x * x;
        xs[3 * n + i] = 0.0f;
        xs[4 * n + i] = y2 * expf(-x);
        return log_w[i] = volatility_log_likelihood(x, y2, inv_two_beta2);
    });
}

// Time k >= 1: x_k = alpha x_{k-1} + sigma v, the sums S_1 += x_{k-1}^2,
// S_2 += x_k^2, S_3 += x_{k-1} x_k, S_4 += y_k^2 exp(-x_k), and log_w +=
// log g_k(x_k); y_k = y[0].
extern "C" __global__ void volatility_predict(float* __restrict__ xs, float* __restrict__ log_w,
                                              unsigned int n,
                                              const unsigned int* __restrict__ noise_key,
                                              unsigned long long block,
                                              const float* __restrict__ theta,
                                              const float* __restrict__ y,
                                              unsigned int* __restrict__ top) {
    using namespace pfr;
    const float alpha = theta[0], sigma = theta[1], y2 = y[0] * y[0], inv_two_beta2 = theta[2];
    scalar_particles<SCALAR_PER_BLOCK>(n, noise_key, block, top, [&](unsigned int i, float v) {
        const float x = xs[i];
        const float next = alpha * x + sigma * v;
        xs[i] = next;
        xs[n + i] += x * x;
        xs[2 * n + i] += next * next;
        xs[3 * n + i] += x * next;
        xs[4 * n + i] += y2 * expf(-next);
        return log_w[i] = log_w[i] + volatility_log_likelihood(next, y2, inv_two_beta2);
    });
}

// Bearings-only tracking (models/bearings.py) for the SIR filter, rows x,
// xdot, y, ydot of (4, n) (drawn by rows4_init): (B1) in place with w =
// (v0, v1) of the particle's Philox block, then (B2) with the bearing z[0];
// one thread a particle (a bearings-only run is small).
extern "C" __global__ void bot_predict(float* __restrict__ x, float* __restrict__ log_w,
                                       unsigned int n, const unsigned int* __restrict__ noise_key,
                                       unsigned long long block, float q_sd,
                                       const float* __restrict__ z, float inv_var,
                                       unsigned int* __restrict__ top) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float best = __uint_as_float(0xff800000u);  // -inf
    if (i < n) {
        float v[4];
        normals4(PhiloxKey{noise_key[0], noise_key[1]}, i, block, v);
        const BotState s = bot_step(BotState{x[i], x[n + i], x[2 * n + i], x[3 * n + i]}, q_sd,
                                    v[0], v[1]);
        x[i] = s.x;
        x[n + i] = s.vx;
        x[2 * n + i] = s.y;
        x[3 * n + i] = s.vy;
        best = log_w[i] = bot_log_likelihood(s, z[0], inv_var);
    }
    raise_top(best, top);
}

// The UUV velocities (Das et al. 2014, eqs. 11-12; models/uuv.py): rows Xdot,
// Ydot of a (2, n) array. uuv_init draws them from N(x0, sd^2 I) (Philox
// block 0); uuv_predict takes one step k, read from step[0] (the D3 filter's
// graph replays one chunk of steps, filters/d3_gpu.py): x = F_k x + b_k + sd v
// with table[4k ... 4k + 3] = (F_01, F_10, b_0, b_1) (F_00 = F_11 = 1), v from
// Philox block k + 1, then log p(z_k | x) with z_k = z[2k], z[2k + 1], the
// DVL's known bias subtracted. One particle a thread.
extern "C" __global__ void uuv_init(float* __restrict__ x, unsigned int n,
                                    const unsigned int* __restrict__ noise_key, float m0, float m1,
                                    float sd) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[4];
    normals4(PhiloxKey{noise_key[0], noise_key[1]}, i, 0ull, v);
    x[i] = m0 + sd * v[0];
    x[n + i] = m1 + sd * v[1];
}

namespace pfr {

// One UUV particle's step k (uuv_predict's body): x = F_k x + b_k + sd v, then
// its log-likelihood, which it returns.
__device__ __forceinline__ float uuv_particle(float* __restrict__ x, float* __restrict__ log_w,
                                              unsigned int n, unsigned int i, unsigned int k,
                                              const unsigned int* __restrict__ noise_key,
                                              const float* __restrict__ table,
                                              const float* __restrict__ z, float obs_mean,
                                              float process_sd, float inv_var) {
    const float4 t = reinterpret_cast<const float4*>(table)[k];
    float v[4];
    normals4(PhiloxKey{noise_key[0], noise_key[1]}, i, (unsigned long long)k + 1ull, v);
    const float a = x[i], b = x[n + i];
    const float na = a + t.x * b + t.z + process_sd * v[0];
    const float nb = b + t.y * a + t.w + process_sd * v[1];
    x[i] = na;
    x[n + i] = nb;
    const float r0 = z[2 * k] - obs_mean - na;
    const float r1 = z[2 * k + 1] - obs_mean - nb;
    return log_w[i] = -0.5f * (r0 * r0 + r1 * r1) * inv_var;
}

}  // namespace pfr

extern "C" __global__ void uuv_predict(float* __restrict__ x, float* __restrict__ log_w,
                                       unsigned int n, const unsigned int* __restrict__ noise_key,
                                       const unsigned int* __restrict__ step,
                                       const float* __restrict__ table,
                                       const float* __restrict__ z, float obs_mean,
                                       float process_sd, float inv_var,
                                       unsigned int* __restrict__ top) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int k = step[0];
    float best = __uint_as_float(0xff800000u);  // -inf
    if (i < n) {
        best = uuv_particle(x, log_w, n, i, k, noise_key, table, z, obs_mean, process_sd, inv_var);
    }
    raise_top(best, top);
}

// uuv_predict at any block size from 32 to 1024 (the paper's step, every
// kernel at the threads per block it sweeps: filters/d3_gpu.py): the same
// particles and log-weights; the block's maximum by reduce.cuh's
// block_reduce_any instead of block_max (which needs whole warps).
extern "C" __global__ void uuv_predict_any(float* __restrict__ x, float* __restrict__ log_w,
                                           unsigned int n,
                                           const unsigned int* __restrict__ noise_key,
                                           const unsigned int* __restrict__ step,
                                           const float* __restrict__ table,
                                           const float* __restrict__ z, float obs_mean,
                                           float process_sd, float inv_var,
                                           unsigned int* __restrict__ top) {
    using namespace pfr;
    __shared__ float shared[ANY_MAX_THREADS];
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int k = step[0];
    float best = __uint_as_float(0xff800000u);  // -inf
    if (i < n) {
        best = uuv_particle(x, log_w, n, i, k, noise_key, table, z, obs_mean, process_sd, inv_var);
    }
    best = block_reduce_any(best, shared, Max());
    if (threadIdx.x == 0) {
        const unsigned int key = to_ordered(best);
        if (key > *(volatile unsigned int*)top) atomicMax(top, key);
    }
}
