// cells.cu: exact nearest reference through candidate lists of cube-face
// cells (`--algo grid`, the nearest query, wherever the lists can be built).
//
// The sphere is cut as the six faces of the cube [-1, 1]^3 seen from the
// centre, each face into n x n cells of equal steps in its gnomonic
// coordinates (u, v) = (p[b], p[c]) / |p[a]| (a the face's axis, b and c
// the next two). A cell's edges are great-circle arcs, so the cell is
// exactly the cone of its four corner rays: a linear function of p that is
// positive at the four corners is positive on the whole cell.
//
// cells_build gives every cell the list of references that can be nearest
// to some point of it. A reference r is left out when another, q, beats it
// at all four corners by a margin (corner . (q - r) > CL_DOM_EPS): then
// p . q > p . r, i.e. q is nearer, for every p of the cell, by a squared
// chord of at least 2 * CL_DOM_EPS, far above fp64 rounding, so r is never
// the fp64 answer there. The cells are widened by CL_DILATE in (u, v)
// before their corners are taken, so an observation whose fp32 coordinates
// put it in a neighbouring cell still lies inside the cell it is looked up
// in. A cell's candidates lie within chord d0 + 2 alpha of its centre c0
// (d0: c0's nearest reference, alpha: the farthest corner from c0), which
// the build scans in the grid index of the references (grid.cu), keeping
// those that c0's nearest does not beat at every corner.
//
// A cell whose list would be too long is split into CL_SPLIT_N x CL_SPLIT_N
// cells of the next level, each with its own list (a smaller cell keeps
// fewer: near crowded references, and far from a coast of them, where the
// band of references the filters keep narrows with the cell); its count
// then holds CL_SPLIT and the first child's place. The host builds level by
// level, sending the split cells of one level as the next's parents, and
// refuses the lists where a cell of the last level still cannot be made.
//
// cells_query then needs no sort: each thread takes its observation from the
// radian columns, finds its cell, ranks the cell's list in fp32 (tracking
// the runner-up) and re-ranks the list in fp64 when the two are too close
// to call, as grid_query does; the answers are written in input order.
//
// A session whose last lists needed one level queues the first level and
// the query at once, with no wait for the level's outcome: the query reads
// the build's status first and, where a cell split or failed, writes
// nothing, and the host, seeing the same status after the step, builds the
// levels and queries again.

#include <stdint.h>

#include "grid.cuh"
#include "sphere.cuh"

#define CL_CAP 32          // entries a cell's list holds; a longer one splits the cell
#define CL_SURVIVE 128     // references that pass the build's first filter
#define CB_WARPS 4         // cells_build: warps (cells) a block
#define CB_MIN_BLOCKS 8    // cells_build: blocks a SM asked of ptxas (64 registers: more warps hide the ball scans' loads)
#define CB_ITERS 8         // cubes a cell may search for its ball before it fails
#define CB_MAX_COLS 16384  // grid columns one cube may have (most of a far cell's miss its ball: cheap)
#define CQ_THREADS 256     // cells_query's block
#define CL_DILATE 1e-5     // cell widening in (u, v): far above the fp32 error of an observation's (u, v)
#define CL_DOM_EPS 1e-12   // dot-product margin of the build's filters
#define CL_SLACK 1e-5f     // covers the fp32 chords of the ball
#define CL_SPLIT 0x80000000u  // a count that is a split cell's first child
#define CL_SPLIT_N 4          // a split cell's children an edge
#define CL_PASS 512           // survivors a split cell passes down to its children
#define CL_PASS_SLOTS 16384   // split cells a level that can pass them down (the rest: children scan their balls)

// The build's outcome, summed over cells (Go: kernels.CellsStatus*).
#define CS_FAILED 0   // cells whose list could not be made (too long at the last level, or a ball too wide)
#define CS_ENTRIES 1  // entries in all lists
#define CS_LONGEST 2  // the longest list
#define CS_SPLIT 3    // cells split (appended to the next level's parents)
#define CS_WORDS 4

// The unit vector of face f's point (u, v) (not normalized: p[a] = +-1).
__device__ __forceinline__ void face_point(int f, double u, double v, double* p) {
    const int a = f >> 1;
    p[a] = (f & 1) ? -1.0 : 1.0;
    p[(a + 1) % 3] = u;
    p[(a + 2) % 3] = v;
}

