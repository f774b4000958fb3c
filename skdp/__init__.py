"""skdp: differentially private machine learning with scikit-learn's conventions.

Every estimator takes a privacy budget (``epsilon``, ``delta``), fits like its
scikit-learn counterpart, and records what it spent in ``privacy_spent_``.
"""

__version__ = "0.1.0.dev0"

from skdp.accounting import BudgetAccountant, PrivacyBudget
from skdp.exceptions import BudgetExceededError, PrivacyLeakWarning

__all__ = [
    "BudgetAccountant",
    "BudgetExceededError",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "__version__",
]
