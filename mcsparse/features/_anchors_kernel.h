/* The float32 screen's block product of the anchor scan (_anchors_fast.pyx), with
 * AVX-512 where the CPU has it:
 *
 *     acc[c * w + j] += sum_{k < m} residual[rows[k], c] * X1[rows[k], j]
 *
 * for c < r (classes) and j < w (columns), acc float64, X1 and residual float32.
 * The rows are read in place (no gather), MCS_ANCHOR_SUB at a time: their
 * residual rows are copied into a buffer padded with zeros to whole blocks of
 * five classes, and for each five classes and 64 columns (four 16-wide vectors,
 * the last ones masked) twenty float32 accumulators sum the rows' products by
 * FMA in row order; each such partial sum, of at most MCS_ANCHOR_SUB products,
 * is then added to acc in float64. The rows of the next MCS_ANCHOR_SUB are
 * prefetched while the first block runs. Where the CPU has no AVX-512, the
 * caller uses BLAS sgemm instead (mcs_simd_v4() of mcsparse/utils/_simd.h is 0).
 *
 * The error of each float32 partial sum is within gamma_{MCS_ANCHOR_SUB} times
 * the sum of its terms' magnitudes (Higham 2002, §3.1), inside the screen's
 * bound (which assumes blocks of BLOCK_ROWS >= MCS_ANCHOR_SUB rows).
 */
#include <stddef.h>
#include <stdint.h>

#include "_simd.h"

#define MCS_ANCHOR_SUB 64
#define MCS_ANCHOR_CB 5

#if MCS_SIMD_X86
#include <immintrin.h>

/* acc[c][q] += rb[c] * x[q] for c < 5, q < 4. */
#define MCS_ANCHOR_ROW(rb)                                                             \
    do {                                                                               \
        for (int c_ = 0; c_ < MCS_ANCHOR_CB; c_++) {                                   \
            const __m512 b_ = _mm512_set1_ps((rb)[c_]);                                \
            for (int q_ = 0; q_ < 4; q_++) a[c_][q_] = _mm512_fmadd_ps(b_, x[q_], a[c_][q_]); \
        }                                                                              \
    } while (0)

/* The block product above on m rows (rbuf: MCS_ANCHOR_SUB * rp floats, rp = r padded
 * to whole blocks of MCS_ANCHOR_CB). */
MCS_TARGET_V4
static void mcs_anchor_block_f32(const float *X1, ptrdiff_t w, const float *residual,
                                 ptrdiff_t r, const int32_t *rows, ptrdiff_t m, double *acc,
                                 float *rbuf) {
    const ptrdiff_t rp = (r + MCS_ANCHOR_CB - 1) / MCS_ANCHOR_CB * MCS_ANCHOR_CB;
    for (ptrdiff_t k0 = 0; k0 < m; k0 += MCS_ANCHOR_SUB) {
        const ptrdiff_t mk = m - k0 < MCS_ANCHOR_SUB ? m - k0 : MCS_ANCHOR_SUB;
        for (ptrdiff_t k = 0; k < mk; k++) {
            const float *res = residual + (ptrdiff_t)rows[k0 + k] * r;
            for (ptrdiff_t c = 0; c < rp; c++) rbuf[k * rp + c] = c < r ? res[c] : 0.0f;
        }
        for (ptrdiff_t c0 = 0; c0 < rp; c0 += MCS_ANCHOR_CB) {
            for (ptrdiff_t j0 = 0; j0 < w; j0 += 64) {
                __mmask16 mask[4];
                for (int q = 0; q < 4; q++) {
                    const ptrdiff_t left = w - j0 - 16 * q;
                    mask[q] = left >= 16 ? (__mmask16)0xFFFF
                              : left > 0 ? (__mmask16)((1u << left) - 1u) : (__mmask16)0;
                }
                const int ahead = c0 == 0 && j0 == 0;
                __m512 a[MCS_ANCHOR_CB][4];
                for (int c = 0; c < MCS_ANCHOR_CB; c++)
                    for (int q = 0; q < 4; q++) a[c][q] = _mm512_setzero_ps();
                for (ptrdiff_t k = 0; k < mk; k++) {
                    const float *xr = X1 + (ptrdiff_t)rows[k0 + k] * w + j0;
                    if (ahead && k0 + MCS_ANCHOR_SUB + k < m) {
                        const char *next = (const char *)(X1 + (ptrdiff_t)rows[k0 + MCS_ANCHOR_SUB + k] * w);
                        for (ptrdiff_t b = 0; b < w * (ptrdiff_t)sizeof(float); b += 64)
                            __builtin_prefetch(next + b, 0, 2);
                        __builtin_prefetch(residual + (ptrdiff_t)rows[k0 + MCS_ANCHOR_SUB + k] * r);
                    }
                    __m512 x[4];
                    for (int q = 0; q < 4; q++) x[q] = _mm512_maskz_loadu_ps(mask[q], xr + 16 * q);
                    MCS_ANCHOR_ROW(rbuf + k * rp + c0);
                }
                /* constant bounds, so that the accumulators stay in registers */
#pragma GCC unroll 5
                for (int c = 0; c < MCS_ANCHOR_CB; c++) {
#pragma GCC unroll 4
                    for (int q = 0; q < 4; q++) {
                        const __mmask16 mq = mask[q];
                        if (c0 + c >= r || !mq) continue;
                        double *d = acc + (c0 + c) * w + j0 + 16 * q;
                        const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(a[c][q]));
                        const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(
                            _mm512_extractf64x4_pd(_mm512_castps_pd(a[c][q]), 1)));
                        const __mmask8 mlo = (__mmask8)(mq & 0xFF), mhi = (__mmask8)(mq >> 8);
                        _mm512_mask_storeu_pd(d, mlo, _mm512_add_pd(_mm512_maskz_loadu_pd(mlo, d), lo));
                        _mm512_mask_storeu_pd(d + 8, mhi,
                                              _mm512_add_pd(_mm512_maskz_loadu_pd(mhi, d + 8), hi));
                    }
                }
            }
        }
    }
}
#else
static void mcs_anchor_block_f32(const float *X1, ptrdiff_t w, const float *residual,
                                 ptrdiff_t r, const int32_t *rows, ptrdiff_t m, double *acc,
                                 float *rbuf) {
    (void)X1; (void)w; (void)residual; (void)r; (void)rows; (void)m; (void)acc; (void)rbuf;
}
#endif
