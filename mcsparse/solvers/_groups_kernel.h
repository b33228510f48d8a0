/* The two products of a row-sparse group in ShareBoost's refit (_objective_fast.pyx):
 *
 *     scores:   out[orow[i], c] += sum_j x_i[j] Vp[j, c]      (i < n, c < r)
 *     gradient: G[j, c]         += sum_i x_i[j] Mp[i, c]      (j < w, c < r)
 *
 * where x_i = values + MCS_ROW(xrow, i) * w is a row of the group's values (w wide),
 * gathered in place. The scores are processed in tiles of MCS_TILE = 12 (three
 * vectors of four doubles), Vp and Mp are zero-padded to whole tiles (ld =
 * n_tiles * 12). Register blocking: four rows times one tile (scores), four
 * columns times one tile (gradient), twelve vector accumulators either way.
 *
 * Why not dgemm: the shapes are n x w times w x r with r the number of scores
 * (10 on MNIST) and w ~ 51, on rows scattered over the shared values: BLAS runs
 * them at a fifth of its peak after a gather (it packs both operands at every
 * call), and the rows' fetches from memory stall it. Here the next rows are
 * prefetched while the current ones are summed. ``asv run --python=same --bench
 * AnchorPiecesProducts`` times both against NumPy's gather and dgemm.
 *
 * Needs GCC or Clang (vector extensions, __builtin_prefetch). Compiled for AVX2
 * with FMA and for the baseline (MCS_CLONES_FMA of mcsparse/utils/_simd.h), the
 * compiler's default vector width elsewhere. Where the CPU has AVX-512
 * (mcs_simd_v4()), mcs_group_scores_any / mcs_group_grad_any run the _v4 loops
 * (MCS_TARGET_V4) instead: the same tile of 12 scores as one 8-wide and one
 * 4-wide vector (two FMAs per row and column instead of three) and eight rows
 * (scores) or columns (gradient) per register block, sixteen accumulators. Each
 * entry is the same chain of FMAs in the same order as in the AVX2 loops, so the
 * two give the same bits (a NaN's sign aside, where NaNs of both signs meet).
 * Float64 throughout; the order of the sums is fixed (j ascending for a score,
 * i ascending for a gradient entry), the same on every machine up to FMA.
 */
#include <stddef.h>
#include <string.h>

#include "_simd.h"

#define MCS_TILE 12

/* Asks for the cache lines of a row of w doubles. */
static inline void mcs_prefetch_row(const double *x, ptrdiff_t w) {
    for (ptrdiff_t k = 0; k < w; k += 8) __builtin_prefetch(x + k);
    __builtin_prefetch(x + w - 1);
}

typedef double mcs_v4 __attribute__((vector_size(32)));

#define MCS_LOAD(v, p) memcpy(&(v), (p), sizeof(mcs_v4))
#define MCS_STORE(p, v) memcpy((p), &(v), sizeof(mcs_v4))
/* Row i of the values: xrow[i], or i when xrow is NULL (a group's own copy). */
#define MCS_ROW(xrow, i) ((xrow) ? (xrow)[i] : (i))
#define MCS_SPLAT(x) ((mcs_v4){(x), (x), (x), (x)})

/* The register block: a{q}{k} += s{q} * p[4k .. 4k + 4) for q < 4, k < 3 (twelve
 * accumulators a00 .. a32 in scope). */
#define MCS_BLOCK_FMA(s0, s1, s2, s3, p)                                               \
    do {                                                                               \
        mcs_v4 v0_, v1_, v2_, b_;                                                      \
        MCS_LOAD(v0_, (p));                                                            \
        MCS_LOAD(v1_, (p) + 4);                                                        \
        MCS_LOAD(v2_, (p) + 8);                                                        \
        b_ = MCS_SPLAT(s0);                                                            \
        a00 += b_ * v0_; a01 += b_ * v1_; a02 += b_ * v2_;                             \
        b_ = MCS_SPLAT(s1);                                                            \
        a10 += b_ * v0_; a11 += b_ * v1_; a12 += b_ * v2_;                             \
        b_ = MCS_SPLAT(s2);                                                            \
        a20 += b_ * v0_; a21 += b_ * v1_; a22 += b_ * v2_;                             \
        b_ = MCS_SPLAT(s3);                                                            \
        a30 += b_ * v0_; a31 += b_ * v1_; a32 += b_ * v2_;                             \
    } while (0)

