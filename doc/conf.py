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
}
html_static_path = []

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
