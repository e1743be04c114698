// grid.cu: exact nearest reference through a cell index (`--algo grid`).
//
// The references' unit vectors are bucketed into a G x G x G grid of cubes
// over [-1, 1]^3. Chord length between unit vectors is monotone in
// great-circle distance, so the nearest reference on the sphere is the
// nearest point in 3D and the search needs no pole, antimeridian or
// face-seam cases.
//
// Everything is built on the device, every query, with one counting sort
// used twice: a key pass counts each item's cell and keeps the count it
// got back (its rank within the cell), a three-kernel scan turns the counts
// into cell starts, and the scatter writes each item to start + rank with no
// further atomics:
//   index        references -> cell_start[G^3 + 1] and float4 (x, y, z,
//                index bits) sorted by cell
//   observations unit vectors (ObsRec) sorted by (band, cell): a band is
//                2^22 or more consecutive observations, whose scattered
//                answers the L2 cache then holds; within it the threads of
//                a warp search the same cells with coalesced, cached loads
// The query (one thread an observation, in sorted order) scans shells of
// cells around its own (Chebyshev radius r = 0, 1, ...), visiting in each
// column only the z-cells that the unit sphere crosses (the runs table, two
// runs a column), skips any cell whose box is farther than the best found
// plus the fp32 error margin, and stops once everything outside the scanned
// cube is provably farther. It ranks in fp32 and tracks the runner-up; an
// observation whose winner is not clear of the runner-up by the proven fp32
// error bound is re-ranked in fp64 over the same cells by the same thread
// (rare: about one in 10^4), so the answer equals the fp64 brute-force
// answer (ties to the lowest index). Pruning thresholds are computed in fp32 with margins that
// exceed their own rounding: a larger threshold only visits more cells.

#include <stdint.h>

#include "grid.cuh"
#include "sphere.cuh"

#ifndef GQ_THREADS
#define GQ_THREADS 64  // grid_query's block; the engine reads it from the kernel's attributes
#endif
#ifndef GQ_CAND
#define GQ_CAND 256  // references a warp stages in shared memory in the query's first phase
#endif
#ifndef GQ_PASSES
#define GQ_PASSES 2  // cooperative passes a warp makes before the shell walk
#endif
#define PREP_THREADS 256  // the observation sort's kernels: grid_obs_prep, grid_obs_keys(_cols), grid_obs_scatter(_cols)
#ifndef GQ_MIN_BLOCKS
#define GQ_MIN_BLOCKS 16  // resident blocks an SM asked of the register allocator: 64 registers at 64 threads
#endif
#define SCAN_THREADS 1024
#define SCAN_ITEMS 8
#define SCAN_CHUNK (SCAN_THREADS * SCAN_ITEMS)

// ---------------------------------------------------------------- sorting

// An observation's sort key: its band (2^band_shift consecutive
// observations) and its cell. Sorted by band first, the query's scattered
// answer writes stay within one band's answers at a time, which the L2
// cache holds (32 MB at 2^22), instead of reading and writing back a DRAM
// sector for each 4-byte answer.
__device__ __forceinline__ uint32_t obs_key(float x, float y, float z, int g, float h, uint32_t k, int band_shift) {
    return (k >> band_shift) * (uint32_t)(g * g * g) + cell_key(x, y, z, g, h);
}

// grid_obs_prep: the records of observations [0, n) from their radian
// columns (a session's resident set).
template <typename T>
__device__ void obs_prep(const T* __restrict__ lat, const T* __restrict__ lon, int n, ObsRec* __restrict__ recs) {
    __shared__ ObsRec srec[PREP_THREADS];
    const long long base = (long long)blockIdx.x * PREP_THREADS;
    const int k = (int)base + threadIdx.x;
    if (k < n) srec[threadIdx.x] = make_rec((double)lat[k], (double)lon[k], (uint32_t)k);
    __syncthreads();
    shared_to_recs(srec, recs, base, (int)min((long long)PREP_THREADS, n - base));
}