/* Adds the tile's accumulator (three vectors) to dst[0 .. nc). */
#define MCS_ADD_TILE(dst, a0, a1, a2, nc)                                              \
    do {                                                                               \
        double t_[MCS_TILE];                                                           \
        MCS_STORE(t_, a0);                                                             \
        MCS_STORE(t_ + 4, a1);                                                         \
        MCS_STORE(t_ + 8, a2);                                                         \
        for (ptrdiff_t c_ = 0; c_ < (nc); c_++) (dst)[c_] += t_[c_];                   \
    } while (0)

/* Scores of n rows: out[orow[i] * r + c] += x_i . Vp[:, c]; Vp is w x ld, ld = 12 * n_tiles. */
MCS_CLONES_FMA
static void mcs_group_scores(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                             const ptrdiff_t *orow, ptrdiff_t n, const double *Vp,
                             ptrdiff_t n_tiles, double *out, ptrdiff_t r) {
    const ptrdiff_t ld = MCS_TILE * n_tiles;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const double *x0 = values + MCS_ROW(xrow, i) * w, *x1 = values + MCS_ROW(xrow, i + 1) * w;
        const double *x2 = values + MCS_ROW(xrow, i + 2) * w, *x3 = values + MCS_ROW(xrow, i + 3) * w;
        if (i + 8 <= n) /* the next four rows, from anywhere in values: ask early */
            for (ptrdiff_t q = 4; q < 8; q++)
                mcs_prefetch_row(values + MCS_ROW(xrow, i + q) * w, w);
        for (ptrdiff_t t = 0; t < n_tiles; t++) {
            const double *v = Vp + MCS_TILE * t;
            mcs_v4 a00 = {0}, a01 = {0}, a02 = {0}, a10 = {0}, a11 = {0}, a12 = {0};
            mcs_v4 a20 = {0}, a21 = {0}, a22 = {0}, a30 = {0}, a31 = {0}, a32 = {0};
            for (ptrdiff_t j = 0; j < w; j++, v += ld)
                MCS_BLOCK_FMA(x0[j], x1[j], x2[j], x3[j], v);
            ptrdiff_t c0 = MCS_TILE * t, nc = r - c0 < MCS_TILE ? r - c0 : MCS_TILE;
            MCS_ADD_TILE(out + orow[i] * r + c0, a00, a01, a02, nc);
            MCS_ADD_TILE(out + orow[i + 1] * r + c0, a10, a11, a12, nc);
            MCS_ADD_TILE(out + orow[i + 2] * r + c0, a20, a21, a22, nc);
            MCS_ADD_TILE(out + orow[i + 3] * r + c0, a30, a31, a32, nc);
        }
    }
    for (; i < n; i++) {
        const double *x0 = values + MCS_ROW(xrow, i) * w;
        for (ptrdiff_t t = 0; t < n_tiles; t++) {
            const double *v = Vp + MCS_TILE * t;
            mcs_v4 a00 = {0}, a01 = {0}, a02 = {0};
            for (ptrdiff_t j = 0; j < w; j++, v += ld) {
                mcs_v4 v0, v1, v2, b = MCS_SPLAT(x0[j]);
                MCS_LOAD(v0, v);
                MCS_LOAD(v1, v + 4);
                MCS_LOAD(v2, v + 8);
                a00 += b * v0; a01 += b * v1; a02 += b * v2;
            }
            ptrdiff_t c0 = MCS_TILE * t, nc = r - c0 < MCS_TILE ? r - c0 : MCS_TILE;
            MCS_ADD_TILE(out + orow[i] * r + c0, a00, a01, a02, nc);
        }
    }
}

/* Gradient rows of n rows: G[j * ld + c] += sum_i x_i[j] Mp[i * ld + c], ld = 12 * n_tiles
 * (G is w x ld, padded; the caller keeps the first r columns). XT is scratch of
 * MCS_SUB * (w + 3) doubles: the rows are transposed MCS_SUB at a time so that the
 * inner loop reads four columns and Mp as sequential streams from L1. */
