// d3.cu -- D3 resampling (Das, Mazumdar & Banerjee 2014, §3.1 and §4.1,
// Table 1, Fig 9). The twin of src/pfresample/resampling/d3.py, whose
// docstring is the contract: the stride j_i of every slot (Systematic's
// ancestors, from cumulative.cu, or the paper's local CDF here), the first
// maxima l_i of w and p_i of pw over R_i = [min(i, j_i), max(i, j_i)], move
// (a) x'(i) from x(p_i) with particle stream i, counter 2d, and move (b)
// x'(j_i) from x(l_i) with counter 2d + 1 of the last slot that claims j_i.
//
// Three kernels, one thread a slot, no block-level cooperation: any block
// size from 1 to 1024 gives the same particles (the study times 160 ... 1024,
// as the paper's Table 6 and beyond), but for cdf="paper", whose thresholds
// depend on the block of the slot as the paper's do.
//   d3_local_strides: cdf="local", j_i by the paper's per-thread search.
//   d3_paper_strides: cdf="paper", the same search against the thresholds
//                     of the paper's Figs 8-9 (d3.paper_thresholds).
//   d3_moves:         l_i and p_i by a linear scan of R_i, move (a) into
//                     out[i], l_i stored for the next kernel.
//   d3_claims:        move (b) of each last claimer into out[j_i]. The kernel
//                     boundary orders it after every move (a), as Fig 9's
//                     barrier does; both kernels read the input only.
// States: element (i, d) of x is x[i * x_slot + d * x_dim] (and so for out):
// (N, D) row-major is (D, 1), the filter's rows layout (D, N) is (1, N).
// Arithmetic is written in the order of d3.move; with --fmad=false it rounds
// as NumPy does.

#include "philox.cuh"
#include "stats.cuh"

namespace pfr {

// The noise variants: their index in resampling/d3.py's NOISES, as cuda/d3.py
// passes it (tests/gpu/test_kernel_sources.py checks).
constexpr int NOISE_EQ5 = 0;
constexpr int NOISE_TABLE1 = 1;
constexpr int NOISE_FIG9 = 2;
constexpr int NOISE_BETWEEN = 3;
constexpr int NOISE_FIG9NEG = 4;

// Weights the local search loads ahead of their additions.
constexpr unsigned int D3_BATCH = 8u;

__device__ __forceinline__ float magnitude(float v) { return fabsf(v); }
__device__ __forceinline__ double magnitude(double v) { return fabs(v); }

// The moved value near `to` (x(p) or x(l)) given the particle it replaces
// (`from`: x(i) or x(j)): d3.move, operation for operation.
template <typename S>
__device__ __forceinline__ S d3_move(S to, S from, S u, int noise) {
    const S d = to - from;  // Table 1's DP = x[p] - x[i], DL = x[l] - x[j]
    switch (noise) {
        case NOISE_TABLE1:
            return to + u * d;
        case NOISE_FIG9: {
            const S half = d * S(0.5);
            return (to + half) + half * u;
        }
        case NOISE_BETWEEN:
            return to - u * d;
        case NOISE_FIG9NEG: {
            const S half = (from - to) * S(0.5);  // Fig 9's diffi read as x(i) - x(p)
            return (to + half) + half * u;
        }
        default:  // NOISE_EQ5
            return to + u * magnitude(d);
    }
}

// The call's key: (k0, k1), or the first pair of `keys` on the device when
// n_keys is not 0 (a filter's key of the step, which a captured graph reads
// afresh at every replay). D3 runs one replica.
__device__ __forceinline__ PhiloxKey d3_key(const unsigned int* keys, int n_keys, unsigned int k0,
                                            unsigned int k1) {
    return n_keys ? PhiloxKey{keys[0], keys[1]} : PhiloxKey{k0, k1};
}

// Whether the local CDF's threshold of slot `slot` is passed at the
// cumulative sum c: floor(N c / S + u) > i, in d3.local_cdf_strides's order.
// Non-decreasing in c (each rounding is), which the batched search uses.
__device__ __forceinline__ bool passes(double c, double count, double total, double u,
                                      double slot) {
    return floor(c * count / total + u) > slot;
}

}  // namespace pfr