// obs_keys_cols: the sort keys and ranks of observations [0, n) straight
// from their radian columns, counted into hist. The key only orders the
// query (which takes each observation's cell from its fp64 record), so fp32
// trigonometry serves; obs_scatter_cols makes the fp64 records as it moves
// them, so no record is written and read back in between.
template <typename T>
__device__ void obs_keys_cols(const T* __restrict__ lat, const T* __restrict__ lon, int n, int g, float h,
                              int band_shift, uint2* __restrict__ keys, uint32_t* __restrict__ hist) {
    const int k = blockIdx.x * PREP_THREADS + threadIdx.x;
    if (k >= n) return;
    float sl, cl, sn, cn;
    __sincosf((float)lat[k], &sl, &cl);
    __sincosf((float)lon[k], &sn, &cn);
    const uint32_t key = obs_key(cl * cn, cl * sn, sl, g, h, (uint32_t)k, band_shift);
    keys[k] = make_uint2(key, atomicAdd(&hist[key], 1u));
}

// obs_scatter_cols: observation k's record to start[key] + rank.
template <typename T>
__device__ void obs_scatter_cols(const T* __restrict__ lat, const T* __restrict__ lon, const uint2* __restrict__ keys,
                                 int n, const uint32_t* __restrict__ start, ObsRec* __restrict__ out) {
    const int k = blockIdx.x * PREP_THREADS + threadIdx.x;
    if (k >= n) return;
    const ObsRec r = make_rec((double)lat[k], (double)lon[k], (uint32_t)k);
    const uint2 kr = keys[k];
    copy_rec(out + start[kr.x] + kr.y, &r);
}

// stage_block copies the block's PREP_THREADS records of in[0, n) to srec
// (coalesced) and returns this thread's record index.
__device__ __forceinline__ int stage_block(const ObsRec* __restrict__ in, int n, ObsRec* srec) {
    const long long base = (long long)blockIdx.x * PREP_THREADS;
    recs_to_shared(in, base, (int)min((long long)PREP_THREADS, n - base), srec);
    __syncthreads();
    return (int)base + threadIdx.x;
}

// grid_obs_keys: the keys and ranks of resident observation records, each
// banded by its index (which must lie within the bands the histogram was
// sized for: the session part's).
extern "C" __global__ void __launch_bounds__(PREP_THREADS)
    grid_obs_keys(const ObsRec* __restrict__ recs, int n, int g, float h, int band_shift,
                  uint2* __restrict__ keys, uint32_t* __restrict__ hist) {
    __shared__ ObsRec srec[PREP_THREADS];
    const int k = stage_block(recs, n, srec);
    if (k >= n) return;
    const ObsRec r = srec[threadIdx.x];
    const uint32_t key = obs_key((float)r.x, (float)r.y, (float)r.z, g, h, r.i, band_shift);
    keys[k] = make_uint2(key, atomicAdd(&hist[key], 1u));
}

// grid_ref_keys: the cell keys and ranks of the references' fp32 unit
// vectors.
extern "C" __global__ void grid_ref_keys(const float4* __restrict__ xyzw, int n, int g, float h,
                                         uint2* __restrict__ keys, uint32_t* __restrict__ hist) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const float4 r = xyzw[k];
    const uint32_t key = cell_key(r.x, r.y, r.z, g, h);
    keys[k] = make_uint2(key, atomicAdd(&hist[key], 1u));
}