__device__ __forceinline__ void normalize3(double* p) {
    const double s = 1.0 / sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    p[0] *= s, p[1] *= s, p[2] *= s;
}

__device__ __forceinline__ int clamp_cell(float x, int n) {
    const int c = (int)floorf(x);
    return c < 0 ? 0 : (c >= n ? n - 1 : c);
}

// face_cell: the place of the cell that holds fp32 unit vector p, on a
// cube of n x n cells a face, down through the split cells; *cnt is its
// list's length. The coordinates in cell units (uf, vf) are refined exactly
// at each level (a subtraction of their integer part, a product by a power
// of two), so every level sees the same rounding of (u, v).
__device__ __forceinline__ uint32_t face_cell(float px, float py, float pz, int n,
                                              const uint32_t* __restrict__ counts, uint32_t* cnt) {
    const float ax = fabsf(px), ay = fabsf(py), az = fabsf(pz);
    float m, u, v;
    int a;
    if (ax >= ay && ax >= az) {
        a = 0, m = px, u = py, v = pz;
    } else if (ay >= az) {
        a = 1, m = py, u = pz, v = px;
    } else {
        a = 2, m = pz, u = px, v = py;
    }
    const float inv = 1.0f / fabsf(m);
    const float half = 0.5f * (float)n;
    float uf = (u * inv + 1.0f) * half, vf = (v * inv + 1.0f) * half;
    int i = clamp_cell(uf, n), j = clamp_cell(vf, n);
    const int f = 2 * a + (m < 0.0f ? 1 : 0);
    uint32_t place = (uint32_t)((f * n + i) * n + j), c = counts[place];
    while (c & CL_SPLIT) {
        uf = (uf - (float)i) * (float)CL_SPLIT_N, vf = (vf - (float)j) * (float)CL_SPLIT_N;
        i = clamp_cell(uf, CL_SPLIT_N), j = clamp_cell(vf, CL_SPLIT_N);
        place = (c & ~CL_SPLIT) + (uint32_t)(i * CL_SPLIT_N + j);
        c = counts[place];
    }
    *cnt = c;
    return place;
}

// A cell's geometry: its four (widened) corner rays, unit vectors in fp64,
// its centre c0 and alpha, the chord from c0 to the farthest corner.
struct FaceCell {
    double cx[4], cy[4], cz[4];
    double c0[3];
    double alpha;
};

// face_cell_geometry: cell (i, j) of face f with n cells a face edge.
__device__ FaceCell face_cell_geometry(int f, int i, int j, int n) {
    const double step = 2.0 / n;
    const double u[2] = {-1.0 + i * step - CL_DILATE, -1.0 + (i + 1) * step + CL_DILATE};
    const double v[2] = {-1.0 + j * step - CL_DILATE, -1.0 + (j + 1) * step + CL_DILATE};
    FaceCell c;
    face_point(f, 0.5 * (u[0] + u[1]), 0.5 * (v[0] + v[1]), c.c0);
    normalize3(c.c0);
    c.alpha = 0.0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        double p[3];
        face_point(f, u[k & 1], v[k >> 1], p);
        normalize3(p);
        c.cx[k] = p[0], c.cy[k] = p[1], c.cz[k] = p[2];
        const double dx = p[0] - c.c0[0], dy = p[1] - c.c0[1], dz = p[2] - c.c0[2];
        c.alpha = fmax(c.alpha, sqrt(dx * dx + dy * dy + dz * dz));
    }
    return c;
}

// Cube is the block of grid cells around a point (x, y, z) that holds its
// ball of chord r: columns (i, j) from (ilo, jlo), nj a row, each holding
// the cells klo..khi of the block, one run of the sorted references.
struct Cube {
    float x, y, z, r;
    int ilo, jlo, klo, khi, nj, ncol;
};

