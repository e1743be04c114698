// generate.cu: synthetic observations made on the GPU, where they are used,
// instead of generated on the host and copied in.
//
// Point i of a set drawn with seed is a pure function of (i, seed): two
// uniforms from Philox4x32-10 (the Random123 reference), then the point.
// sphere/indexed.go (SphereAt, SeedUniformAt) is the Go twin: every
// floating-point operation here rounds on its own (the _rn intrinsics, which
// nvcc never fuses into FMAs), as there, so the two agree bit for bit and the
// CPU engine answers the same points.
//
// Kernels (extern "C"):
//   gen_sphere  z = sin(lat) = 2u-1, lon = (2v-1)pi: uniform on the sphere
//   gen_seed    lat = (u-1/2)pi, lon = (2v-1)pi: uniform in degrees (the
//               reference notebook's generator)
// Both write points [first, first+n) of the set to lat[0..n), lon[0..n).

#include "twin.cuh"

#define GEN_THREADS 256

extern "C" __global__ void __launch_bounds__(GEN_THREADS)
    gen_sphere(uint64_t first, int n, uint64_t seed, double* __restrict__ lat, double* __restrict__ lon) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    sphere_at(first + j, seed, &lat[j], &lon[j]);
}

extern "C" __global__ void __launch_bounds__(GEN_THREADS)
    gen_seed(uint64_t first, int n, uint64_t seed, double* __restrict__ lat, double* __restrict__ lon) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    seed_at(first + j, seed, &lat[j], &lon[j]);
}