// The local search of slot i (cdf="local" and "paper"): it adds the scaled
// weights a_k = (double)w[k] * scale from k = 0 in order (c_k = c_{k-1} +
// a_k) until passed(c_k); `found` is that k (-1 if none), `last` the last k of
// positive weight it saw. The weights are loaded D3_BATCH at a time; the test
// is made once a batch, at its last sum (passed must be non-decreasing in c,
// so no earlier sum of the batch passes where the last does not), and the
// batch is walked again, with the same additions, where it does.
template <typename W, typename Passed>
__device__ __forceinline__ void local_search(const W* __restrict__ w, unsigned int n,
                                             double scale, Passed passed, long long& found,
                                             long long& last) {
    using namespace pfr;
    double c = 0.0;
    found = -1;
    last = -1;
    for (unsigned int base = 0; base < n && found < 0; base += D3_BATCH) {
        double a[D3_BATCH];
#pragma unroll
        for (unsigned int b = 0; b < D3_BATCH; ++b) {
            a[b] = base + b < n ? (double)__ldg(w + base + b) * scale : 0.0;  // 0: c unchanged
        }
        double end = c;
#pragma unroll
        for (unsigned int b = 0; b < D3_BATCH; ++b) {
            end = end + a[b];
            if (a[b] > 0.0) last = (long long)(base + b);
        }
        if (!passed(end)) {
            c = end;
            continue;
        }
#pragma unroll
        for (unsigned int b = 0; b < D3_BATCH; ++b) {
            c = c + a[b];
            if (found < 0 && passed(c)) found = (long long)(base + b);
        }
    }
}

// cdf="local": slot i's search (local_search) stops at the first k with
// floor(N c_k / S + u) > i (S = stats[STAT_SUM], the statistics' sum of the
// same a; u Systematic's: counter 0 of stream 0 in DOMAIN_GLOBAL): j_i = k;
// if no k passes, the last particle of positive weight. iterations
// (optional, null: not written): the weights the slot added, j_i + 1 when
// its threshold is passed, N when not (the paper's Fig 11).
template <typename W>
__global__ void __launch_bounds__(1024)
d3_local_strides(const W* __restrict__ w, unsigned int n, const double* __restrict__ stats,
                 const unsigned int* keys, int n_keys, unsigned int k0, unsigned int k1,
                 int* __restrict__ strides, int* __restrict__ iterations) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double scale = stats[STAT_SCALE], total = stats[STAT_SUM];
    const PhiloxKey key = d3_key(keys, n_keys, k0, k1);
    const double u = (double)uniform_float(draw_at(key, DOMAIN_GLOBAL, 0u, 0ull));
    const double count = (double)n, slot = (double)i;
    long long found, last;
    local_search(w, n, scale, [&](double c) { return passes(c, count, total, u, slot); }, found,
                 last);
    strides[i] = (int)(found >= 0 ? found : last);
    if (iterations != nullptr) iterations[i] = (int)(found >= 0 ? found + 1 : (long long)n);
}

// cdf="paper", the paper's GPU search as printed (Figs 8-9): slot i's
// threshold u_i of d3.paper_thresholds, with blockDim.x threads a block --
// block b's thread 0 draws U_b (counter 0 of stream b in DOMAIN_GLOBAL), r =
// (1/N)/2 + ((1/N)/2) U_b, u1 = (r / N) / 2 + (f / N) / 2 with f = b
// blockDim.x its first slot, and every other slot u_i = (u1 / N) / 2 + (i /
// N) / 2 -- in float64, in that order; the search (local_search) stops at the
// first k with c_k / S >= u_i (Table 1's while (u > CSW[j])); if none does,
// the last particle of positive weight. iterations as d3_local_strides's.
template <typename W>
__global__ void __launch_bounds__(1024)
d3_paper_strides(const W* __restrict__ w, unsigned int n, const double* __restrict__ stats,
                 const unsigned int* keys, int n_keys, unsigned int k0, unsigned int k1,
                 int* __restrict__ strides, int* __restrict__ iterations) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double scale = stats[STAT_SCALE], total = stats[STAT_SUM];
    const PhiloxKey key = d3_key(keys, n_keys, k0, k1);
    const double count = (double)n, temp = 1.0 / count;
    const unsigned int first = blockIdx.x * blockDim.x;
    const double u_block = (double)uniform_float(draw_at(key, DOMAIN_GLOBAL, blockIdx.x, 0ull));
    const double r = temp / 2.0 + (temp / 2.0) * u_block;
    const double u1 = (r / count) / 2.0 + ((double)first / count) / 2.0;
    const double u = i == first ? u1 : (u1 / count) / 2.0 + ((double)i / count) / 2.0;
    long long found, last;
    local_search(w, n, scale, [&](double c) { return c / total >= u; }, found, last);
    strides[i] = (int)(found >= 0 ? found : last);
    if (iterations != nullptr) iterations[i] = (int)(found >= 0 ? found + 1 : (long long)n);
}

