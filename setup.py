"""Build the Cython modules of mcsparse (all metadata lives in pyproject.toml).

Set ``MCSPARSE_CYTHON_DEBUG=1`` to build with bounds, wraparound and
initialisation checks switched on (slower, for tests of the compiled code).
"""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("MCSPARSE_CYTHON_DEBUG", "0") not in ("", "0")

# One list of Cython modules: "package.module" -> sources are "package/module.pyx".
CYTHON_MODULES = [
    "mcsparse.loss._multiclass_logistic_fast",
    "mcsparse.loss._softmax_fast",
    "mcsparse.loss._numpy_fast",
    "mcsparse.features._stumps_fast",
    "mcsparse.features._conv_max_fast",
    "mcsparse.features._anchors_fast",
    "mcsparse.solvers._mkl_fast",
    "mcsparse.solvers._columns_fast",
    "mcsparse.solvers._refit_fast",
]

directives = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

# Every kernel header includes mcsparse/utils/_simd.h (the instruction-set
# dispatch); Cython only tracks the headers a .pyx names, so the shared one is
# put on the include path and listed as a dependency of every extension.
SIMD_DIR = os.path.join("mcsparse", "utils")

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[np.get_include(), SIMD_DIR],
        depends=[os.path.join(SIMD_DIR, "_simd.h")],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
    )
    for name in CYTHON_MODULES
]

# The debug build keeps its generated C and its objects apart (build/debug):
# cythonize and build_ext only compare timestamps, so sharing them would let a
# debug build reuse the optimised C files and extensions, or the reverse.
setup(
    ext_modules=cythonize(extensions, compiler_directives=directives,
                          build_dir="build/debug/cython" if DEBUG else None),
    options={"build": {"build_base": "build/debug"}} if DEBUG else {},
)
