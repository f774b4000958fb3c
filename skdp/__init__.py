"""skdp: differentially private machine learning with scikit-learn's conventions.

Every estimator takes a privacy budget (``epsilon``, ``delta``), fits like its
scikit-learn counterpart, and records what it spent in ``privacy_spent_``.
"""

__version__ = "0.1.0.dev0"

import warnings as _warnings

# scikit-learn's HTML repr parses docstrings with its bundled numpydoc, which
# warns on every notebook display about the "Privacy" section all skdp
# estimators carry. Only that message is silenced.
_warnings.filterwarnings("ignore", message="Unknown section Privacy", category=UserWarning)

from skdp.accounting import BudgetAccountant, PrivacyBudget
from skdp.exceptions import BudgetExceededError, PrivacyLeakWarning, WeakPrivacyWarning

__all__ = [
    "BudgetAccountant",
    "BudgetExceededError",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "WeakPrivacyWarning",
    "__version__",
]
