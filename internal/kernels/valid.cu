// valid.cu: the check of observations once a GPU has copied them in, from
// the caller's page-locked columns or from the engine's staging, where no
// host pass reads them a second time (points in managed memory are checked
// on the host; generated ones need none). The rule is
// index.Points.CheckValues's: latitude within lat_max and longitude within
// lon_max of 0, compared in the columns' precision, NaN failing. Each point
// that fails is replaced by (0, 0), so that the query's kernels after this
// one read only valid points, and the lowest such index is kept in
// *first_bad (all ones before the launch): the host then names the point,
// from its own columns, and refuses the job's answers.
//
// Kernels (extern "C"):
//   valid_f64, valid_f32  over points [0, n) of lat and lon

#define VALID_THREADS 256

template <typename T>
__device__ __forceinline__ void valid_point(int n, T* __restrict__ lat, T* __restrict__ lon, T lat_max, T lon_max,
                                            unsigned long long* __restrict__ first_bad) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T la = lat[i], lo = lon[i];
    if (la >= -lat_max && la <= lat_max && lo >= -lon_max && lo <= lon_max) return;
    lat[i] = 0;
    lon[i] = 0;
    atomicMin(first_bad, (unsigned long long)i);
}

extern "C" __global__ void __launch_bounds__(VALID_THREADS)
    valid_f64(int n, double* __restrict__ lat, double* __restrict__ lon, double lat_max, double lon_max,
              unsigned long long* __restrict__ first_bad) {
    valid_point(n, lat, lon, lat_max, lon_max, first_bad);
}

extern "C" __global__ void __launch_bounds__(VALID_THREADS)
    valid_f32(int n, float* __restrict__ lat, float* __restrict__ lon, float lat_max, float lon_max,
              unsigned long long* __restrict__ first_bad) {
    valid_point(n, lat, lon, lat_max, lon_max, first_bad);
}