// cube_of is the cube of the ball of chord r around (x, y, z); false when
// it has more than CB_MAX_COLS columns.
__device__ __forceinline__ bool cube_of(float x, float y, float z, float r, int g, float h, Cube* q) {
    q->x = x, q->y = y, q->z = z, q->r = r;
    q->ilo = cell_of(x - r, g, h), q->jlo = cell_of(y - r, g, h), q->klo = cell_of(z - r, g, h);
    q->khi = cell_of(z + r, g, h);
    q->nj = cell_of(y + r, g, h) - q->jlo + 1;
    q->ncol = (cell_of(x + r, g, h) - q->ilo + 1) * q->nj;
    return q->ncol <= CB_MAX_COLS;
}

// cube_run is the sorted places [x, y) of column t of q, the column's cells
// cut to those the ball meets (none when it misses the column); the cell
// bounds are widened by far more than their fp32 rounding.
__device__ __forceinline__ uint2 cube_run(const Cube& q, int t, int g, float h, const uint32_t* __restrict__ cell_start) {
    const int i = q.ilo + t / q.nj, j = q.jlo + t % q.nj;
    const float dx = fmaxf(box_dist(i, q.x, h) - 1e-6f, 0.0f), dy = fmaxf(box_dist(j, q.y, h) - 1e-6f, 0.0f);
    const float left = q.r * q.r - dx * dx - dy * dy;
    if (left < 0.0f) return make_uint2(0, 0);
    const float dz = sqrtf(left) + 1e-6f;
    const int col = (i * g + j) * g;
    return make_uint2(cell_start[col + max(q.klo, cell_of(q.z - dz, g, h))],
                      cell_start[col + min(q.khi, cell_of(q.z + dz, g, h)) + 1]);
}

// warp_argmin is the least of the lanes' squared chords d, *at its place p
// (the lowest on ties); every lane returns the same.
__device__ __forceinline__ float warp_argmin(float d, uint32_t p, uint32_t* at) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float od = __shfl_xor_sync(0xffffffffu, d, o);
        const uint32_t op = __shfl_xor_sync(0xffffffffu, p, o);
        if (od < d || (od == d && op < p)) d = od, p = op;
    }
    *at = p;
    return d;
}

// nearest_in_cube is the fp32 squared chord from q's centre to the nearest
// reference of the cells its ball meets (infinite when they hold none), *at
// its sorted place, the lowest on ties: every lane returns the same. When
// it lies within the ball it is the centre's nearest.
__device__ float nearest_in_cube(const Cube& q, int g, float h, const uint32_t* __restrict__ cell_start,
                                 const float4* __restrict__ refs, uint32_t* at) {
    float dmin = INFINITY;
    uint32_t pmin = 0xffffffffu;
    for (int t = threadIdx.x & 31; t < q.ncol; t += 32) {
        const uint2 run = cube_run(q, t, g, h, cell_start);
        for (uint32_t p = run.x; p < run.y; p++) {
            const float d = chord2f(q.x, q.y, q.z, refs[p]);
            if (d < dmin) dmin = d, pmin = p;
        }
    }
    return warp_argmin(dmin, pmin, at);
}

// ball finds the chord within which the cell's candidates lie, d0 + 2 alpha
// with the fp32 slack (*need; *d0 the chord from the centre to its nearest
// reference, alpha to its farthest corner), and the cube that holds that
// ball; *q is the centre's nearest reference's sorted place. The searched
// ball grows from chord r0 until the nearest of the cells it meets lies
// within it; false when a cube passes CB_MAX_COLS columns.
__device__ bool ball(const FaceCell& c, int g, float h, float r0, const uint32_t* __restrict__ cell_start,
                     const float4* __restrict__ refs, Cube* cube, float* need, float* d0, uint32_t* q) {
    const float x0 = (float)c.c0[0], y0 = (float)c.c0[1], z0 = (float)c.c0[2];
    float r = r0;
    for (int iter = 0; iter < CB_ITERS; iter++) {
        if (!cube_of(x0, y0, z0, r, g, h, cube)) return false;
        const float dmin = nearest_in_cube(*cube, g, h, cell_start, refs, q);
        if (isinf(dmin)) {
            r *= 2.0f;
            continue;
        }
        *d0 = sqrtf(dmin);
        if (*d0 > r) {  // beyond the ball: the next holds the nearest
            r = *d0 * 1.000002f + CL_SLACK;
            continue;
        }
        *need = *d0 * 1.000002f + 2.0f * (float)c.alpha + CL_SLACK;
        return cube_of(x0, y0, z0, *need, g, h, cube);
    }
    return false;
}