#define MCS_SUB 64
MCS_CLONES_FMA
static void mcs_group_grad(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                           ptrdiff_t n, const double *Mp, ptrdiff_t n_tiles, double *G,
                           double *XT) {
    const ptrdiff_t ld = MCS_TILE * n_tiles;
    const ptrdiff_t wp = (w + 3) / 4 * 4;
    for (ptrdiff_t i0 = 0; i0 < n; i0 += MCS_SUB) {
        const ptrdiff_t m = n - i0 < MCS_SUB ? n - i0 : MCS_SUB;
        for (ptrdiff_t i = 0; i < m; i++) {
            const double *x = values + MCS_ROW(xrow, i0 + i) * w;
            if (i0 + i + 8 < n) mcs_prefetch_row(values + MCS_ROW(xrow, i0 + i + 8) * w, w);
            for (ptrdiff_t j = 0; j < w; j++) XT[j * MCS_SUB + i] = x[j];
        }
        for (ptrdiff_t j = w; j < wp; j++)
            for (ptrdiff_t i = 0; i < m; i++) XT[j * MCS_SUB + i] = 0.0;
        for (ptrdiff_t t = 0; t < n_tiles; t++) {
            for (ptrdiff_t j0 = 0; j0 < wp; j0 += 4) {
                const double *x0 = XT + j0 * MCS_SUB, *x1 = x0 + MCS_SUB;
                const double *x2 = x1 + MCS_SUB, *x3 = x2 + MCS_SUB;
                const double *mm = Mp + (i0 * ld) + MCS_TILE * t;
                mcs_v4 a00 = {0}, a01 = {0}, a02 = {0}, a10 = {0}, a11 = {0}, a12 = {0};
                mcs_v4 a20 = {0}, a21 = {0}, a22 = {0}, a30 = {0}, a31 = {0}, a32 = {0};
                for (ptrdiff_t i = 0; i < m; i++, mm += ld)
                    MCS_BLOCK_FMA(x0[i], x1[i], x2[i], x3[i], mm);
                const ptrdiff_t nj = w - j0 < 4 ? w - j0 : 4;
                double *g = G + j0 * ld + MCS_TILE * t;
                MCS_ADD_TILE(g, a00, a01, a02, MCS_TILE);
                if (nj > 1) MCS_ADD_TILE(g + ld, a10, a11, a12, MCS_TILE);
                if (nj > 2) MCS_ADD_TILE(g + 2 * ld, a20, a21, a22, MCS_TILE);
                if (nj > 3) MCS_ADD_TILE(g + 3 * ld, a30, a31, a32, MCS_TILE);
            }
        }
    }
}


#if MCS_SIMD_X86
typedef double mcs_v8 __attribute__((vector_size(64)));

#define MCS_LOAD8(v, p) memcpy(&(v), (p), sizeof(mcs_v8))
#define MCS_STORE8(p, v) memcpy((p), &(v), sizeof(mcs_v8))
#define MCS_SPLAT8(x) ((mcs_v8){(x), (x), (x), (x), (x), (x), (x), (x)})

/* One lane of the 8 x 12 register block: a{q} (8 wide) and b{q} (4 wide) += s * (p8, p4). */
#define MCS_FMA_LANE(q, s, p8, p4)                                                     \
    do {                                                                               \
        const double s_ = (s);                                                         \
        a##q += MCS_SPLAT8(s_) * (p8);                                                 \
        b##q += MCS_SPLAT(s_) * (p4);                                                  \
    } while (0)

/* The register block: row or column q < 8 takes s[q]; the tile is p[0 .. 12). */
#define MCS_BLOCK8_FMA(s, p)                                                           \
    do {                                                                               \
        mcs_v8 p8_;                                                                    \
        mcs_v4 p4_;                                                                    \
        MCS_LOAD8(p8_, (p));                                                           \
        MCS_LOAD(p4_, (p) + 8);                                                        \
        MCS_FMA_LANE(0, s[0], p8_, p4_); MCS_FMA_LANE(1, s[1], p8_, p4_);              \
        MCS_FMA_LANE(2, s[2], p8_, p4_); MCS_FMA_LANE(3, s[3], p8_, p4_);              \
        MCS_FMA_LANE(4, s[4], p8_, p4_); MCS_FMA_LANE(5, s[5], p8_, p4_);              \
        MCS_FMA_LANE(6, s[6], p8_, p4_); MCS_FMA_LANE(7, s[7], p8_, p4_);              \
    } while (0)

