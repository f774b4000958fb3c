"""Find every public estimator skdp ships (for the common tests and the docs)."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]


def all_estimators():
    """List the public estimator classes of skdp.

    Walks every public subpackage and collects the ``BaseEstimator``
    subclasses named in its ``__all__``.

    Returns
    -------
    estimators : list of (str, type)
        ``(name, class)`` pairs sorted by name, each class listed once.
    """
    import skdp

    found = {}
    for info in pkgutil.iter_modules(skdp.__path__):
        if info.name.startswith("_") or info.name in {"benchmarks", "testing", "tests"}:
            continue
        module = importlib.import_module(f"skdp.{info.name}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator)
                    and not inspect.isabstract(obj) and not name.startswith("_")):
                found[name] = obj
    return sorted(found.items())
