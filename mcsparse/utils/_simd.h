/* The one place where the C kernels choose their instruction set: included by
 * loss/_fast_exp.h, features/_anchors_kernel.h, features/_conv_dot.h,
 * solvers/_groups_kernel.h and solvers/_mkl_step.h (setup.py puts this folder
 * on the include path of every extension).
 *
 * On x86-64 Linux with GCC (MCS_SIMD_X86 is 1) a kernel is compiled several
 * times and the copy for the CPU it runs on is chosen when the module loads
 * (GCC's target_clones):
 *
 *   MCS_CLONES      AVX-512F, AVX2 and the baseline (SSE2): loops that the
 *                   compiler vectorises to the machine's width;
 *   MCS_CLONES_FMA  x86-64-v3 (AVX2 with FMA) and the baseline: loops written
 *                   for vectors of four doubles;
 *   MCS_TARGET_V4   x86-64-v4 (AVX-512F, VL, DQ and BW) only: a loop that the
 *                   caller runs when mcs_simd_v4() says so.
 *
 * Elsewhere the three are empty (one copy, for the compiler's default target)
 * and the x86-64-v4 loops are not compiled (#if MCS_SIMD_X86 around them).
 *
 * MCS_EXACT_BEGIN and MCS_EXACT_END enclose functions whose products must not
 * be fused into their additions (fp-contract off), so that every clone gives
 * the same numbers. MCS_PREFETCH(p) asks for the cache line at p where the
 * compiler can.
 *
 * The x86-64-v4 loops can be switched off (mcs_simd_switch) so that the tests
 * run both paths on one machine. The switch is static: each extension module
 * holds its own, set through its Python function (_anchor_avx512 in
 * features/_anchors_fast.pyx, _groups_avx512 in solvers/_objective_fast.pyx).
 */
#ifndef MCS_SIMD_H
#define MCS_SIMD_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MCS_SIMD_X86 1
#define MCS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define MCS_CLONES_FMA __attribute__((target_clones("arch=x86-64-v3", "default")))
#define MCS_TARGET_V4 __attribute__((target("arch=x86-64-v4")))
#else
#define MCS_SIMD_X86 0
#define MCS_CLONES
#define MCS_CLONES_FMA
#define MCS_TARGET_V4
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define MCS_EXACT_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"fp-contract=off\")")
#define MCS_EXACT_END _Pragma("GCC pop_options")
#else
#define MCS_EXACT_BEGIN
#define MCS_EXACT_END
#endif

/* Asks for the cache line at p (a no-op where the compiler has no prefetch). */
#if defined(__GNUC__) || defined(__clang__)
#define MCS_PREFETCH(p) __builtin_prefetch(p)
#else
#define MCS_PREFETCH(p) ((void)0)
#endif

/* 1 switches the x86-64-v4 loops off (tests and benchmarks). */
static int mcs_simd_v4_off = 0;

/* Whether the x86-64-v4 loops run: the CPU has AVX-512 F, VL, DQ and BW, and
 * they are not switched off. */
static inline int mcs_simd_v4(void) {
#if MCS_SIMD_X86
    static int have = -1; /* asked once; every thread writes the same answer */
    if (have < 0)
        have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    return have && !mcs_simd_v4_off;
#else
    return 0;
#endif
}

/* For the tests and benchmarks: enable < 0 only asks, 0 switches the
 * x86-64-v4 loops off, 1 on again (where the CPU has them); returns
 * mcs_simd_v4(). Not thread-safe while kernels run. */
static inline int mcs_simd_switch(int enable) {
    if (enable >= 0) mcs_simd_v4_off = !enable;
    return mcs_simd_v4();
}

#endif /* MCS_SIMD_H */