__device__ __forceinline__ void corner_dots(const FaceCell& c, const double* rp, double* d) {
#pragma unroll
    for (int k = 0; k < 4; k++) d[k] = c.cx[k] * rp[0] + c.cy[k] * rp[1] + c.cz[k] * rp[2];
}

// A cell's list cannot be made: split it (while a level is left and a
// finer cell would keep fewer) or count it failed. Every lane calls; every
// lane gets the split cell's slot among the next level's parents, or -1.
__device__ int cell_failed(bool split, uint32_t pool, int f, int i, int j, uint32_t* __restrict__ counts,
                           uint4* __restrict__ todo, uint32_t* __restrict__ status) {
    int slot = -1;
    if ((threadIdx.x & 31) == 0) {
        counts[pool] = 0;
        if (split) {
            slot = (int)atomicAdd(&status[CS_SPLIT], 1u);
            todo[slot] = make_uint4(pool, (uint32_t)f, (uint32_t)i, (uint32_t)j);
        } else {
            atomicAdd(&status[CS_FAILED], 1u);
        }
    }
    return __shfl_sync(0xffffffffu, slot, 0);
}

// Source is the references a cell considers: those of its ball in the grid
// index (list null), or the survivors its parent passed down (a superset of
// the references nearest anywhere in the parent, so of the child's).
struct Source {
    Cube cube;
    int g;
    float h, need2;
    const uint32_t* cell_start;
    const uint32_t* list;
    uint32_t n;
};

// each_ref calls fn(p, r) for the source's references (sorted place p,
// vector r), spread over the warp's lanes; a lane stops when fn says false.
template <class F>
__device__ __forceinline__ void each_ref(const Source& s, const float4* __restrict__ refs, F fn) {
    const int lane = threadIdx.x & 31;
    if (s.list != nullptr) {
        for (uint32_t t = lane; t < s.n; t += 32) {
            const uint32_t p = s.list[t];
            if (!fn(p, refs[p])) return;
        }
        return;
    }
    for (int t = lane; t < s.cube.ncol; t += 32) {
        const uint2 run = cube_run(s.cube, t, s.g, s.h, s.cell_start);
        for (uint32_t p = run.x; p < run.y; p++) {
            const float4 r = refs[p];
            if (chord2f(s.cube.x, s.cube.y, s.cube.z, r) > s.need2) continue;
            if (!fn(p, r)) return;
        }
    }
}

// nearest_in_list is the fp32 squared chord from (x, y, z) to the nearest
// of the n sorted places in list, *at its place (lowest on ties; every
// lane the same).
__device__ float nearest_in_list(const uint32_t* __restrict__ list, uint32_t n, float x, float y, float z,
                                 const float4* __restrict__ refs, uint32_t* at) {
    float dmin = INFINITY;
    uint32_t pmin = 0xffffffffu;
    for (uint32_t t = threadIdx.x & 31; t < n; t += 32) {
        const uint32_t p = list[t];
        const float d = chord2f(x, y, z, refs[p]);
        if (d < dmin || (d == dmin && p < pmin)) dmin = d, pmin = p;
    }
    return warp_argmin(dmin, pmin, at);
}

__device__ __forceinline__ double max4(const double* d) { return fmax(fmax(d[0], d[1]), fmax(d[2], d[3])); }

// beaten_f32 tells, in fp32, that r's best corner (corners: the cell's in
// fp32) is below bound by far more than that arithmetic's rounding (about
// 1e-6 for unit vectors): the fp64 test would drop r too.
__device__ __forceinline__ bool beaten_f32(const float4* corners, float4 r, double bound) {
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < 4; k++) m = fmaxf(m, corners[k].x * r.x + corners[k].y * r.y + corners[k].z * r.z);
    return m + 1e-5f < (float)bound;
}

