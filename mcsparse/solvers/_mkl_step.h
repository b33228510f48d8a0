/* The inner loop of a mirror-descent step of the MKL solver (_mkl_fast.pyx):
 * two class rows of one kernel's gram_dual move by plus and minus a scaled
 * kernel row,
 *
 *     up[j] += scale * k_row[j],   down[j] -= scale * k_row[j],   j < n.
 *
 * Vectorised for the machine it runs on (AVX-512, AVX2 or SSE2 clones chosen
 * at run time on x86-64 Linux with GCC, as in mcsparse/loss/_fast_exp.h;
 * the compiler's default vector width elsewhere). The product is not fused
 * into the additions (fp-contract off), so every clone gives the same numbers
 * as the plain loop and as the NumPy twin's order of operations.
 */
#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MCS_STEP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MCS_STEP_CLONES
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

MCS_STEP_CLONES
static void mcs_move_rows_f32(const float *k_row, double scale, double *up, double *down,
                              ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        double kij = scale * (double)k_row[j];
        up[j] += kij;
        down[j] -= kij;
    }
}

MCS_STEP_CLONES
static void mcs_move_rows_f64(const double *k_row, double scale, double *up, double *down,
                              ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        double kij = scale * k_row[j];
        up[j] += kij;
        down[j] -= kij;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
