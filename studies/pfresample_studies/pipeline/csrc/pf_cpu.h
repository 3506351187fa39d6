/* The particle filters' best CPU code: what the studies' C filters share.
 *
 * - Random numbers: a counter-based generator (SplitMix64's finaliser applied to
 *   seed, stream and counter), so that particle i of step t draws the same numbers on
 *   any thread count and in any order: the filters' results do not depend on OpenMP's
 *   schedule. Uniforms in [0, 1) with 53 bits; normals by Box-Muller on two uniforms.
 * - A STREAM-style copy: the machine's bound that each CPU filter reports its
 *   bandwidth against.
 *
 * Static inline functions only: every study's source includes this header and builds
 * alone (pipeline/cbuild.py puts csrc/ on the include path). */
#ifndef PF_CPU_H
#define PF_CPU_H

#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t pf_mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The 64 random bits of (seed, stream, counter): stream is e.g. the particle's index,
 * counter the step and the draw within it. */
static inline uint64_t pf_bits(uint64_t seed, uint64_t stream, uint64_t counter) {
    return pf_mix64(pf_mix64(pf_mix64(seed) ^ stream) ^ counter);
}

static inline double pf_uniform(uint64_t seed, uint64_t stream, uint64_t counter) {
    return (double)(pf_bits(seed, stream, counter) >> 11) * 0x1.0p-53;
}

/* A standard normal from draws counter and counter + 1 (Box-Muller, the cosine half). */
static inline double pf_normal(uint64_t seed, uint64_t stream, uint64_t counter) {
    double u1 = 1.0 - pf_uniform(seed, stream, counter); /* (0, 1]: log is finite */
    double u2 = pf_uniform(seed, stream, counter + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* dst = src over n doubles, `rounds` times, on `threads` threads (0: all): the copy's
 * bytes read and written a second are the bound the filters' bandwidth is set against. */
static inline void pf_stream_copy(double *dst, const double *src, int64_t n, int rounds,
                                  int threads) {
    if (threads <= 0) threads = omp_get_max_threads();
    for (int r = 0; r < rounds; ++r) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    }
}

#endif
