# The run-time choice of the C kernels' AVX-512 loops (_simd.h, next to this
# file): mcs_simd_v4() says whether they run; mcs_simd_switch(enable) switches
# them off (0) or on again (1), or only asks (-1), for the tests and benchmarks.
# Each module that cimports these holds its own switch. MCS_PREFETCH(p) asks for
# the cache line at p.
cdef extern from "_simd.h":
    int mcs_simd_v4() noexcept nogil
    int mcs_simd_switch(int enable) noexcept nogil
    void MCS_PREFETCH(const void* p) noexcept nogil
