"""The privacy-utility report: ``python -m skdp.benchmarks``.

Scenarios live in ``skdp/benchmarks/scenarios/`` (one module per estimator
family) and register themselves with :func:`register_scenario`.
"""

from skdp.benchmarks._harness import (
    Dataset,
    evaluate_baseline,
    evaluate_private,
    make_row,
    progress,
    timed_fit,
    versus,
)
from skdp.benchmarks._registry import Scenario, get_scenarios, register_scenario
from skdp.benchmarks._report import format_table, write_report

__all__ = [
    "Dataset",
    "Scenario",
    "evaluate_baseline",
    "evaluate_private",
    "format_table",
    "get_scenarios",
    "make_row",
    "progress",
    "register_scenario",
    "timed_fit",
    "versus",
    "write_report",
]
