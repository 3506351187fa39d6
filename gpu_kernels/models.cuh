// models.cuh -- the arithmetic of the filter's models, shared by models.cu's
// kernels and by the host test that checks it against NumPy
// (tests/gpu/test_models_cuda.py): the growth model (eqs. 2.34-2.35), the radar
// model (eqs. 7.1-7.2), Güldaş's bimodal model (eqs. 4.7-4.8) and
// stochastic-volatility model (§4.3.1), the bearings-only tracking model of
// Gordon, Salmond & Smith 1993 (models/bearings.py, eqs. B1-B2), and the model
// noise. Host and device (PFR_HD), float32.
#pragma once

#include "philox.cuh"

namespace pfr {

constexpr float TWO_PI_F = 6.283185307179586f;
constexpr int GROWTH_PER_BLOCK = 4;  // sir_gpu._GrowthTwin.per_block
constexpr int RADAR_PER_BLOCK = 2;   // sir_gpu._RadarTwin.per_block
constexpr int SCALAR_PER_BLOCK = 4;  // one normal a particle a step: the bimodal and volatility models
constexpr float LOG_HALF_F = -0.6931471805599453f;
constexpr float PI_F = 3.141592653589793f;

// Four standard normals of (key, stream, block): Box-Muller on the four
// words of one Philox block, u1 in (0, 1] so that the logarithm is finite.
// The filter's noise layout: block 0 draws the initial particles, block
// k + 1 the noise of the step from x_k to x_{k+1}. A step of the growth
// model needs one normal a particle, of the radar model two, so one block
// serves GROWTH_PER_BLOCK or RADAR_PER_BLOCK particles: with S = ceil(N /
// PER_BLOCK) streams, particle i draws from stream i % S, its normals
// (i / S) * 4 / PER_BLOCK on. (A Philox block costs about as much as the
// rest of a prediction; and particles S apart, not neighbours, share one so
// that a warp still reads and writes 32 neighbouring states.)
PFR_HD void normals4(PhiloxKey key, unsigned int particle, unsigned long long block, float z[4]) {
    const Philox4x32 r = philox_block(key, DOMAIN_PARTICLE, particle, block);
    const float r0 = sqrtf(-2.0f * logf(uniform_accept(r.x)));
    const float r1 = sqrtf(-2.0f * logf(uniform_accept(r.z)));
    const float a0 = TWO_PI_F * uniform_float(r.y);
    const float a1 = TWO_PI_F * uniform_float(r.w);
    z[0] = r0 * cosf(a0);
    z[1] = r0 * sinf(a0);
    z[2] = r1 * cosf(a1);
    z[3] = r1 * sinf(a1);
}

// An angle mapped into [-pi, pi) (radar.py's wrap_angle).
PFR_HD float wrap_angle(float a) { return a - TWO_PI_F * floorf((a + PI_F) / TWO_PI_F); }

// Eq. 2.34: x_{k+1} = x/2 + 25x/(1+x^2) + drift + sigma_v v, drift = 8 cos(1.2 k).
PFR_HD float growth_step(float x, float drift, float sigma_v, float v) {
    return 0.5f * x + 25.0f * x / (1.0f + x * x) + drift + sigma_v * v;
}

// Eq. 2.35: log p(z | x) up to its constant, inv_var_n = 1 / sigma_n^2.
PFR_HD float growth_log_likelihood(float x, float z, float inv_var_n) {
    const float r = z - x * x / 20.0f;
    return -0.5f * r * r * inv_var_n;
}

// A radar state (eq. 7.1): position and velocity.
struct RadarState {
    float px, py, vx, vy;
};

// Eq. 7.1: x = F x + G q, with the acceleration q = (ax, ay) over dt.
PFR_HD RadarState radar_step(RadarState s, float dt, float ax, float ay) {
    const float half = 0.5f * dt * dt;
    RadarState out;
    out.px = s.px + dt * s.vx + half * ax;
    out.py = s.py + dt * s.vy + half * ay;
    out.vx = s.vx + dt * ax;
    out.vy = s.vy + dt * ay;
    return out;
}

// Eq. 7.2: log p(y | x) up to its constant for range and bearing measured
// from the sensor, R diagonal, the bearing residual wrapped.
PFR_HD float radar_log_likelihood(RadarState s, float sensor_x, float sensor_y, float y_range,
                                  float y_bearing, float inv_var_range, float inv_var_bearing) {
    const float dx = s.px - sensor_x;
    const float dy = s.py - sensor_y;
    const float dr = y_range - sqrtf(dx * dx + dy * dy);
    const float db = wrap_angle(y_bearing - atan2f(dy, dx));
    return -0.5f * (dr * dr * inv_var_range + db * db * inv_var_bearing);
}

// Eq. 4.8 (the minus signs restored): log g_t(x) with the modes at +-mode
// (mode = 0.5 t), inv_two_var = 1 / (2 sigma_2^2): log 0.5 plus the
// log-sum-exp of the two exponents, as models/bimodal.py computes it.
PFR_HD float bimodal_log_likelihood(float x, float mode, float inv_two_var) {
    const float a = -(x - mode) * (x - mode) * inv_two_var;
    const float b = -(x + mode) * (x + mode) * inv_two_var;
    const float hi = fmaxf(a, b);
    return LOG_HALF_F + hi + log1pf(expf(fminf(a, b) - hi));
}

// §4.3.1: log N(y; 0, beta^2 exp(x)) up to its constant, -x/2 - y^2 exp(-x)
// / (2 beta^2); y2 = y^2, inv_two_beta2 = 1 / (2 beta^2).
PFR_HD float volatility_log_likelihood(float x, float y2, float inv_two_beta2) {
    return -0.5f * x - y2 * expf(-x) * inv_two_beta2;
}

// A bearings-only tracking state (eq. B1): position and velocity, in the
// order of models/bearings.py, (x, xdot, y, ydot).
struct BotState {
    float x, vx, y, vy;
};

// Eq. B1: x = F x + G (q_sd w) with a unit time step, w = (w0, w1) standard
// normals.
PFR_HD BotState bot_step(BotState s, float q_sd, float w0, float w1) {
    const float ax = q_sd * w0;
    const float ay = q_sd * w1;
    BotState out;
    out.x = s.x + s.vx + 0.5f * ax;
    out.vx = s.vx + ax;
    out.y = s.y + s.vy + 0.5f * ay;
    out.vy = s.vy + ay;
    return out;
}

// Eq. B2: log p(z | x) up to its constant for the bearing atan2(y, x) seen from
// the origin, the residual wrapped; inv_var = 1 / r.
PFR_HD float bot_log_likelihood(BotState s, float z, float inv_var) {
    const float d = wrap_angle(z - atan2f(s.y, s.x));
    return -0.5f * d * d * inv_var;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Eq. 2.34 for the particles of the thread's Philox blocks g (a grid-stride
// loop; models.cu's scalar_particles layout: particle g + j * streams takes
// normal j of block `block` of stream g), each from the state
// src[ancestors[i]] -- the last step's resampling gathered on the way -- or
// src[i] where `ancestors` is null, into dst[i]; then eq. 2.35 into log_w.
// The thread's ancestors, then its states, go out together before its
// Philox block is computed: two L2 round trips a thread, not two a particle
// (dst and log_w may alias src as far as the compiler knows, so it would
// keep a particle's loads behind the previous one's stores). Loads through
// L2 (__ldcg): in fused.cu another SM may have written them in the same
// launch. Returns the thread's largest log-weight.
__device__ __forceinline__ float growth_through(const float* src, const int* ancestors, float* dst,
                                                float* log_w, unsigned int n, PhiloxKey noise,
                                                unsigned long long block, float drift,
                                                float sigma_v, float z, float inv_var_n) {
    const unsigned int streams = (n + GROWTH_PER_BLOCK - 1) / GROWTH_PER_BLOCK;
    float best = __uint_as_float(0xff800000u);  // -inf
    for (unsigned int g = blockIdx.x * blockDim.x + threadIdx.x; g < streams;
         g += gridDim.x * blockDim.x) {
        unsigned int from[GROWTH_PER_BLOCK];
#pragma unroll
        for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
            const unsigned int i = g + j * streams;
            from[j] = i >= n || ancestors == nullptr ? i : (unsigned int)__ldcg(ancestors + i);
        }
        float xs[GROWTH_PER_BLOCK];
#pragma unroll
        for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
            xs[j] = g + j * streams < n ? __ldcg(src + from[j]) : 0.0f;
        }
        float v[4];
        normals4(noise, g, block, v);
#pragma unroll
        for (int j = 0; j < GROWTH_PER_BLOCK; ++j) {
            const unsigned int i = g + j * streams;
            if (i >= n) break;
            const float next = growth_step(xs[j], drift, sigma_v, v[j]);
            dst[i] = next;
            const float lw = growth_log_likelihood(next, z, inv_var_n);
            log_w[i] = lw;
            best = fmaxf(best, lw);
        }
    }
    return best;
}
#endif

}  // namespace pfr
