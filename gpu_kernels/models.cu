// models.cu -- stage 1 of the SIR filter (thesis Algorithm 2.4) on the GPU:
// prediction and weight update of the growth model (eqs. 2.34-2.35) and the
// radar model (eqs. 7.1-7.2), one thread per particle. The arithmetic lives
// in models.cuh (checked on the host against NumPy); the driver is
// src/pfresample/filters/sir_gpu.py.
//
// States are float32, as everything in the thesis is single precision
// (§2.4). A kernel writes log p(z_k | x_k^i) up to a constant; the filter
// subtracts the maximum before exponentiating (filters/sir.py,
// weights_from_log, says why). The model noise comes from models.cuh's
// normals4 under the run's noise key -- a key of its own, from the run
// seed's noise child (filters/sir.py, derive_seeds), so it never meets a
// resampler's draws.

#include "models.cuh"

// x^i ~ N(mean, sd^2): the growth model's initial particles (§2.6).
extern "C" __global__ void growth_init(float* __restrict__ x, unsigned int n, unsigned int k0,
                                       unsigned int k1, float mean, float sd) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float z[4];
    normals4(PhiloxKey{k0, k1}, i, 0ull, z);
    x[i] = mean + sd * z[0];
}

// Eq. 2.34 in place (drift = 8 cos(1.2 k) from the host), then eq. 2.35.
extern "C" __global__ void growth_predict(float* __restrict__ x, float* __restrict__ log_w,
                                          unsigned int n, unsigned int k0, unsigned int k1,
                                          unsigned long long block, float drift, float sigma_v,
                                          float z, float inv_var_n) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[4];
    normals4(PhiloxKey{k0, k1}, i, block, v);
    const float next = growth_step(x[i], drift, sigma_v, v[0]);
    x[i] = next;
    log_w[i] = growth_log_likelihood(next, z, inv_var_n);
}

// Rows of x (4, n): p_x, p_y, v_x, v_y ~ N(x_0, P_0) (Tables 7.1 / 7.4).
extern "C" __global__ void radar_init(float* __restrict__ x, unsigned int n, unsigned int k0,
                                      unsigned int k1, float m0, float m1, float m2, float m3,
                                      float s0, float s1, float s2, float s3) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float z[4];
    normals4(PhiloxKey{k0, k1}, i, 0ull, z);
    x[i] = m0 + s0 * z[0];
    x[n + i] = m1 + s1 * z[1];
    x[2 * n + i] = m2 + s2 * z[2];
    x[3 * n + i] = m3 + s3 * z[3];
}

// Eq. 7.1 in place (q ~ N(0, diag(q_sd^2))), then eq. 7.2.
extern "C" __global__ void radar_predict(float* __restrict__ x, float* __restrict__ log_w,
                                         unsigned int n, unsigned int k0, unsigned int k1,
                                         unsigned long long block, float dt, float q_sd_x,
                                         float q_sd_y, float sensor_x, float sensor_y,
                                         float y_range, float y_bearing, float inv_var_range,
                                         float inv_var_bearing) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float q[4];
    normals4(PhiloxKey{k0, k1}, i, block, q);
    RadarState s{x[i], x[n + i], x[2 * n + i], x[3 * n + i]};
    s = radar_step(s, dt, q_sd_x * q[0], q_sd_y * q[1]);
    x[i] = s.px;
    x[n + i] = s.py;
    x[2 * n + i] = s.vx;
    x[3 * n + i] = s.vy;
    log_w[i] = radar_log_likelihood(s, sensor_x, sensor_y, y_range, y_bearing, inv_var_range,
                                    inv_var_bearing);
}
