// models.cu -- stage 1 of the SIR filter (thesis Algorithm 2.4) on the GPU:
// prediction and weight update of the growth model (eqs. 2.34-2.35) and the
// radar model (eqs. 7.1-7.2). The twins of src/pfresample/models/*.py; the
// driver is src/pfresample/filters/sir_gpu.py.
//
// States are float32, as everything in the thesis is single precision
// (§2.4). A kernel writes log p(z_k | x_k^i) up to a constant; the filter
// subtracts the maximum before exponentiating (filters/sir.py,
// weights_from_log, says why).
//
// Model noise: Box-Muller on one Philox block per (particle, block), with
// the run's noise key -- a key of its own, from the run seed's noise child
// (filters/sir.py, derive_seeds), so it never meets a resampler's draws.
// Block 0 draws the initial particles, block k + 1 the noise of the step
// from x_k to x_{k+1} (k = 0 ... T-1). One block gives four normals.

#include "philox.cuh"

namespace pfr {

constexpr float TWO_PI_F = 6.283185307179586f;
constexpr float PI_F = 3.141592653589793f;

// Four standard normals of (key, particle, block): Box-Muller on the four
// words, u1 in (0, 1] so that the logarithm is finite.
__device__ __forceinline__ void normals4(PhiloxKey key, unsigned int particle,
                                         unsigned long long block, float z[4]) {
    const Philox4x32 r = philox_block(key, DOMAIN_PARTICLE, particle, block);
    const float r0 = sqrtf(-2.0f * logf(uniform_accept(r.x)));
    const float r1 = sqrtf(-2.0f * logf(uniform_accept(r.z)));
    float s0, c0, s1, c1;
    sincosf(TWO_PI_F * uniform_float(r.y), &s0, &c0);
    sincosf(TWO_PI_F * uniform_float(r.w), &s1, &c1);
    z[0] = r0 * c0;
    z[1] = r0 * s0;
    z[2] = r1 * c1;
    z[3] = r1 * s1;
}

// An angle mapped into [-pi, pi) (radar.py's wrap_angle).
__device__ __forceinline__ float wrap_angle(float a) {
    return a - TWO_PI_F * floorf((a + PI_F) / TWO_PI_F);
}

}  // namespace pfr

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

// Eq. 2.34 in place: x <- x/2 + 25x/(1+x^2) + drift + sigma_v v, drift =
// 8 cos(1.2 k) from the host; then log p(z | x) of eq. 2.35 (up to a constant).
extern "C" __global__ void growth_predict(float* __restrict__ x, float* __restrict__ log_w,
                                          unsigned int n, unsigned int k0, unsigned int k1,
                                          unsigned long long block, float drift, float sigma_v,
                                          float z, float inv_var_n) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[4];
    normals4(PhiloxKey{k0, k1}, i, block, v);
    const float xi = x[i];
    const float next = 0.5f * xi + 25.0f * xi / (1.0f + xi * xi) + drift + sigma_v * v[0];
    x[i] = next;
    const float r = z - next * next / 20.0f;
    log_w[i] = -0.5f * r * r * inv_var_n;
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

// Eq. 7.1 in place (x = F x + G q, q ~ N(0, diag(q_sd^2))), then
// log p(y | x) of eq. 7.2 with a diagonal R, the bearing residual wrapped.
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
    const float ax = q_sd_x * q[0];
    const float ay = q_sd_y * q[1];
    const float half = 0.5f * dt * dt;
    const float vx = x[2 * n + i];
    const float vy = x[3 * n + i];
    const float px = x[i] + dt * vx + half * ax;
    const float py = x[n + i] + dt * vy + half * ay;
    x[i] = px;
    x[n + i] = py;
    x[2 * n + i] = vx + dt * ax;
    x[3 * n + i] = vy + dt * ay;
    const float dx = px - sensor_x;
    const float dy = py - sensor_y;
    const float dr = y_range - sqrtf(dx * dx + dy * dy);
    const float db = wrap_angle(y_bearing - atan2f(dy, dx));
    log_w[i] = -0.5f * (dr * dr * inv_var_range + db * db * inv_var_bearing);
}
