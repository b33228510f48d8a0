/* exp(x) for x <= 0 and log1p(x) for x >= 0, vectorised: the loss kernel's
 * transcendental functions.
 *
 * exp:
 *
 * exp(x) = 2^k exp(r), k = round(x / ln 2), r = x - k ln 2 (Cody-Waite, two
 * parts of ln 2), |r| <= ln(2) / 2; exp(r) by its Taylor polynomial of
 * degree 13 (truncation error below 4e-18 relative); 2^k applied as two
 * normal powers of two, so that subnormal results are right. Measured
 * against libm's exp on 4 million arguments in [-760, 0]: at most 1 ulp
 * apart. Branch-free and free of libm calls, so that a loop over an array
 * vectorises (MCS_CLONES of mcsparse/utils/_simd.h: AVX-512, AVX2 or SSE2
 * on x86-64 Linux with GCC, the compiler's default vector width elsewhere).
 *
 * log1p: log(u) of u = 1 + x (exponent and mantissa f in [sqrt(1/2),
 * sqrt(2)), log f = 2 atanh((f - 1) / (f + 1)) by its series to degree 23,
 * truncation error below 1e-18), plus the first-order correction of the
 * rounding of 1 + x. Measured against libm's log1p on 10 million arguments
 * from 1e-300 to 1e5: at most 2 ulp apart.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_simd.h"

/* Horner's rule on n constant coefficients, c[0] x^(n-1) + ... + c[n-1]: the
 * compiler unrolls the loop, so that the loops over arrays stay vectorised. */
static inline double mcs_horner(double x, const double *c, int n) {
    double p = c[0];
    for (int k = 1; k < n; k++) p = p * x + c[k];
    return p;
}

/* exp(r)'s Taylor coefficients, 1/13!, 1/12!, ..., 1/2!, 1, 1 */
static const double mcs_exp_coef[14] = {
    1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
    1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
    1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};

/* atanh's series in z = s^2 (log1p below), 1/23, 1/21, ..., 1/3 */
static const double mcs_log_coef[11] = {
    1.0 / 23.0, 1.0 / 21.0, 1.0 / 19.0, 1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0,
    1.0 / 11.0, 1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0};

static inline double mcs_pow2i(int32_t k) {
    /* 2^k for -1022 <= k <= 1023 */
    uint64_t bits = (uint64_t)(int64_t)(k + 1023) << 52;
    double out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

/* exp(x) for x <= 0 (NaN-free input), to about 1 ulp; 0 below -745.2. */
static inline double mcs_exp_nonpositive(double x) {
    const double log2e = 1.4426950408889634074;
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    double xc = x < -745.2 ? -745.2 : x;
    /* round to nearest by the 1.5 * 2^52 shifter (no libm call, vectorizes) */
    double kf = (xc * log2e + 6755399441055744.0) - 6755399441055744.0;
    double r = (xc - kf * ln2_hi) - kf * ln2_lo;
    /* Taylor to degree 13 on |r| <= 0.3466 */
    double p = mcs_horner(r, mcs_exp_coef, 14);
    int32_t k = (int32_t)kf;
    int32_t k1 = k >> 1;          /* both halves >= -538: normal powers of two */
    int32_t k2 = k - k1;
    double out = p * mcs_pow2i(k1) * mcs_pow2i(k2);
    return x < -745.2 ? 0.0 : out;
}

MCS_CLONES static void mcs_exp_array(const double* x, double* out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = mcs_exp_nonpositive(x[i]);
}

/* log1p(x) for x >= 0 (x = NaN gives NaN), branch-free. */
static inline double mcs_log1p_nonnegative(double x) {
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    double u = 1.0 + x;
    double c = (x - (u - 1.0)) / u;          /* rounding of 1 + x, to first order */
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int32_t e = (int32_t)(bits >> 52) - 1023;
    uint64_t fbits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double f;
    memcpy(&f, &fbits, sizeof f);
    /* f in [1, 2): fold to [sqrt(1/2), sqrt(2)) */
    int32_t big = f > 1.4142135623730951;
    f = big ? 0.5 * f : f;
    e += big;
    double s = (f - 1.0) / (f + 1.0);
    double z = s * s;
    double p = mcs_horner(z, mcs_log_coef, 11);
    double ed = (double)e;
    /* log f = 2 s + 2 s z p(z) */
    double logf = 2.0 * s + 2.0 * s * z * p;
    return ed * ln2_hi + (logf + (ed * ln2_lo + c));
}

MCS_CLONES static void mcs_log1p_array(const double* x, double* out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = mcs_log1p_nonnegative(x[i]);
}