// can_win tells whether r (fp32 vector, index bits in w) can be nearest
// somewhere in cell c against a reference whose worst corner dot is bound:
// its best corner reaches bound. d receives r's fp64 corner dots.
__device__ __forceinline__ bool can_win(const FaceCell& c, const float4* corners, float4 r, double bound,
                                        const double* __restrict__ ref64, double* d) {
    if (beaten_f32(corners, r, bound)) return false;
    corner_dots(c, ref64 + 3 * (size_t)__float_as_uint(r.w), d);
    return !(max4(d) < bound);
}

// pass_down writes the survivors of a split cell (references whose best
// corner reaches bound) for its children: pass[slot] their count (more than
// CL_PASS: too many, the children scan their own balls), then the places.
__device__ void pass_down(const Source& src, const FaceCell& c, const float4* corners, double bound, int slot,
                          const float4* __restrict__ refs, const double* __restrict__ ref64,
                          uint32_t* __restrict__ pass) {
    if (pass == nullptr || slot < 0 || slot >= CL_PASS_SLOTS) return;
    uint32_t* cnt = pass + slot;
    uint32_t* dst = pass + CL_PASS_SLOTS + (size_t)slot * CL_PASS;
    if ((threadIdx.x & 31) == 0) *cnt = 0;
    __syncwarp();
    each_ref(src, refs, [&](uint32_t p, float4 r) {
        if (*(volatile uint32_t*)cnt > CL_PASS) return false;
        double d[4];
        if (!can_win(c, corners, r, bound, ref64, d)) return true;
        const uint32_t s = atomicAdd(cnt, 1u);
        if (s >= CL_PASS) return false;
        dst[s] = p;
        return true;
    });
}

