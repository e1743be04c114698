// grid.cuh: the cell geometry the grid kernels share (grid.cu: the index and
// the nearest-reference query; knn.cu: k nearest and within a radius): cells
// of a G x G x G grid over [-1, 1]^3, distances to their boxes, the shell
// walk and its stop test, each with margins that exceed their own fp32
// rounding.
#pragma once
#include <stdint.h>

__device__ __forceinline__ int cell_of(float v, int g, float h) {
    int c = (int)floorf((v + 1.0f) / h);
    return c < 0 ? 0 : (c >= g ? g - 1 : c);
}

__device__ __forceinline__ uint32_t cell_key(float x, float y, float z, int g, float h) {
    return (uint32_t)((cell_of(x, g, h) * g + cell_of(y, g, h)) * g + cell_of(z, g, h));
}

__device__ __forceinline__ float box_dist(int c, float p, float h) {
    float lo = (float)c * h - 1.0f;
    float hi = lo + h;
    return fmaxf(fmaxf(lo - p, p - hi), 0.0f);
}

// Threshold on the chord to a cell's box: c1 plus twice the fp32 chord
// error bound (chord_err) plus the cell-bound slack, with room for this
// fp32 arithmetic's own rounding.
__device__ __forceinline__ float prune_chord(float d1) {
    const float c1 = sqrtf(d1);
    return c1 * 1.000002f + 2.5e-6f;
}

// SHELL_CELLS runs its last argument (a block) with the references [cs, ce)
// of every cell of the shell at Chebyshev radius R around (cx, cy, cz) that
// the unit sphere crosses and whose box is within sqrt(THR2) of p; THR2 may
// shrink as the block runs. (A macro, not a function taking a lambda: the
// lambda kept the query's state in local memory.)
#define SHELL_CELLS(R, THR2, ...)                                                       \
    do {                                                                                \
        const int i0_ = max(cx - (R), 0), i9_ = min(cx + (R), g - 1);                   \
        const int j0_ = max(cy - (R), 0), j9_ = min(cy + (R), g - 1);                   \
        for (int ci = i0_; ci <= i9_; ci++) {                                           \
            const float bx = box_dist(ci, px, h);                                       \
            const float bx2 = bx * bx;                                                  \
            if (bx2 > (THR2)) continue;                                                 \
            for (int cj = j0_; cj <= j9_; cj++) {                                       \
                const float by = box_dist(cj, py, h);                                   \
                const float bxy2 = bx2 + by * by;                                       \
                if (bxy2 > (THR2)) continue;                                            \
                const bool edge = abs(ci - cx) == (R) || abs(cj - cy) == (R);           \
                const short4 run = runs[ci * g + cj];                                   \
                _Pragma("unroll") for (int q_ = 0; q_ < 2; q_++) {                      \
                    const int lo = max(q_ == 0 ? (int)run.x : (int)run.z, cz - (R));    \
                    const int hi = min(q_ == 0 ? (int)run.y : (int)run.w, cz + (R));    \
                    for (int ck = lo; ck <= hi; ck++) {                                 \
                        if (!edge && ck != cz - (R) && ck != cz + (R)) {                \
                            ck = cz + (R) - 1; /* interior column: the two z faces */   \
                            continue;                                                   \
                        }                                                               \
                        const float bz = box_dist(ck, pz, h);                           \
                        if (bxy2 + bz * bz > (THR2)) continue;                          \
                        const int c = (ci * g + cj) * g + ck;                           \
                        const uint32_t cs = cell_start[c], ce = cell_start[c + 1];      \
                        __VA_ARGS__                                                     \
                    }                                                                   \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    } while (0)

// Stop test after the shell at Chebyshev radius r: true once everything
// outside the cube of cells within r of (cx, cy, cz) is provably farther
// than the winner plus the margin that decides a near tie (lb - slack -
// chord_err(lb) > c1 + chord_err(c1), each side moved against the stop by
// more than its fp32 rounding). *all is set when the cube covers the grid.
__device__ __forceinline__ bool shell_done(int r, float px, float py, float pz, int cx, int cy, int cz, int g,
                                           float h, float d1, bool* all) {
    float lb = INFINITY;
    if (cx - r > 0) lb = fminf(lb, px - ((float)(cx - r) * h - 1.0f));
    if (cx + r < g - 1) lb = fminf(lb, ((float)(cx + r + 1) * h - 1.0f) - px);
    if (cy - r > 0) lb = fminf(lb, py - ((float)(cy - r) * h - 1.0f));
    if (cy + r < g - 1) lb = fminf(lb, ((float)(cy + r + 1) * h - 1.0f) - py);
    if (cz - r > 0) lb = fminf(lb, pz - ((float)(cz - r) * h - 1.0f));
    if (cz + r < g - 1) lb = fminf(lb, ((float)(cz + r + 1) * h - 1.0f) - pz);
    *all = isinf(lb);
    return *all || lb * 0.999998f - 3.5e-6f > sqrtf(d1) * 1.000002f + 5e-7f;
}

