// resident.cu: kernels for observations kept on the GPU across queries (an
// engine.Session, e.g. a simulation's steps): replacing some observations in
// place, and counting the answers that changed since the previous query.

#include <stdint.h>

#include "sphere.cuh"

// No previous answer: the observation is new since the last query.
#define NO_ANSWER 0xffffffffu

// replace_T: observation idx[j] becomes (new_lat[j], new_lon[j]) for j < k:
// its radian columns, its unit-vector record (when recs is not null), its
// copy in the cell-sorted records (when sorted is not null; at pos[idx],
// out of cell order until the next sort, which only costs speed) and its
// previous answer (reset, so it does not count as changed).
template <typename T>
__device__ void replace(const uint32_t* __restrict__ idx, const T* __restrict__ new_lat,
                        const T* __restrict__ new_lon, int k, T* __restrict__ lat, T* __restrict__ lon,
                        ObsRec* __restrict__ recs, ObsRec* __restrict__ sorted,
                        const uint32_t* __restrict__ pos, uint32_t* __restrict__ prev) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= k) return;
    const uint32_t i = idx[j];
    const T la = new_lat[j], lo = new_lon[j];
    lat[i] = la;
    lon[i] = lo;
    prev[i] = NO_ANSWER;
    if (recs) {
        double sl, cl, sn, cn;
        sincos((double)la, &sl, &cl);
        sincos((double)lo, &sn, &cn);
        ObsRec r;
        r.x = cl * cn;
        r.y = cl * sn;
        r.z = sl;
        r.i = i;
        r.pad = 0;
        recs[i] = r;
        if (sorted) sorted[pos[i]] = r;
    }
}

// count_changed: adds to *count the observations whose answer differs from
// the previous query's (leaving out new ones), then makes cur the previous.
extern "C" __global__ void count_changed(const uint32_t* __restrict__ cur, uint32_t* __restrict__ prev,
                                         int n, unsigned long long* __restrict__ count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool changed = false;
    if (i < n) {
        const uint32_t p = prev[i], c = cur[i];
        changed = p != NO_ANSWER && p != c;
        prev[i] = c;
    }
    const uint32_t votes = __ballot_sync(0xffffffffu, changed);
    if ((threadIdx.x & 31) == 0 && votes) atomicAdd(count, (unsigned long long)__popc(votes));
}

// map_index: idx[i] = orig[idx[i]], from distinct-reference indices to the
// caller's when duplicate references were merged.
extern "C" __global__ void map_index(uint32_t* __restrict__ idx, int n, const uint32_t* __restrict__ orig) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) idx[i] = orig[idx[i]];
}

#define EXPORT(T, S)                                                                            \
    extern "C" __global__ void replace_##S(const uint32_t* idx, const T* new_lat,                \
                                           const T* new_lon, int k, T* lat, T* lon,              \
                                           ObsRec* recs, ObsRec* sorted, const uint32_t* pos,    \
                                           uint32_t* prev) {                                     \
        replace<T>(idx, new_lat, new_lon, k, lat, lon, recs, sorted, pos, prev);                 \
    }

EXPORT(double, f64)
EXPORT(float, f32)