// Exclusive scan of one value a thread across a block of SCAN_THREADS;
// *total receives the block's sum.
__device__ uint32_t block_exclusive_scan(uint32_t v, uint32_t* total) {
    __shared__ uint32_t warp_sums[SCAN_THREADS / 32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    uint32_t x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[w] = x;
    __syncthreads();
    if (w == 0) {
        uint32_t s = warp_sums[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    const uint32_t before = w > 0 ? warp_sums[w - 1] : 0;
    *total = warp_sums[SCAN_THREADS / 32 - 1];
    __syncthreads();
    return before + x - v;
}

// In-place exclusive scan of data[base, base + SCAN_CHUNK) clipped to n;
// returns the chunk's total.
__device__ uint32_t scan_chunk(uint32_t* data, long long base, long long n) {
    uint32_t v[SCAN_ITEMS];
    uint32_t sum = 0;
    const long long b = base + (long long)threadIdx.x * SCAN_ITEMS;
#pragma unroll
    for (int q = 0; q < SCAN_ITEMS; q++) {
        v[q] = b + q < n ? data[b + q] : 0u;
        sum += v[q];
    }
    uint32_t total;
    uint32_t run = block_exclusive_scan(sum, &total);
#pragma unroll
    for (int q = 0; q < SCAN_ITEMS; q++) {
        if (b + q < n) data[b + q] = run;
        run += v[q];
    }
    return total;
}

// grid_scan_blocks: block b scans its chunk of data in place and writes the
// chunk's total to sums[b]; grid_scan_sums scans sums (one block, at most
// SCAN_CHUNK chunks); grid_scan_add adds them back.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
    grid_scan_blocks(uint32_t* __restrict__ data, long long n, uint32_t* __restrict__ sums) {
    const uint32_t total = scan_chunk(data, (long long)blockIdx.x * SCAN_CHUNK, n);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) grid_scan_sums(uint32_t* sums, int nb) {
    scan_chunk(sums, 0, nb);
}

extern "C" __global__ void grid_scan_add(uint32_t* __restrict__ data, long long n,
                                         const uint32_t* __restrict__ sums) {
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (long long)gridDim.x * blockDim.x) {
        data[k] += sums[k / SCAN_CHUNK];
    }
}

// grid_obs_scatter: record k to start[key] + rank; when pos is not null,
// pos[k] records where it went (a session patches replaced observations in
// place through it).
extern "C" __global__ void __launch_bounds__(PREP_THREADS)
    grid_obs_scatter(const ObsRec* __restrict__ in, const uint2* __restrict__ keys, int n,
                     const uint32_t* __restrict__ start, ObsRec* __restrict__ out,
                     uint32_t* __restrict__ pos) {
    __shared__ ObsRec srec[PREP_THREADS];
    const int k = stage_block(in, n, srec);
    if (k >= n) return;
    const uint2 kr = keys[k];
    const uint32_t to = start[kr.x] + kr.y;
    copy_rec(out + to, &srec[threadIdx.x]);
    if (pos) pos[k] = to;
}

// grid_runs_trim: each column's sphere runs shrunk to the cells that hold
// references this query (empty: lo > hi), so the query skips empty columns
// and column ends (most of the grid, for clustered references) at the cost
// of one load a column.
extern "C" __global__ void grid_runs_trim(const short4* __restrict__ runs,
                                          const uint32_t* __restrict__ cell_start, int g,
                                          short4* __restrict__ out) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= g * g) return;
    short4 r = runs[col];
    const uint32_t* cs = cell_start + (size_t)col * g;
    short lo = r.x, hi = r.y;
    while (lo <= hi && cs[lo] == cs[lo + 1]) lo++;
    while (hi >= lo && cs[hi] == cs[hi + 1]) hi--;
    r.x = lo;
    r.y = hi;
    lo = r.z;
    hi = r.w;
    while (lo <= hi && cs[lo] == cs[lo + 1]) lo++;
    while (hi >= lo && cs[hi] == cs[hi + 1]) hi--;
    r.z = lo;
    r.w = hi;
    out[col] = r;
}

// grid_ref_scatter: the index's float4s, the reference's index in w's bits.
// The order within a cell is arbitrary; the query breaks ties by index.
extern "C" __global__ void grid_ref_scatter(const float4* __restrict__ xyzw, const uint2* __restrict__ keys,
                                            int n, const uint32_t* __restrict__ start,
                                            float4* __restrict__ out) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const float4 r = xyzw[k];
    const uint2 kr = keys[k];
    out[start[kr.x] + kr.y] = make_float4(r.x, r.y, r.z, __uint_as_float((uint32_t)k));
}

// ------------------------------------------------------------------ query