// Move (a) of every slot i: l_i and p_i, the first maxima of w and pw over
// R_i (strict >, from the range's first particle), l_i into maxima[i], and
// x'(i) = move(x(p_i), x(i), U) with U from counter 2d of particle stream i
// into out[i] for every component d.
template <typename S, typename W, typename P>
__global__ void __launch_bounds__(1024)
d3_moves(const S* __restrict__ x, long long x_slot, long long x_dim, const W* __restrict__ w,
         const P* __restrict__ pw, const int* __restrict__ strides, unsigned int n,
         unsigned int dims, const unsigned int* keys, int n_keys, unsigned int k0,
         unsigned int k1, int noise, S* __restrict__ out, long long out_slot, long long out_dim,
         int* __restrict__ maxima) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int j = (unsigned int)strides[i];
    const unsigned int lo = min(i, j), hi = max(i, j);
    unsigned int l = lo, p = lo;
    W w_best = w[lo];
    P pw_best = pw[lo];
    for (unsigned int k = lo + 1u; k <= hi; ++k) {
        const W wk = w[k];
        const P pk = pw[k];
        if (wk > w_best) {
            w_best = wk;
            l = k;
        }
        if (pk > pw_best) {
            pw_best = pk;
            p = k;
        }
    }
    maxima[i] = (int)l;
    PhiloxStream draws = make_stream(d3_key(keys, n_keys, k0, k1), DOMAIN_PARTICLE, i);
    for (unsigned int d = 0; d < dims; ++d) {
        const S u = (S)uniform_float(draws.word(2ull * d));
        const S to = x[p * x_slot + d * x_dim], from = x[i * x_slot + d * x_dim];
        out[i * out_slot + d * out_dim] = d3_move(to, from, u, noise);
    }
}

// Move (b): slot i is the last to claim j_i when i = N - 1 or j_{i+1} != j_i
// (j is non-decreasing, so each particle has at most one last claimer); it
// writes x'(j_i) = move(x(l_i), x(j_i), U) with U from counter 2d + 1 of
// particle stream i over move (a)'s value there.
template <typename S>
__global__ void __launch_bounds__(1024)
d3_claims(const S* __restrict__ x, long long x_slot, long long x_dim,
          const int* __restrict__ strides, const int* __restrict__ maxima, unsigned int n,
          unsigned int dims, const unsigned int* keys, int n_keys, unsigned int k0,
          unsigned int k1, int noise, S* __restrict__ out, long long out_slot,
          long long out_dim) {
    using namespace pfr;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int j = strides[i];
    if (i + 1u < n && strides[i + 1u] == j) return;  // a later slot claims j
    const long long l = maxima[i];
    PhiloxStream draws = make_stream(d3_key(keys, n_keys, k0, k1), DOMAIN_PARTICLE, i);
    for (unsigned int d = 0; d < dims; ++d) {
        const S u = (S)uniform_float(draws.word(2ull * d + 1ull));
        const S to = x[l * x_slot + d * x_dim], from = x[j * x_slot + d * x_dim];
        out[j * out_slot + d * out_dim] = d3_move(to, from, u, noise);
    }
}
