/* The template response at one position (_conv_max_fast.pyx,
 * conv_max_pairs_chunk): the dot product of a template and an image patch,
 * both float64, with eight partial sums
 *
 *     acc[j] += x[e + j] * y[e + j],   e = 0, 8, 16, ...,   then the rest,
 *
 * summed pairwise at the end. The eight sums are one vector register on
 * AVX-512, two on AVX2 (MCS_CLONES of mcsparse/utils/_simd.h). Products are
 * not fused into the additions (MCS_EXACT_BEGIN), so every clone gives the
 * same number.
 */
#include <stddef.h>

#include "_simd.h"

MCS_EXACT_BEGIN

MCS_CLONES
static double mcs_dot(const double *x, const double *y, ptrdiff_t n) {
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    ptrdiff_t e = 0;
    for (; e + 8 <= n; e += 8) {
        for (int j = 0; j < 8; j++) {
            acc[j] += x[e + j] * y[e + j];
        }
    }
    for (int j = 0; e < n; e++, j++) {
        acc[j] += x[e] * y[e];
    }
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

MCS_EXACT_END
