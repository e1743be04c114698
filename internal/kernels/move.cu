// move.cu: references that move inside a session (a simulation's moving
// references): every step moves them along their great circles on the GPU
// (sphere.Propagate's twin, bit for bit) and writes the unit vectors the
// query kernels read, so no reference crosses PCIe between steps.
//
// Kernels (extern "C"):
//   move_refs  moves reference i by speed[i]*dt metres (move != 0; else
//              leaves it where it is) and writes its unit vector as float64
//              (x, y, z) triples and float32 (x, y, z, 0) quadruples, as
//              engine/refset.go interleave lays them out.

#include "twin.cuh"

#define MOVE_THREADS 256

extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    move_refs(int n, double* __restrict__ lat, double* __restrict__ lon, double* __restrict__ heading,
              const double* __restrict__ speed, double dt, int move, double* __restrict__ xyz,
              float4* __restrict__ xyzw) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double la = lat[i], lo = lon[i];
    if (move) {
        double h = heading[i];
        go_propagate(&la, &lo, &h, __dmul_rn(speed[i], dt));
        lat[i] = la;
        lon[i] = lo;
        heading[i] = h;
    }
    double x, y, z;
    go_unit(la, lo, &x, &y, &z);
    xyz[3 * i] = x;
    xyz[3 * i + 1] = y;
    xyz[3 * i + 2] = z;
    xyzw[i] = make_float4((float)x, (float)y, (float)z, 0.0f);
}

// go_twin_check: sphere.UnitVector and sphere.Propagate on n inputs, for
// the test that holds the twins to the same bits (engine: TestGPUTwins).
// in: (a, b, c, d) per i; out: UnitVector(a, b) and Propagate(a, b, c, d).
extern "C" __global__ void go_twin_check(int n, const double4* __restrict__ in, double* __restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double4 v = in[i];
    double* o = out + 6 * i;
    go_unit(v.x, v.y, &o[0], &o[1], &o[2]);
    double la = v.x, lo = v.y, h = v.z;
    go_propagate(&la, &lo, &h, v.w);
    o[3] = la;
    o[4] = lo;
    o[5] = h;
}