// The query runs in two phases. First the warp works together: its 32
// observations are consecutive in cell order, so they usually lie in one or
// two neighbouring cells. A pass takes the unserved lanes whose cells lie
// within one cell (two in z) of the first unserved lane's, stages every
// reference of the cells within one cell of any of them (at most GQ_CAND)
// in shared memory, and each of those lanes ranks all of them, with no
// divergence. That covers each lane's shells r = 0 and 1, and for most
// observations the stop test after r = 1 then holds. GQ_PASSES passes serve
// a warp that straddles two columns or the two sides of the sphere in one
// column; lanes no pass served, lanes the stop test does not release, and
// warps whose cells are crowded go on with the shell-by-shell search.
extern "C" __global__ void __launch_bounds__(GQ_THREADS, GQ_MIN_BLOCKS)
    grid_query(const ObsRec* __restrict__ obs, int nobs, const uint32_t* __restrict__ cell_start,
               const float4* __restrict__ refs, const short4* __restrict__ runs, int g, float h,
               const double* __restrict__ ref64, uint32_t* __restrict__ out_idx,
               float* __restrict__ out_dist, uint32_t* __restrict__ nrefined) {
    __shared__ ObsRec srec[GQ_THREADS];
    __shared__ float4 cand[GQ_THREADS / 32][GQ_CAND];
    const long long base = (long long)blockIdx.x * GQ_THREADS;
    const int valid = (int)min((long long)GQ_THREADS, nobs - base);
    recs_to_shared(obs, base, valid, srec);
    __syncthreads();
    const bool active = threadIdx.x < valid;
    // Lanes past the end work on the block's last observation and write
    // nothing: the whole warp takes part in the cooperative phase.
    const ObsRec o = srec[active ? threadIdx.x : valid - 1];
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    const int cx = cell_of(px, g, h), cy = cell_of(py, g, h), cz = cell_of(pz, g, h);
    const int lane = threadIdx.x & 31;
    float4* wc = cand[threadIdx.x >> 5];
    const unsigned full = 0xffffffffu;
    // A session's record patched in out of cell order is answered by the
    // patched records' own query (sorted among themselves): here it sits out.
    const bool patched = o.pad & OBS_PATCHED;

    float d1 = INFINITY, d2 = INFINITY;
    uint32_t i1 = 0xffffffffu;
    float thr2 = INFINITY;  // cells whose box is farther (squared) cannot matter
    int r = 0;              // the first shell phase 2 searches
    bool done = patched;

    // Phase 1: pass by pass, the lanes near the first unserved one.
    unsigned todo = __ballot_sync(full, !patched);
    for (int pass = 0; pass < GQ_PASSES && todo; pass++) {
        const int lead = __ffs(todo) - 1;
        const int lx = __shfl_sync(full, cx, lead), ly = __shfl_sync(full, cy, lead);
        const int lz = __shfl_sync(full, cz, lead);
        const bool member = ((todo >> lane) & 1u) && abs(cx - lx) <= 1 && abs(cy - ly) <= 1 && abs(cz - lz) <= 2;
        todo &= ~__ballot_sync(full, member);
        // The members' cells' neighbourhood, box [x0, x1] x [y0, y1] x [z0, z1]:
        // at most 5 x 5 columns, one a lane.
        const int x0 = max((int)__reduce_min_sync(full, member ? (unsigned)cx : 0xffffu) - 1, 0);
        const int x1 = min((int)__reduce_max_sync(full, member ? (unsigned)cx : 0u) + 1, g - 1);
        const int y0 = max((int)__reduce_min_sync(full, member ? (unsigned)cy : 0xffffu) - 1, 0);
        const int y1 = min((int)__reduce_max_sync(full, member ? (unsigned)cy : 0u) + 1, g - 1);
        const int z0 = max((int)__reduce_min_sync(full, member ? (unsigned)cz : 0xffffu) - 1, 0);
        const int z1 = min((int)__reduce_max_sync(full, member ? (unsigned)cz : 0u) + 1, g - 1);
        const int ny = y1 - y0 + 1, ncol = (x1 - x0 + 1) * ny;
        // Lane l < ncol finds its column's (at most two) reference ranges:
        // the cells of a column's run are consecutive, so are their references.
        uint32_t s0 = 0, e0 = 0, s1 = 0, e1 = 0;
        if (lane < ncol) {
            const int ci = x0 + lane / ny, cj = y0 + lane % ny;
            const short4 run = runs[ci * g + cj];
            const uint32_t* cs = cell_start + (size_t)(ci * g + cj) * g;
            int lo = max((int)run.x, z0), hi = min((int)run.y, z1);
            if (lo <= hi) s0 = cs[lo], e0 = cs[hi + 1];
            lo = max((int)run.z, z0), hi = min((int)run.w, z1);
            if (lo <= hi) s1 = cs[lo], e1 = cs[hi + 1];
        }
        const uint32_t n = (e0 - s0) + (e1 - s1);
        uint32_t off = n;  // inclusive scan over lanes
#pragma unroll
        for (int k = 1; k < 32; k <<= 1) {
            const uint32_t v = __shfl_up_sync(full, off, k);
            if (lane >= k) off += v;
        }
        const int ncand = (int)__shfl_sync(full, off, 31);
        off -= n;
        if (ncand > GQ_CAND) break;  // crowded: phase 2 for every lane not yet served
        // Each lane copies its own column's few references to its slots.
        for (uint32_t q = 0; q < n; q++) wc[off + q] = refs[q < e0 - s0 ? s0 + q : s1 + (q - (e0 - s0))];
        __syncwarp();
        if (member) {
            // Branch-free: a reference level with the winner in fp32 becomes
            // the runner-up, and the near-tie re-rank below settles the tie
            // by index in fp64.
            for (int q = 0; q < ncand; q++) {
                const float4 rf = wc[q];
                const float d = chord2f(px, py, pz, rf);
                const bool lead = d < d1;
                d2 = fminf(d2, fmaxf(d, d1));
                d1 = fminf(d1, d);
                i1 = lead ? __float_as_uint(rf.w) : i1;
            }
            const float tc = prune_chord(d1);
            thr2 = d1 < INFINITY ? tc * tc : INFINITY;
            bool all;
            done = shell_done(1, px, py, pz, cx, cy, cz, g, h, d1, &all);
            r = done ? 1 : 2;
        }
        __syncwarp();  // the next pass overwrites the staged references
    }
    // Phase 2: shell by shell, from where phase 1 left off. The warp's box
    // may reach past this thread's shell 1, so a reference can come round
    // again: the winner seen twice must not count as its own runner-up.
    for (; !done && r < g; r++) {
        SHELL_CELLS(r, thr2, {
            for (uint32_t p = cs; p < ce; p++) {
                const float4 rf = refs[p];
                const float d = chord2f(px, py, pz, rf);
                const uint32_t id = __float_as_uint(rf.w);
                if (id == i1) continue;
                if (d < d1) {  // level with the winner: the runner-up (a near tie)
                    d2 = d1;
                    d1 = d;
                    i1 = id;
                    const float tc = prune_chord(d1);
                    thr2 = tc * tc;
                } else {
                    d2 = fminf(d2, d);
                }
            }
        });
        bool all;
        if (shell_done(r, px, py, pz, cx, cy, cz, g, h, d1, &all)) break;
    }
    if (!active || patched) return;
    r = min(r, g - 1);
    // No runner-up seen (d2 infinite) means none within the margin exists.
    const double c1 = sqrt((double)d1), c2 = sqrt((double)d2);
    double best;
    if (d2 < INFINITY && c2 - c1 <= chord_err(c1) + chord_err(c2)) {
        // A near tie in fp32: re-rank in fp64 every reference of the cells
        // within the final threshold, in the shells already searched. The
        // fp64 winner is among them: its exact chord is at most the fp32
        // winner's plus chord_err, below the threshold, and the stop test
        // put everything outside the searched cube farther than that.
        best = INFINITY;
        i1 = 0xffffffffu;
        for (int q = 0; q <= r; q++) {
            SHELL_CELLS(q, thr2, {
                for (uint32_t p = cs; p < ce; p++) {
                    const uint32_t id = __float_as_uint(refs[p].w);
                    const double* rp = ref64 + 3 * (size_t)id;
                    const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
                    if (d < best || (d == best && id < i1)) {
                        best = d;
                        i1 = id;
                    }
                }
            });
        }
        atomicAdd(nrefined, 1u);
    } else {
        const double* rp = ref64 + 3 * (size_t)i1;
        best = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
    }
    out_idx[o.i] = i1;
    out_dist[o.i] = (float)chord2_to_angle(best);
}

#define EXPORT(T, S)                                                                                         \
    extern "C" __global__ void __launch_bounds__(PREP_THREADS)                                               \
        grid_obs_prep_##S(const T* lat, const T* lon, int n, ObsRec* recs) {                                 \
        obs_prep<T>(lat, lon, n, recs);                                                                      \
    }

EXPORT(double, f64)
EXPORT(float, f32)

#define EXPORT_COLS(T, S)                                                                                   \
    extern "C" __global__ void __launch_bounds__(PREP_THREADS) grid_obs_keys_cols_##S(                     \
        const T* lat, const T* lon, int n, int g, float h, int band_shift, uint2* keys, uint32_t* hist) {   \
        obs_keys_cols<T>(lat, lon, n, g, h, band_shift, keys, hist);                                        \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(PREP_THREADS) grid_obs_scatter_cols_##S(                  \
        const T* lat, const T* lon, const uint2* keys, int n, const uint32_t* start, ObsRec* out) {          \
        obs_scatter_cols<T>(lat, lon, keys, n, start, out);                                                 \
    }

EXPORT_COLS(double, f64)
EXPORT_COLS(float, f32)
