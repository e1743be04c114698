// seed.cu: a faithful port of the reference notebook's two Numba kernels,
// kept as the benchmark baseline (`knn run --algo seed`). Per pair it
// evaluates the fp32 haversine with fast sin/cos/asin, as Numba's
// fastmath=True does; launch shapes are the notebook's (engine/seed.go):
//   seed_block_min:  grid (32, 108), block (32, 16)
//   seed_global_min: grid (1, 108*20), block (32, 16)
// Differences from the notebook, none of which change its arithmetic:
// observations and references are column arrays (lat, lon radians) rather
// than (n, 2) rows, and the input type T may be double (read as float).

#include <stdint.h>

#define SEED_WIDTH 32  // grid-x blocks of seed_block_min = partials per observation

__device__ __forceinline__ void warp_min_idx(float* val, uint32_t* idx) {
    const unsigned mask = 0xffffffffu;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        float v = __shfl_down_sync(mask, *val, off);
        uint32_t i = __shfl_down_sync(mask, *idx, off);
        if (*val > v) {
            *val = v;
            *idx = i;
        }
    }
}

template <typename T>
__device__ void seed_block_min(const T* ref_lat, const T* ref_lon, int nref,
                               const T* obs_lat, const T* obs_lon, int nobs,
                               uint32_t* block_idx, float* block_dist) {
    const int startx = blockIdx.x * blockDim.x + threadIdx.x;
    const int starty = blockIdx.y * blockDim.y + threadIdx.y;
    const int stridex = gridDim.x * blockDim.x;
    const int stridey = gridDim.y * blockDim.y;
    for (int i = starty; i < nobs; i += stridey) {
        float b_min_val = 1e11f;
        uint32_t b_min_idx = 0;
        const float o0 = (float)obs_lat[i];
        const float o1 = (float)obs_lon[i];
        for (int j = startx; j < nref; j += stridex) {
            const float r0 = (float)ref_lat[j];
            const float first_sin = __sinf((o0 - r0) * 0.5f);
            const float second_sin = __sinf((o1 - (float)ref_lon[j]) * 0.5f);
            const float local_val =
                2.0f * asinf(sqrtf(first_sin * first_sin +
                                   __cosf(r0) * __cosf(o0) * second_sin * second_sin));
            if (local_val < b_min_val) {
                b_min_val = local_val;
                b_min_idx = j;
            }
        }
        warp_min_idx(&b_min_val, &b_min_idx);
        if ((threadIdx.x & 31) == 0) {
            block_dist[(size_t)i * SEED_WIDTH + blockIdx.x] = b_min_val;
            block_idx[(size_t)i * SEED_WIDTH + blockIdx.x] = b_min_idx;
        }
    }
}

extern "C" __global__ void seed_global_min(const float* block_dist, const uint32_t* block_idx,
                                           int nobs, float* out_dist, uint32_t* out_idx) {
    const int starty = blockIdx.y * blockDim.y + threadIdx.y;
    const int stridey = gridDim.y * blockDim.y;
    for (int i = starty; i < nobs; i += stridey) {
        float g_min_dist = 1e11f;
        uint32_t g_min_idx = 0;
        for (int j = threadIdx.x; j < SEED_WIDTH; j += blockDim.x) {
            const float d = block_dist[(size_t)i * SEED_WIDTH + j];
            if (d < g_min_dist) {
                g_min_dist = d;
                g_min_idx = block_idx[(size_t)i * SEED_WIDTH + j];
            }
        }
        warp_min_idx(&g_min_dist, &g_min_idx);
        if ((threadIdx.x & 31) == 0) {
            out_dist[i] = g_min_dist;
            out_idx[i] = g_min_idx;
        }
    }
}

#define EXPORT(T, S)                                                                         \
    extern "C" __global__ void seed_block_min_##S(const T* ref_lat, const T* ref_lon,        \
                                                  int nref, const T* obs_lat,                \
                                                  const T* obs_lon, int nobs,                \
                                                  uint32_t* block_idx, float* block_dist) {  \
        seed_block_min<T>(ref_lat, ref_lon, nref, obs_lat, obs_lon, nobs, block_idx,         \
                          block_dist);                                                       \
    }

EXPORT(double, f64)
EXPORT(float, f32)