// cells_build: one warp a cell. Level 0 (parents null): the six faces' n x n
// cells, cell k at place k. A later level: the CL_SPLIT_N^2 children of
// each parent ({place, face, i, j} at the level above, n cells a face edge
// here), child k at place base + k; the first child's warp points its
// parent at it, and the children take the survivors their parent passed
// down in pass_in (pass_down) where it could. refs, cell_start and g, h are
// the references' grid index (grid.cu); ref64 their fp64 unit vectors by
// index; r0 about the chord within which a point finds its nearest
// reference (the ball search's first guess). lists[place * CL_CAP + k] for
// k < counts[place] are the cell's candidates as the index keeps them (fp32
// vector, index bits in w). A cell whose list would hold more than
// split_above entries (or more than CL_CAP) is split, where a finer cell
// would keep fewer, into todo, and its survivors go to pass_out; 0: this
// level splits none.
extern "C" __global__ void __launch_bounds__(CB_WARPS * 32, CB_MIN_BLOCKS)
    cells_build(int n, int ncells, const uint4* __restrict__ parents, uint32_t base, int split_above, int g, float h,
                float r0, const uint32_t* __restrict__ cell_start, const float4* __restrict__ refs,
                const double* __restrict__ ref64, float4* __restrict__ lists, uint32_t* __restrict__ counts,
                uint4* __restrict__ todo, const uint32_t* __restrict__ pass_in, uint32_t* __restrict__ pass_out,
                uint32_t* __restrict__ status) {
    __shared__ uint32_t surv[CB_WARPS][CL_SURVIVE];
    __shared__ double dots[CB_WARPS][CL_SURVIVE][4];
    __shared__ uint32_t count[CB_WARPS];
    __shared__ float4 corners[CB_WARPS][4];  // the cell's corners in fp32
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long k = (long long)blockIdx.x * CB_WARPS + w;
    if (k >= ncells) return;  // the whole warp: no block-wide barrier below
    int f, i, j;
    uint32_t pool;
    Source src = {};
    if (parents == nullptr) {
        const long long per = (long long)n * n;
        f = (int)(k / per), i = (int)((k % per) / n), j = (int)(k % n);
        pool = (uint32_t)k;
    } else {
        const long long parent = k / (CL_SPLIT_N * CL_SPLIT_N);
        const uint4 par = parents[parent];
        const int sub = (int)(k % (CL_SPLIT_N * CL_SPLIT_N));
        f = (int)par.y, i = (int)par.z * CL_SPLIT_N + sub / CL_SPLIT_N, j = (int)par.w * CL_SPLIT_N + sub % CL_SPLIT_N;
        pool = base + (uint32_t)k;
        if (sub == 0 && lane == 0) counts[par.x] = CL_SPLIT | pool;
        if (pass_in != nullptr && parent < CL_PASS_SLOTS && pass_in[parent] - 1u < CL_PASS) {
            src.list = pass_in + CL_PASS_SLOTS + parent * CL_PASS;
            src.n = pass_in[parent];
        }
    }
    const FaceCell c = face_cell_geometry(f, i, j, n);
    const float x0 = (float)c.c0[0], y0 = (float)c.c0[1], z0 = (float)c.c0[2];
    float d0;
    uint32_t nearest;
    if (src.list != nullptr) {
        d0 = sqrtf(nearest_in_list(src.list, src.n, x0, y0, z0, refs, &nearest));
    } else {
        float need;
        if (!ball(c, g, h, r0, cell_start, refs, &src.cube, &need, &d0, &nearest)) {
            cell_failed(false, pool, f, i, j, counts, todo, status);
            return;
        }
        src.g = g, src.h = h, src.need2 = need * need, src.cell_start = cell_start;
    }
    // First filter: r cannot be nearest anywhere in the cell when the
    // centre's nearest beats it at every corner (r's best corner below the
    // nearest's worst); the ball holds every r that passes.
    double dq[4];
    corner_dots(c, ref64 + 3 * (size_t)__float_as_uint(refs[nearest].w), dq);
    const double bound = fmin(fmin(dq[0], dq[1]), fmin(dq[2], dq[3])) - CL_DOM_EPS;
    if (lane == 0) {
#pragma unroll
        for (int e = 0; e < 4; e++) corners[w][e] = make_float4((float)c.cx[e], (float)c.cy[e], (float)c.cz[e], 0.0f);
        count[w] = 0;
    }
    __syncwarp();
    float reach = 0.0f;  // the farthest survivor's squared chord from the centre
    each_ref(src, refs, [&](uint32_t p, float4 r) {
        if (*(volatile uint32_t*)&count[w] > CL_SURVIVE) return false;
        double d[4];
        if (!can_win(c, corners[w], r, bound, ref64, d)) return true;
        reach = fmaxf(reach, chord2f(x0, y0, z0, r));
        const uint32_t s = atomicAdd(&count[w], 1u);
        if (s >= CL_SURVIVE) return false;  // too many: the cell splits or fails
        surv[w][s] = p;
#pragma unroll
        for (int e = 0; e < 4; e++) dots[w][s][e] = d[e];
        return true;
    });
    __syncwarp();
    // A list too long: split the cell, while a level is left, where a
    // finer one keeps fewer. Near its references it does; far from them
    // it does when the survivors lie at depths from the centre that a
    // child's narrower band (about half of alpha) would tell apart, not
    // when they crowd into one spot.
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) reach = fmaxf(reach, __shfl_xor_sync(0xffffffffu, reach, o));
    const bool split = split_above > 0 && (d0 <= 2.0f * (float)c.alpha || sqrtf(reach) - d0 > 0.5f * (float)c.alpha);
    // No list: the cell splits (its survivors passed down) or fails.
    const auto give_up = [&]() {
        pass_down(src, c, corners[w], bound, cell_failed(split, pool, f, i, j, counts, todo, status), refs, ref64,
                  pass_out);
    };
    const int ns = (int)count[w];
    if (ns > CL_SURVIVE) {
        give_up();
        return;
    }
    // Second filter: r is out when one q beats it at every corner.
    uint32_t kept = 0;  // this lane's survivors, bit t/32 of its rounds
    for (int t = lane; t < ns; t += 32) {
        bool out = false;
        for (int q = 0; q < ns && !out; q++) {
            out = q != t && dots[w][q][0] - dots[w][t][0] > CL_DOM_EPS && dots[w][q][1] - dots[w][t][1] > CL_DOM_EPS &&
                  dots[w][q][2] - dots[w][t][2] > CL_DOM_EPS && dots[w][q][3] - dots[w][t][3] > CL_DOM_EPS;
        }
        if (!out) kept |= 1u << (t >> 5);
    }
    uint32_t nkept = 0;
    for (int round = 0; round * 32 < ns; round++) {
        const bool keep = (kept >> round) & 1u;
        const uint32_t ballot = __ballot_sync(0xffffffffu, keep);
        const uint32_t at = nkept + __popc(ballot & ((1u << lane) - 1u));
        if (keep && at < CL_CAP) lists[(size_t)pool * CL_CAP + at] = refs[surv[w][round * 32 + lane]];
        nkept += __popc(ballot);
    }
    if (nkept > CL_CAP || nkept == 0 || (split && nkept > (uint32_t)split_above)) {
        give_up();
    } else if (lane == 0) {
        counts[pool] = nkept;
        atomicAdd(&status[CS_ENTRIES], nkept);
        atomicMax(&status[CS_LONGEST], nkept);
    }
}

