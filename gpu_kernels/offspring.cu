// offspring.cu -- offspring statistics of many resamplings of one weight
// sequence: the summaries of the experiments (thesis eqs. 2.29-2.32), made
// without float64 temporaries of K x N entries.
// The twin of pfresample.experiments.summarise_offspring's host path.
//
// A chunk of R resamplings is an (R, N) int32 ancestor array. Its offspring
// counts c[r, i] (how often row r drew particle i) are built with integer
// atomics -- exact, so the same in any order -- and then read twice:
//   * per particle, the running sums of c and c^2 over every row drawn so far
//     (int64, exact);
//   * per row, SE_r = sum_i (c[r, i] - t_i)^2 (eq. 2.29) in float64, in a fixed
//     order: one partial per (row, block) here, a block count that depends on
//     N alone (gpu.py's offspring_parts), the partials summed by the caller.

constexpr int OFFSPRING_THREADS = 256;  // gpu.py's OFFSPRING_THREADS

extern "C" __global__ void offspring_counts(const int* __restrict__ ancestors, long long total,
                                            unsigned int n, int* __restrict__ counts) {
    const long long id = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= total) return;
    const long long row = id / n;
    atomicAdd(&counts[row * n + ancestors[id]], 1);
}

extern "C" __global__ void offspring_moments(const int* __restrict__ counts, int rows,
                                             unsigned int n, long long* __restrict__ sum,
                                             long long* __restrict__ sum_sq) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long a = 0, b = 0;
    for (int r = 0; r < rows; ++r) {
        const long long c = counts[(long long)r * n + i];
        a += c;
        b += c * c;
    }
    sum[i] += a;
    sum_sq[i] += b;
}

// Grid (parts, rows): block x of row y sums the entries x, x + parts, ... of
// its row's stride-OFFSPRING_THREADS tiles, then a shared-memory tree.
extern "C" __global__ void squared_error_partial(const int* __restrict__ counts,
                                                 const double* __restrict__ target, unsigned int n,
                                                 double* __restrict__ partial) {
    __shared__ double shared[OFFSPRING_THREADS];
    const int* row = counts + (long long)blockIdx.y * n;
    const long long stride = (long long)gridDim.x * OFFSPRING_THREADS;
    double s = 0.0;
    for (long long i = (long long)blockIdx.x * OFFSPRING_THREADS + threadIdx.x; i < n; i += stride) {
        const double d = (double)row[i] - target[i];
        s += d * d;
    }
    shared[threadIdx.x] = s;
    __syncthreads();
    for (int half = OFFSPRING_THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[(long long)blockIdx.y * gridDim.x + blockIdx.x] = shared[0];
}
