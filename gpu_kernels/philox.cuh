// philox.cuh -- counter-based random numbers: Philox4x32-10 for the CUDA kernels.
//
// This header and src/pfresample/rng.py follow ONE contract, so that the CUDA
// kernels and the NumPy reference draw the same numbers, bit for bit, for the
// same seed. The contract is stated in full in rng.py's module docstring; in
// short:
//
//   * Generator: Philox4x32-10 as published with Random123 (Salmon et al.,
//     SC'11): multipliers 0xD2511F53, 0xCD9E8D57; Weyl key increments
//     0x9E3779B9, 0xBB67AE85; ten rounds.
//   * Key: (seed mod 2^32, seed >> 32) for a 64-bit seed.
//   * Address of a 32-bit draw: (seed, domain, stream, counter), with
//         block = counter >> 2
//         ctr   = (block mod 2^32, block >> 32, stream, domain)
//         draw  = philox4x32_10(ctr, key)[counter & 3]
//     Domains: PARTICLE = 0 (stream = particle index), WARP = 1 (stream = warp
//     index), GLOBAL = 2 (stream = 0).
//   * Uniform float in [0, 1):  (draw >> 8) * 2^-24        as float32.
//   * Uniform float in (0, 1]:  ((draw >> 8) + 1) * 2^-24  as float32.
//   * Uniform float in [0, 1), 23 bits: (draw >> 9) * 2^-23 as float32.
//   * Uniform integer in [0, n): (uint64(draw) * n) >> 32.
//
// Change one side only together with the other; tests/gpu/test_philox_cuda.py
// checks them against each other.
//
// The header is self-contained: no #include at all, so that NVRTC (through
// cupy.RawModule) compiles it without system headers. It also compiles as
// host code under nvcc, and as plain C++ (the CUDA qualifiers are then
// dropped). Everything lives in namespace pfr.
//
// Names: rng.py's split_seed, philox4x32_10, philox_block, uniform_float,
// uniform_accept, uniform_float23, uniform_int and DOMAIN_* have namesakes here; rng.draws is
// pfr::draw_at (one draw), and lanes.Stream is pfr::PhiloxStream.
// Argument order: the helpers here take the address in contract order,
// (key, domain, stream, counter). Note that rng.philox_block's Python
// signature is (key, streams, block, domain) -- mind the order when porting.

#pragma once

#ifndef PFR_HD
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define PFR_HD __host__ __device__ __forceinline__
#else
#define PFR_HD inline
#endif
#endif

namespace pfr {

// Random123's Philox4x32 constants (philox.h); rng.py repeats them.
constexpr unsigned int PHILOX_M0 = 0xD2511F53u;
constexpr unsigned int PHILOX_M1 = 0xCD9E8D57u;
constexpr unsigned int PHILOX_W0 = 0x9E3779B9u;
constexpr unsigned int PHILOX_W1 = 0xBB67AE85u;
constexpr int PHILOX_ROUNDS = 10;

constexpr unsigned int DOMAIN_PARTICLE = 0u;
constexpr unsigned int DOMAIN_WARP = 1u;
constexpr unsigned int DOMAIN_GLOBAL = 2u;

// 2^-24, exactly representable in float.
constexpr float FLOAT_SCALE = 5.9604644775390625e-08f;

// Philox key: two 32-bit words.
struct PhiloxKey {
    unsigned int k0, k1;
};

// Four 32-bit words: a Philox counter or one Philox output block.
struct Philox4x32 {
    unsigned int x, y, z, w;

    // Word i (0..3) of the block. Written as selects rather than an array
    // index so that the block stays in registers on the device.
    PFR_HD unsigned int word(unsigned int i) const {
        return i == 0u ? x : i == 1u ? y : i == 2u ? z : w;
    }
};

// The Philox key of a 64-bit seed: (seed mod 2^32, seed >> 32).
PFR_HD PhiloxKey split_seed(unsigned long long seed) {
    PhiloxKey key;
    key.k0 = (unsigned int)(seed & 0xFFFFFFFFull);
    key.k1 = (unsigned int)(seed >> 32);
    return key;
}

// High and low words of the 64-bit product a * b.
PFR_HD unsigned int mulhilo32(unsigned int a, unsigned int b, unsigned int* hi) {
#ifdef __CUDA_ARCH__
    *hi = __umulhi(a, b);
    return a * b;
#else
    const unsigned long long p = (unsigned long long)a * (unsigned long long)b;
    *hi = (unsigned int)(p >> 32);
    return (unsigned int)p;
#endif
}

// One Philox4x32 round (Random123's philox4x32round).
PFR_HD Philox4x32 philox4x32_round(Philox4x32 ctr, PhiloxKey key) {
    unsigned int hi0, hi1;
    const unsigned int lo0 = mulhilo32(PHILOX_M0, ctr.x, &hi0);
    const unsigned int lo1 = mulhilo32(PHILOX_M1, ctr.z, &hi1);
    Philox4x32 out;
    out.x = hi1 ^ ctr.y ^ key.k0;
    out.y = lo1;
    out.z = hi0 ^ ctr.w ^ key.k1;
    out.w = lo0;
    return out;
}

// Philox4x32-10 block function: the key is bumped before every round but the
// first, as in Random123.
PFR_HD Philox4x32 philox4x32_10(Philox4x32 ctr, PhiloxKey key) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int r = 0; r < PHILOX_ROUNDS; ++r) {
        if (r) {
            key.k0 += PHILOX_W0;
            key.k1 += PHILOX_W1;
        }
        ctr = philox4x32_round(ctr, key);
    }
    return ctr;
}

