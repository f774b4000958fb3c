"""The registry of benchmark scenarios.

A scenario is a function ``run(quick, random_state) -> list[dict]`` returning
result rows (see :func:`skdp.benchmarks.make_row`). Each estimator family adds
its own module under ``skdp/benchmarks/scenarios/`` and registers there with
:func:`register_scenario`; the runner imports every module of that package.
"""

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["Scenario", "get_scenarios", "register_scenario"]

_SCENARIOS = {}


@dataclass(frozen=True)
class Scenario:
    """A named benchmark: what it measures and how to run it."""

    name: str
    description: str
    run: Callable
    in_quick: bool = True
    plot: Optional[Callable] = None


def register_scenario(name, description, *, in_quick=True, plot=None):
    """Decorator registering ``run(quick, random_state) -> rows`` as a scenario.

    Parameters
    ----------
    name : str
        Command-line name of the scenario.
    description : str
        One line shown by ``--list``.
    in_quick : bool, default=True
        Whether ``--quick`` runs it (in its quick mode) when no scenario is named.
    plot : callable or None, default=None
        ``plot(rows, path, title) -> path or None`` draws the scenario's own PNG;
        ``None`` draws the report's default figure (the metric against epsilon).

    Returns
    -------
    decorator : callable
    """
    def decorator(func):
        if name in _SCENARIOS and _SCENARIOS[name].run is not func:
            raise ValueError(f"scenario {name!r} is registered twice.")
        _SCENARIOS[name] = Scenario(name, description, func, in_quick, plot)
        return func
    return decorator


def get_scenarios():
    """Import every scenario module and return the registry, sorted by name.

    Returns
    -------
    scenarios : dict of str to Scenario
    """
    from skdp.benchmarks import scenarios

    for info in pkgutil.iter_modules(scenarios.__path__):
        importlib.import_module(f"{scenarios.__name__}.{info.name}")
    return dict(sorted(_SCENARIOS.items()))
