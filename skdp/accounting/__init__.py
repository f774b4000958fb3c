"""Privacy budgets, composition, and the shared budget accountant."""

from skdp.accounting._accountant import BudgetAccountant, Spend
from skdp.accounting._budget import PrivacyBudget
from skdp.accounting._events import (
    EpsilonDeltaDpEvent,
    compose_events,
    event_from_json,
    event_to_json,
)
from skdp.accounting._ledger import BudgetLedger, LedgerUnavailableError, SQLiteLedger
from skdp.accounting._composition import (
    advanced_composition,
    basic_composition,
    dp_to_zcdp,
    gaussian_zcdp,
    zcdp_delta,
    zcdp_for_dp,
    zcdp_to_dp,
)
from skdp.accounting._subsampled import (
    calibrate_subsampled_gaussian,
    subsampled_gaussian_epsilon,
)

__all__ = [
    "BudgetAccountant",
    "BudgetLedger",
    "EpsilonDeltaDpEvent",
    "LedgerUnavailableError",
    "PrivacyBudget",
    "SQLiteLedger",
    "Spend",
    "advanced_composition",
    "basic_composition",
    "compose_events",
    "event_from_json",
    "event_to_json",
    "calibrate_subsampled_gaussian",
    "dp_to_zcdp",
    "gaussian_zcdp",
    "subsampled_gaussian_epsilon",
    "zcdp_delta",
    "zcdp_for_dp",
    "zcdp_to_dp",
]