// The four draws of block `block` (counters 4*block .. 4*block+3) of stream
// `stream` in domain `domain`.
PFR_HD Philox4x32 philox_block(PhiloxKey key, unsigned int domain, unsigned int stream,
                               unsigned long long block) {
    Philox4x32 ctr;
    ctr.x = (unsigned int)(block & 0xFFFFFFFFull);
    ctr.y = (unsigned int)(block >> 32);
    ctr.z = stream;
    ctr.w = domain;
    return philox4x32_10(ctr, key);
}

// The single 32-bit draw at (key, domain, stream, counter). Costs one full
// Philox evaluation; use PhiloxStream for consecutive counters.
PFR_HD unsigned int draw_at(PhiloxKey key, unsigned int domain, unsigned int stream,
                            unsigned long long counter) {
    return philox_block(key, domain, stream, counter >> 2).word((unsigned int)(counter & 3ull));
}

// Sentinel block index: counter >> 2 is at most 2^62 - 1, so it never matches.
constexpr unsigned long long PHILOX_NO_BLOCK = ~0ull;

// The draws of one stream, with the current Philox block cached: four
// consecutive counters cost one Philox evaluation. Create it with
// make_stream(); then either call next() (counters 0, 1, 2, ... from
// `counter`) or word(c) for any counter c (random access; the cache is
// refilled only when c leaves the cached block). word() does not move
// `counter`.
struct PhiloxStream {
    PhiloxKey key;
    unsigned int domain;
    unsigned int stream;
    unsigned long long counter;  // next counter next() returns
    unsigned long long block;    // block held in `words`, or PHILOX_NO_BLOCK
    Philox4x32 words;

    PFR_HD unsigned int word(unsigned long long c) {
        const unsigned long long b = c >> 2;
        if (b != block) {
            words = philox_block(key, domain, stream, b);
            block = b;
        }
        return words.word((unsigned int)(c & 3ull));
    }

    PFR_HD unsigned int next() { return word(counter++); }
};

PFR_HD PhiloxStream make_stream(PhiloxKey key, unsigned int domain, unsigned int stream,
                                unsigned long long first_counter = 0ull) {
    PhiloxStream s;
    s.key = key;
    s.domain = domain;
    s.stream = stream;
    s.counter = first_counter;
    s.block = PHILOX_NO_BLOCK;
    s.words.x = s.words.y = s.words.z = s.words.w = 0u;
    return s;
}

// Uniform float in [0, 1): (draw >> 8) * 2^-24. The 24-bit integer converts
// to float exactly and the scaling by a power of two is exact, so the result
// is the same on every backend. Smallest 0, largest 1 - 2^-24.
PFR_HD float uniform_float(unsigned int draw) {
    return (float)(draw >> 8) * FLOAT_SCALE;
}

// Uniform float in (0, 1]: ((draw >> 8) + 1) * 2^-24, for acceptance tests
// u <= ratio. (draw >> 8) + 1 <= 2^24 still converts exactly. Smallest 2^-24,
// largest 1.
PFR_HD float uniform_accept(unsigned int draw) {
    return (float)((draw >> 8) + 1u) * FLOAT_SCALE;
}

// Uniform float in [0, 1) from the draw's high 23 bits: (draw >> 9) * 2^-23.
// On the device it is 1.f - 1 with the bits as the mantissa f, exact
// (Sterbenz), which needs no integer-to-float conversion: a conversion issues
// at an eighth of the rate of a float multiply on the H100/H200 (16 against
// 128 results a clock an SM), and the Metropolis family draws one an
// iteration. Smallest 0, largest 1 - 2^-23.
PFR_HD float uniform_float23(unsigned int draw) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(0x3F800000u | (draw >> 9)) - 1.0f;
#else
    return (float)(draw >> 9) * (FLOAT_SCALE * 2.0f);
#endif
}

// Uniform integer in [0, n): the high word of draw * n, for 1 <= n < 2^32.
// (The contract also allows n = 2^32, which does not fit an unsigned int; its
// value is the draw itself.) Exact for n a power of two; otherwise each
// value's probability is off from 1/n by less than n / 2^32 relative.
PFR_HD unsigned int uniform_int(unsigned int draw, unsigned int n) {
#ifdef __CUDA_ARCH__
    return __umulhi(draw, n);
#else
    return (unsigned int)(((unsigned long long)draw * (unsigned long long)n) >> 32);
#endif
}

}  // namespace pfr
