"""Sphinx configuration of the mcsparse documentation.

Examples run in quick mode unless ``MCSPARSE_FULL=1`` is set (see
``doc/README.rst``). Build with ``make -C doc html`` (warnings are errors).
"""

import os
import sys
import warnings

import mcsparse

project = "mcsparse"
author = "mcsparse developers"
copyright = "2026, mcsparse developers"
release = mcsparse.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 copied into _static/mathjax: the math renders offline and
    # in the browser test, which has no network.
    "sphinx-mathjax-offline",
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "README.rst", "auto_examples/*.ipynb",
                    "auto_examples/**/*.ipynb", "sg_execution_times.rst"]
root_doc = "index"

autosummary_generate = True
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = f"mcsparse {release}"
html_theme_options = {
    "github_url": None,
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # The first five entries of the index's toctree (getting started, user
    # guide, examples, results, API) in the navbar; the rest under "More".
    "header_links_before_dropdown": 5,
}
# No navigation column on the top-level pages: they have no subpages, and the
# theme's primary sidebar would be an empty column beside them. The user
# guide, the gallery and the API pages keep theirs.
html_sidebars = {"*": []}
html_static_path = ["_static"]
# Code blocks wrap, tables and display math scroll inside their column, and a
# display formula wider than the column is scaled down to fit (doc/_static).
html_css_files = ["mcsparse.css"]
html_js_files = ["mcsparse.js"]

sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "doc_module": ("mcsparse",),
    "backreferences_dir": "gen_modules/backreferences",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "show_memory": False,
}

# Quiet matplotlib's non-interactive backend notice inside the gallery.
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")
# A default that does not converge fails the build: the examples that fit the
# paper's bare loss (alpha=0) catch its ConvergenceWarning and say so.
# (tests/test_examples.py runs the same quick modes under pytest.)
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

warnings.filterwarnings("error", category=ConvergenceWarning)
os.environ.setdefault("MPLBACKEND", "agg")
sys.path.insert(0, os.path.abspath("."))

# The benchmark-history page (user_guide/benchmark_history.rst): figures of the
# asv results committed in asv_benchmarks/results, drawn at every build into
# doc/generated/benchmark_history (no network).
from benchmark_history import write_history  # noqa: E402

write_history(os.path.join(os.path.dirname(__file__), "..", "asv_benchmarks", "results"),
              os.path.join(os.path.dirname(__file__), "generated", "benchmark_history"))

# The comparison page's time-to-error curves of ShareBoost and LightGBM, drawn
# from the committed record of asv_benchmarks/stumps_vs_lightgbm.py.
from record_figures import write_tradeoff  # noqa: E402

write_tradeoff(os.path.join(os.path.dirname(__file__), "..", "asv_benchmarks", "records",
                            "stumps_vs_lightgbm.json"),
               os.path.join(os.path.dirname(__file__), "generated", "records",
                            "stumps_vs_lightgbm.png"))