#define MCS_ZERO8                                                                      \
    mcs_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0}; \
    mcs_v4 b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0}, b4 = {0}, b5 = {0}, b6 = {0}, b7 = {0}

/* Adds lane q's tile (a{q}, b{q}) to dst[0 .. nc). */
#define MCS_ADD_TILE8(dst, q, nc)                                                      \
    do {                                                                               \
        double t_[MCS_TILE];                                                           \
        MCS_STORE8(t_, a##q);                                                          \
        MCS_STORE(t_ + 8, b##q);                                                       \
        for (ptrdiff_t c_ = 0; c_ < (nc); c_++) (dst)[c_] += t_[c_];                   \
    } while (0)

/* mcs_group_scores, eight rows at a time (the rows that remain go to mcs_group_scores). */
MCS_TARGET_V4
static void mcs_group_scores_v4(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                                const ptrdiff_t *orow, ptrdiff_t n, const double *Vp,
                                ptrdiff_t n_tiles, double *out, ptrdiff_t r) {
    const ptrdiff_t ld = MCS_TILE * n_tiles;
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const double *x[8];
        for (int q = 0; q < 8; q++) x[q] = values + MCS_ROW(xrow, i + q) * w;
        if (i + 16 <= n) /* the next eight rows, from anywhere in values: ask early */
            for (ptrdiff_t q = 8; q < 16; q++)
                mcs_prefetch_row(values + MCS_ROW(xrow, i + q) * w, w);
        for (ptrdiff_t t = 0; t < n_tiles; t++) {
            const double *v = Vp + MCS_TILE * t;
            MCS_ZERO8;
            for (ptrdiff_t j = 0; j < w; j++, v += ld) {
                const double s[8] = {x[0][j], x[1][j], x[2][j], x[3][j],
                                     x[4][j], x[5][j], x[6][j], x[7][j]};
                MCS_BLOCK8_FMA(s, v);
            }
            const ptrdiff_t c0 = MCS_TILE * t, nc = r - c0 < MCS_TILE ? r - c0 : MCS_TILE;
            MCS_ADD_TILE8(out + orow[i] * r + c0, 0, nc);
            MCS_ADD_TILE8(out + orow[i + 1] * r + c0, 1, nc);
            MCS_ADD_TILE8(out + orow[i + 2] * r + c0, 2, nc);
            MCS_ADD_TILE8(out + orow[i + 3] * r + c0, 3, nc);
            MCS_ADD_TILE8(out + orow[i + 4] * r + c0, 4, nc);
            MCS_ADD_TILE8(out + orow[i + 5] * r + c0, 5, nc);
            MCS_ADD_TILE8(out + orow[i + 6] * r + c0, 6, nc);
            MCS_ADD_TILE8(out + orow[i + 7] * r + c0, 7, nc);
        }
    }
    if (i < n)
        mcs_group_scores(xrow ? values : values + i * w, w, xrow ? xrow + i : NULL, orow + i,
                         n - i, Vp, n_tiles, out, r);
}

/* mcs_group_grad, eight columns at a time, reading the rows in place (no XT): for
 * each MCS_SUB rows, each block of eight columns sums x_i[j0 .. j0 + 8) times the
 * tile of M's row i over the rows; the rows stay in L1 from one block to the
 * next, and the next MCS_SUB rows are prefetched a line at a time meanwhile. */
MCS_TARGET_V4
static void mcs_group_grad_v4(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                              ptrdiff_t n, const double *Mp, ptrdiff_t n_tiles, double *G) {
    const ptrdiff_t ld = MCS_TILE * n_tiles;
    const double *x[MCS_SUB];
    for (ptrdiff_t i0 = 0; i0 < n; i0 += MCS_SUB) {
        const ptrdiff_t m = n - i0 < MCS_SUB ? n - i0 : MCS_SUB;
        for (ptrdiff_t i = 0; i < m; i++) x[i] = values + MCS_ROW(xrow, i0 + i) * w;
        for (ptrdiff_t t = 0; t < n_tiles; t++) {
            for (ptrdiff_t j0 = 0; j0 < w; j0 += 8) {
                const ptrdiff_t nj = w - j0 < 8 ? w - j0 : 8;
                const double *mm = Mp + (i0 * ld) + MCS_TILE * t;
                /* while the first tile runs, each block asks for its own columns of
                 * the next MCS_SUB rows, one cache line a row (the last block: to
                 * the row's end), spread over the rows */
                const int ahead = t == 0;
                MCS_ZERO8;
                if (nj == 8) {
                    for (ptrdiff_t i = 0; i < m; i++, mm += ld) {
                        if (ahead && i0 + MCS_SUB + i < n)
                            __builtin_prefetch(values + MCS_ROW(xrow, i0 + MCS_SUB + i) * w + j0);
                        const double *s = x[i] + j0;
                        MCS_BLOCK8_FMA(s, mm);
                    }
                } else { /* the last columns: zeros beyond the row; four lanes if they do */
                    for (ptrdiff_t i = 0; i < m; i++, mm += ld) {
                        if (ahead && i0 + MCS_SUB + i < n) {
                            const double *next = values + MCS_ROW(xrow, i0 + MCS_SUB + i) * w;
                            __builtin_prefetch(next + j0);
                            __builtin_prefetch(next + w - 1);
                        }
                        double s[8];
                        for (int q = 0; q < 8; q++) s[q] = q < nj ? x[i][j0 + q] : 0.0;
                        if (nj > 4) {
                            MCS_BLOCK8_FMA(s, mm);
                        } else {
                            mcs_v8 p8_;
                            mcs_v4 p4_;
                            MCS_LOAD8(p8_, mm);
                            MCS_LOAD(p4_, mm + 8);
                            MCS_FMA_LANE(0, s[0], p8_, p4_); MCS_FMA_LANE(1, s[1], p8_, p4_);
                            MCS_FMA_LANE(2, s[2], p8_, p4_); MCS_FMA_LANE(3, s[3], p8_, p4_);
                        }
                    }
                }
                double *g = G + j0 * ld + MCS_TILE * t;
                MCS_ADD_TILE8(g, 0, MCS_TILE);
                if (nj > 1) MCS_ADD_TILE8(g + ld, 1, MCS_TILE);
                if (nj > 2) MCS_ADD_TILE8(g + 2 * ld, 2, MCS_TILE);
                if (nj > 3) MCS_ADD_TILE8(g + 3 * ld, 3, MCS_TILE);
                if (nj > 4) MCS_ADD_TILE8(g + 4 * ld, 4, MCS_TILE);
                if (nj > 5) MCS_ADD_TILE8(g + 5 * ld, 5, MCS_TILE);
                if (nj > 6) MCS_ADD_TILE8(g + 6 * ld, 6, MCS_TILE);
                if (nj > 7) MCS_ADD_TILE8(g + 7 * ld, 7, MCS_TILE);
            }
        }
    }
}
#endif

static void mcs_group_scores_any(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                                 const ptrdiff_t *orow, ptrdiff_t n, const double *Vp,
                                 ptrdiff_t n_tiles, double *out, ptrdiff_t r) {
#if MCS_SIMD_X86
    if (mcs_simd_v4()) {
        mcs_group_scores_v4(values, w, xrow, orow, n, Vp, n_tiles, out, r);
        return;
    }
#endif
    mcs_group_scores(values, w, xrow, orow, n, Vp, n_tiles, out, r);
}

/* The _v4 gradient reads each row in ceil(w / 8) passes, one cache line each: on
 * rows scattered over more than MCS_V4_GRAD_SPAN rows of values (beyond the caches
 * and the TLB's reach), the AVX2 loop, which reads a row once, is faster (same bits). */
#define MCS_V4_GRAD_SPAN 16384
static void mcs_group_grad_any(const double *values, ptrdiff_t w, const ptrdiff_t *xrow,
                               ptrdiff_t n, const double *Mp, ptrdiff_t n_tiles, double *G,
                               double *XT, ptrdiff_t span) {
#if MCS_SIMD_X86
    if (mcs_simd_v4() && (xrow == NULL || span <= MCS_V4_GRAD_SPAN)) {
        mcs_group_grad_v4(values, w, xrow, n, Mp, n_tiles, G);
        return;
    }
#endif
    mcs_group_grad(values, w, xrow, n, Mp, n_tiles, G, XT);
}
