// tree.cu: exact nearest reference through a k-d tree (`--algo grid` where
// the plan finds no grid that suits the references: crowded into a few
// places, or far from most observations).
//
// The tree is built on the host (the CPU engine's k-d tree: median splits
// of the widest axis, leaves of at most 8 references) and sent as a
// bounding-volume hierarchy: each internal node holds the boxes of its two
// children, so a visit is one 64-byte load that decides both. A child is an
// internal node's index, or a leaf (TREE_LEAF set) as its first reference
// and count. Boxes are the references' fp64 bounds rounded outwards to
// fp32, so they hold both the fp64 points and their fp32 roundings.
//
// The observations come sorted by cell (grid.cu's sort), so the threads of
// a warp descend much the same path. A thread descends nearest child first,
// ranks the leaves it meets in fp32 (tracking the runner-up), keeps the
// farther child on a stack, and skips every box farther than the winner plus
// the fp32 error margin, as the grid query skips cells. A winner not clear
// of its runner-up by the proven fp32 error bound is re-ranked in fp64 over
// every leaf within the final threshold (ties to the lowest index), so the
// answer is the fp64 brute-force answer.

#include <stdint.h>

#include "grid.cuh"
#include "sphere.cuh"

#ifndef TQ_THREADS
#define TQ_THREADS 128  // tree_query's block; the engine reads it from the kernel's attributes
#endif
#define TREE_STACK 32          // nodes a thread keeps for later: the tree's depth at most (the host checks)
#define TREE_LEAF 0x80000000u  // a child that is a leaf: TREE_LEAF | first << 4 | count
#define TREE_NODE_BYTES 64

// Squared distance from p to the box [lo, hi], each term as the grid's
// box_dist (the pruning margins of prune_chord cover its rounding).
__device__ __forceinline__ float box2(float px, float py, float pz, float lx, float ly, float lz, float hx,
                                      float hy, float hz) {
    const float dx = fmaxf(fmaxf(lx - px, px - hx), 0.0f);
    const float dy = fmaxf(fmaxf(ly - py, py - hy), 0.0f);
    const float dz = fmaxf(fmaxf(lz - pz, pz - hz), 0.0f);
    return dx * dx + dy * dy + dz * dz;
}

// One internal node: the left child's box (lo, hi), the right child's, and
// the two children.
struct TreeNode {
    float l[6], r[6];
    uint32_t left, right;
    uint32_t pad[2];
};
static_assert(sizeof(TreeNode) == TREE_NODE_BYTES, "TreeNode must stay 64 bytes: the Go side packs it");

__device__ __forceinline__ TreeNode load_node(const float4* __restrict__ nodes, uint32_t n) {
    const float4 a = nodes[4 * n], b = nodes[4 * n + 1], c = nodes[4 * n + 2], d = nodes[4 * n + 3];
    TreeNode t;
    t.l[0] = a.x, t.l[1] = a.y, t.l[2] = a.z, t.l[3] = a.w, t.l[4] = b.x, t.l[5] = b.y;
    t.r[0] = b.z, t.r[1] = b.w, t.r[2] = c.x, t.r[3] = c.y, t.r[4] = c.z, t.r[5] = c.w;
    t.left = __float_as_uint(d.x), t.right = __float_as_uint(d.y);
    return t;
}

// The fp32 ranking state of one observation.
struct Best {
    float d1, d2, thr2;
    uint32_t i1;
};

__device__ __forceinline__ void rank_leaf(float px, float py, float pz, const float4* __restrict__ refs,
                                          uint32_t child, Best* b) {
    const uint32_t first = (child & ~TREE_LEAF) >> 4, count = child & 15u;
    for (uint32_t p = first; p < first + count; p++) {
        const float4 rf = refs[p];
        const float d = chord2f(px, py, pz, rf);
        const uint32_t id = __float_as_uint(rf.w);
        if (d < b->d1) {  // level with the winner: the runner-up (a near tie, re-ranked in fp64)
            b->d2 = b->d1;
            b->d1 = d;
            b->i1 = id;
            const float tc = prune_chord(d);
            b->thr2 = tc * tc;
        } else {
            b->d2 = fminf(b->d2, d);
        }
    }
}

