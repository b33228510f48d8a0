"""The versions mcsparse runs with and the BLAS it calls, as threadpoolctl sees them.

A NumPy or SciPy wheel brings its own OpenBLAS, whose speed depends on
whether it recognises the CPU: an old OpenBLAS runs generic kernels
("Prescott") on a CPU it does not know, and a fit can take twice the time.
``mcsparse --version --verbose``, the benchmark scripts and the records of
full runs (:func:`mcsparse.utils.records.save_full_run`) show these
libraries, so that a slow kernel is visible.
"""

import platform
import sys

#: What is kept of each BLAS library that threadpoolctl reports.
BLAS_KEYS = ("internal_api", "version", "architecture", "num_threads", "prefix")


def blas_info():
    """The BLAS libraries loaded in this process, as threadpoolctl reports them.

    NumPy, SciPy's linear algebra and scikit-learn are imported first, so that
    the libraries they load are listed.

    Returns
    -------
    libraries : list of dict
        One dict per BLAS library, in threadpoolctl's order, with the keys of
        :data:`BLAS_KEYS`: ``internal_api`` (str, ``"openblas"``, ``"mkl"``,
        ``"blis"``, ...), ``version`` (str or None), ``architecture`` (str or
        None: the kernels in use, e.g. ``"SkylakeX"`` or ``"Haswell"``;
        OpenBLAS and BLIS only), ``num_threads`` (int) and ``prefix`` (str,
        the library's file name prefix, e.g. ``"libscipy_openblas"``). Empty
        when threadpoolctl finds no BLAS.
    """
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import sklearn  # noqa: F401
    from threadpoolctl import threadpool_info

    return [{key: info.get(key) for key in BLAS_KEYS}
            for info in threadpool_info() if info.get("user_api") == "blas"]


def format_blas(libraries=None):
    """One line naming each BLAS library: API, version, kernels and threads.

    Parameters
    ----------
    libraries : list of dict, default=None
        As returned by :func:`blas_info`; None calls it.

    Returns
    -------
    line : str
        For example ``"openblas 0.3.31 (SkylakeX, 2 threads, libscipy_openblas)"``,
        the libraries separated by ``"; "``, or ``"none found"``.
    """
    libraries = blas_info() if libraries is None else libraries
    if not libraries:
        return "none found"
    return "; ".join(
        f"{lib['internal_api']} {lib['version']} ({lib['architecture']}, "
        f"{lib['num_threads']} threads, {lib['prefix']})" for lib in libraries)


def system_info():
    """The versions of mcsparse, Python and the main dependencies, and the BLAS in use.

    Returns
    -------
    info : dict
        ``"mcsparse"``, ``"python"``, ``"platform"``, ``"numpy"``,
        ``"scipy"``, ``"scikit-learn"``, ``"joblib"`` and ``"threadpoolctl"``
        (str each) and ``"blas"`` (list of dict, :func:`blas_info`).
    """
    import joblib
    import numpy
    import scipy
    import sklearn
    import threadpoolctl

    from .. import __version__

    return {
        "mcsparse": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "joblib": joblib.__version__,
        "threadpoolctl": threadpoolctl.__version__,
        "blas": blas_info(),
    }


def format_system_info(info=None):
    """The lines ``mcsparse --version --verbose`` prints after the version.

    Parameters
    ----------
    info : dict, default=None
        As returned by :func:`system_info`; None calls it.

    Returns
    -------
    text : str
        ``mcsparse <version>`` (the line of ``mcsparse --version``), one
        ``name: version`` line per other entry, then one line per BLAS library
        (``blas: openblas 0.3.31 (SkylakeX, 2 threads, libscipy_openblas)``),
        or ``blas: none found``.
    """
    info = system_info() if info is None else info
    lines = [f"mcsparse {info['mcsparse']}"]
    lines += [f"{name}: {value}" for name, value in info.items()
              if name not in ("mcsparse", "blas")]
    lines += [f"blas: {format_blas([lib])}" for lib in info["blas"]] or ["blas: none found"]
    return "\n".join(lines)
