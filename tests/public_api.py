"""The public estimator classes, shared by the tests that must cover them all."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

import mcsparse


def public_estimator_classes():
    """BaseEstimator subclasses in ``__all__`` of mcsparse and its public subpackages."""
    modules = [mcsparse] + [
        importlib.import_module(f"mcsparse.{info.name}")
        for info in pkgutil.iter_modules(mcsparse.__path__)
        if info.ispkg and not info.name.startswith("_")
    ]
    found = set()
    for module in modules:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found.add(obj)
    return sorted(found, key=lambda cls: cls.__name__)