// refine_leaf re-ranks a leaf in fp64: the exact winner, ties to the lowest
// index.
__device__ __forceinline__ void refine_leaf(const ObsRec& o, const float4* __restrict__ refs,
                                            const double* __restrict__ ref64, uint32_t child, double* best,
                                            uint32_t* i1) {
    const uint32_t first = (child & ~TREE_LEAF) >> 4, count = child & 15u;
    for (uint32_t p = first; p < first + count; p++) {
        const uint32_t id = __float_as_uint(refs[p].w);
        const double* rp = ref64 + 3 * (size_t)id;
        const double d = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
        if (d < *best || (d == *best && id < *i1)) {
            *best = d;
            *i1 = id;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TQ_THREADS)
    tree_query(const ObsRec* __restrict__ obs, int nobs, const float4* __restrict__ nodes,
               const float4* __restrict__ refs, const double* __restrict__ ref64, uint32_t* __restrict__ out_idx,
               float* __restrict__ out_dist, uint32_t* __restrict__ nrefined) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nobs) return;
    const ObsRec o = obs[k];
    const float px = (float)o.x, py = (float)o.y, pz = (float)o.z;
    uint32_t stack[TREE_STACK];
    float sdist[TREE_STACK];
    int sp = 0;
    Best b = {INFINITY, INFINITY, INFINITY, 0xffffffffu};
    uint32_t cur = 0;
    for (;;) {
        const TreeNode t = load_node(nodes, cur);
        float dn = box2(px, py, pz, t.l[0], t.l[1], t.l[2], t.l[3], t.l[4], t.l[5]);
        float df = box2(px, py, pz, t.r[0], t.r[1], t.r[2], t.r[3], t.r[4], t.r[5]);
        uint32_t near = t.left, far = t.right;
        if (df < dn) {
            const float d = dn;
            dn = df, df = d;
            near = t.right, far = t.left;
        }
        uint32_t next = TREE_LEAF;  // none yet
        if (dn <= b.thr2) {
            if (near & TREE_LEAF) rank_leaf(px, py, pz, refs, near, &b);
            else next = near;
        }
        if (df <= b.thr2) {
            if (far & TREE_LEAF) rank_leaf(px, py, pz, refs, far, &b);
            else if (next == TREE_LEAF) next = far;
            else stack[sp] = far, sdist[sp] = df, sp++;
        }
        while (next == TREE_LEAF && sp > 0) {
            sp--;
            if (sdist[sp] <= b.thr2) next = stack[sp];
        }
        if (next == TREE_LEAF) break;
        cur = next;
    }
    // No runner-up seen (d2 infinite) means none within the margin exists.
    const double c1 = sqrt((double)b.d1), c2 = sqrt((double)b.d2);
    uint32_t i1 = b.i1;
    double best;
    if (b.d2 < INFINITY && c2 - c1 <= chord_err(c1) + chord_err(c2)) {
        // A near tie in fp32: every leaf within the final threshold, in
        // fp64. The fp64 winner is among them: its exact chord is at most
        // the fp32 winner's plus chord_err, below the threshold.
        best = INFINITY;
        i1 = 0xffffffffu;
        sp = 0;
        cur = 0;
        for (;;) {
            const TreeNode t = load_node(nodes, cur);
            uint32_t next = TREE_LEAF;
            const uint32_t child[2] = {t.left, t.right};
            const float d[2] = {box2(px, py, pz, t.l[0], t.l[1], t.l[2], t.l[3], t.l[4], t.l[5]),
                                box2(px, py, pz, t.r[0], t.r[1], t.r[2], t.r[3], t.r[4], t.r[5])};
#pragma unroll
            for (int c = 0; c < 2; c++) {
                if (d[c] > b.thr2) continue;
                if (child[c] & TREE_LEAF) refine_leaf(o, refs, ref64, child[c], &best, &i1);
                else if (next == TREE_LEAF) next = child[c];
                else stack[sp++] = child[c];
            }
            if (next == TREE_LEAF && sp > 0) next = stack[--sp];
            if (next == TREE_LEAF) break;
            cur = next;
        }
        atomicAdd(nrefined, 1u);
    } else {
        const double* rp = ref64 + 3 * (size_t)i1;
        best = chord2d(o.x, o.y, o.z, rp[0], rp[1], rp[2]);
    }
    out_idx[o.i] = i1;
    out_dist[o.i] = (float)chord2_to_angle(best);
}