// cells_query: the nearest reference of each observation in the radian
// columns lat, lon through the cells' lists; answers at the observation's
// place in out_idx, out_dist (radians); the near ties re-ranked in fp64 are
// counted in *nrefined. Nothing is written where the build's status says a
// cell split or failed at its last level (the lists were queued unchecked).
template <typename T>
__device__ __forceinline__ void cells_query_body(const T* __restrict__ lat, const T* __restrict__ lon, int nobs,
                                                 int n, const uint32_t* __restrict__ counts,
                                                 const float4* __restrict__ lists, const double* __restrict__ ref64,
                                                 uint32_t* __restrict__ out_idx, float* __restrict__ out_dist,
                                                 uint32_t* __restrict__ nrefined, const uint32_t* __restrict__ status) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nobs || (status[CS_SPLIT] | status[CS_FAILED]) != 0) return;
    const ObsRec o = make_rec((double)lat[k], (double)lon[k], (uint32_t)k);
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    uint32_t cnt;
    const uint32_t cell = face_cell(px, py, pz, n, counts, &cnt);
    if (cnt == 0) {  // a failed build, which the host does not query: say so rather than read past the lists
        out_idx[k] = 0xffffffffu;
        out_dist[k] = NAN;
        return;
    }
    const float4* l = lists + (size_t)cell * CL_CAP;
    float d1 = INFINITY, d2 = INFINITY;
    uint32_t i1 = 0xffffffffu;
    for (uint32_t t = 0; t < cnt; t++) {
        const float4 rf = l[t];
        const float d = chord2f(px, py, pz, rf);
        if (d < d1) {  // level with the winner: the runner-up (a near tie, re-ranked in fp64)
            d2 = d1;
            d1 = d;
            i1 = __float_as_uint(rf.w);
        } else {
            d2 = fminf(d2, d);
        }
    }
    const double c1 = sqrt((double)d1), c2 = sqrt((double)d2);
    double best;
    if (d2 < INFINITY && c2 - c1 <= chord_err(c1) + chord_err(c2)) {
        best = INFINITY;
        i1 = 0xffffffffu;
        for (uint32_t t = 0; t < cnt; t++) {
            const uint32_t id = __float_as_uint(l[t].w);
            const double* rp = ref64 + 3 * (size_t)id;
            const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
            if (d < best || (d == best && id < i1)) best = d, i1 = id;
        }
        atomicAdd(nrefined, 1u);
    } else {
        const double* rp = ref64 + 3 * (size_t)i1;
        best = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
    }
    out_idx[k] = i1;
    out_dist[k] = (float)chord2_to_angle(best);
}

#define CELLS_QUERY(NAME, T)                                                                                   \
    extern "C" __global__ void __launch_bounds__(CQ_THREADS)                                                   \
        NAME(const T* __restrict__ lat, const T* __restrict__ lon, int nobs, int n,                            \
             const uint32_t* __restrict__ counts, const float4* __restrict__ lists,                            \
             const double* __restrict__ ref64, uint32_t* __restrict__ out_idx, float* __restrict__ out_dist, \
             uint32_t* __restrict__ nrefined, const uint32_t* __restrict__ status) {                           \
        cells_query_body<T>(lat, lon, nobs, n, counts, lists, ref64, out_idx, out_dist, nrefined, status);    \
    }

CELLS_QUERY(cells_query_f64, double)
CELLS_QUERY(cells_query_f32, float)
