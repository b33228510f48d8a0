"""The code's shape, as doc/contributing.rst describes it: checked, not hoped for.

* Data flows one way, datasets -> features -> solvers -> estimators:
  ``mcsparse.features`` imports neither the solvers nor the estimators, and
  no subpackage imports ``mcsparse.estimators`` but the package itself.
* One implementation of the multiclass objective: the loss's Cython kernel
  is called from the loss objects and from the objective's fused pass only.
* No function of ``solvers/`` or ``estimators/`` has more than 100 lines of
  code (its docstring not counted): a function that needs a screen and a
  half to read wants splitting.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcsparse"


def _imports(path):
    """Modules ``path`` imports, as absolute names."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                names.append(".".join(base + ([node.module] if node.module else [])))
            else:
                names.append(node.module)
    return names


@pytest.mark.parametrize("subpackage, forbidden", [
    ("features", ("mcsparse.solvers", "mcsparse.estimators")),
    ("loss", ("mcsparse.solvers", "mcsparse.estimators", "mcsparse.features")),
    ("solvers", ("mcsparse.estimators",)),
    ("kernels", ("mcsparse.solvers", "mcsparse.estimators")),
    ("datasets", ("mcsparse.features", "mcsparse.solvers", "mcsparse.estimators")),
])
def test_data_flows_one_way(subpackage, forbidden):
    for path in sorted((PACKAGE / subpackage).glob("*.py")):
        bad = [name for name in _imports(path) if name and name.startswith(forbidden)]
        assert not bad, f"{path.name} imports {bad}"


def test_features_base_imports_no_family():
    """The protocol module knows no concrete family (resolve_features moved out)."""
    names = _imports(PACKAGE / "features" / "_base.py")
    assert not [n for n in names if n.startswith("mcsparse.features._") and
                not n.endswith("_base")], names


def test_one_implementation_of_the_objective():
    users = []
    for path in sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyx")):
        text = path.read_text()
        if "_multiclass_logistic_fast" in text and path.parent.name != "loss":
            users.append(path.relative_to(PACKAGE).as_posix())
    # the objective's fused pass (which cimports the row kernel) and no one else
    assert users == ["solvers/_columns_fast.pyx"], users
    # the copies there were before the objective layer
    for old in (r"class _Objective\b", r"class _Smooth\b", r"class _Scores\b",
                r"def penalty_value_grad\b"):
        hits = [p.name for p in PACKAGE.rglob("*.py") if re.search(old, p.read_text())]
        assert not hits, f"{old} in {hits}"


def _sources():
    """``(path relative to the package, text)`` of every Python and Cython source."""
    paths = sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyx"))
    return [(p.relative_to(PACKAGE).as_posix(), p.read_text()) for p in paths]


def test_one_implementation_of_the_softmax_row_hessian():
    """``diag(p) - p p^T`` is written once: ``RowKernel.hessian_factors``.

    The objective's Hessian products, the exact bordering's packed rows
    (``hessian_rows``) and the selection rules' Newton terms reach it through
    the loss object (``loss.hessian_product``, ``loss.hessian_rows``).
    """
    sources = _sources()
    definers = [name for name, text in sources
                if re.search(r"cdef void hessian_factors\(", text)]
    assert definers == ["loss/_multiclass_logistic_fast.pyx"], definers
    # its body, a = w p and b = p, appears nowhere else
    body = [name for name, text in sources if re.search(r"a\[c\] = w \* p\[c\]", text)]
    assert body == ["loss/_multiclass_logistic_fast.pyx"], body
    # the copies there were: the loss's einsum, the fused module's packed loop, the
    # Newton terms' einsums, the line search's second derivative, the NumPy twin
    for old in (r"P \* \(U - np\.einsum", r"pc - pc \* P\[", r"bnk,bnl->bkl",
                r"ph2 - ph \* ph", r"-P\[:, rows\] \* P\[:, cols\]",
                r"def hessian_rows\(const"):
        hits = [name for name, text in sources if re.search(old, text)]
        assert not hits, f"{old} in {hits}"
    texts = dict(sources)
    assert "self.loss.hessian_product(" in texts["solvers/_objective.py"]
    assert "self.loss.hessian_rows(" in texts["solvers/_objective.py"]
    assert "loss.hessian_product(" in texts["solvers/_selection.py"]


@pytest.mark.parametrize("subpackage", ["solvers", "estimators"])
def test_functions_fit_on_a_screen(subpackage):
    long = []
    for path in sorted((PACKAGE / subpackage).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if ast.get_docstring(node) is not None:
                    doc = node.body[0]
                    lines -= doc.end_lineno - doc.lineno + 1
                if lines > 100:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


#: Expressions that hold a candidate family in the solvers and the dask runner.
_FAMILY = re.compile(r"^(?:[\w.]+\.)?(?:features|family)_?$")


def _family_probes(path):
    """``hasattr``/``getattr`` calls on a family that look for a method or capability.

    Reading a fitted attribute (a name ending in ``_``, e.g. ``candidate_widths_``)
    or the ``n_jobs`` parameter is not a probe; looking for anything else is.
    """
    probes = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and len(node.args) >= 2):
            continue
        target, name = ast.unparse(node.args[0]), node.args[1]
        if not _FAMILY.match(target):
            continue
        attribute = name.value if isinstance(name, ast.Constant) else None
        if node.func.id == "hasattr" or attribute is None or not (
                attribute.endswith("_") or attribute == "n_jobs"):
            probes.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return probes


def test_no_probe_of_a_family_capability(tmp_path):
    """A family declares what it can do (its class, the type of its blocks); the
    solvers and the dask runner check ``isinstance``, never look for methods."""
    paths = sorted((PACKAGE / "solvers").glob("*.py")) + [PACKAGE / "features" / "_dask.py"]
    probes = [probe for path in paths for probe in _family_probes(path)]
    assert not probes, probes
    # the probes this replaced are found by the check
    old = ('if hasattr(self.features, "training_cuts"):\n'
           'scanner = getattr(self.family_, "_chunk_scanner", None)\n'
           'chunks = getattr(features, "row_chunks", None)\n')
    tmp = tmp_path / "_old_probes.py"
    tmp.write_text(old.replace(":\n", ":\n    pass\n"))
    assert len(_family_probes(tmp)) == 3
