// Moazeni (2013) chapter 3, the least-perimeter triangulation of a polygon on the GPU
// (dp_weighted_gpu.py): the kernels of dp_weighted.cuh with
// w(i, k, j) = (d[i][k] + d[k][j]) + d[i][j] in float32, f = d (ld x ld, the vertices'
// distances padded with zeros); additions only, in the CPU's order.
#include "dp_weighted.cuh"

struct Perimeter {
    using T = float;
    static constexpr bool HAS_Y = true;
    const float* d;
    long long ld;
    __device__ float x(long long i, long long k) const { return d[i * ld + k]; }
    __device__ float y(long long k, long long j) const { return d[k * ld + j]; }
    __device__ float z(long long i, long long j) const { return d[i * ld + j]; }
    __device__ static float w(float x, float y, float z) { return (x + y) + z; }
};
