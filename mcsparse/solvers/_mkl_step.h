/* The inner loop of a mirror-descent step of the MKL solver (_mkl_fast.pyx):
 * two class rows of one kernel's gram_dual move by plus and minus a scaled
 * kernel row,
 *
 *     up[j] += scale * k_row[j],   down[j] -= scale * k_row[j],   j < n.
 *
 * Vectorised for the machine it runs on (MCS_CLONES of mcsparse/utils/_simd.h:
 * AVX-512, AVX2 or SSE2 on x86-64 Linux with GCC, the compiler's default
 * vector width elsewhere). The product is not fused into the additions
 * (MCS_EXACT_BEGIN), so every clone gives the same numbers
 * as the plain loop and as the NumPy twin's order of operations.
 */
#include <stddef.h>

#include "_simd.h"

MCS_EXACT_BEGIN

MCS_CLONES
static void mcs_move_rows_f32(const float *k_row, double scale, double *up, double *down,
                              ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        double kij = scale * (double)k_row[j];
        up[j] += kij;
        down[j] -= kij;
    }
}

MCS_CLONES
static void mcs_move_rows_f64(const double *k_row, double scale, double *up, double *down,
                              ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        double kij = scale * k_row[j];
        up[j] += kij;
        down[j] -= kij;
    }
}

MCS_EXACT_END
