"""Shared pieces of the kernel-method privacy audits (test helpers, not part of skdp)."""

import warnings

import numpy as np

from skdp.testing import audit_epsilon

# Runs per dataset: 1000 held out + 500 to choose the event (1500 fits per dataset).
AUDIT = dict(n_runs=1000, n_select=500, random_state=0)


def erm_pair(n, at=0.0):
    """Replace-one pair for the certified kernel ERM: ``n`` rows at ``at``, one label flipped.

    With the Huber loss (width 0.5) and ``alpha n >= 4`` every margin
    ``y_i f(at)`` stays in the loss's linear zone (``|f(at)| <= 2 / (alpha n) <= 0.5``),
    so the minimizer is ``w* = (sum_i y_i / (alpha n)) phi(at)``. Flipping one
    label moves ``sum_i y_i`` by 2: ``||w*(D) - w*(D')||_H = 2 kappa / (alpha n)``,
    the sensitivity bound of seed 000 (Sec. 4, eq. 2) / seed 002 (Cor. 1), and
    the prediction at ``at`` moves by ``kappa`` times that (RBF kernel: ``kappa = 1``).
    """
    X = np.full((n, 1), float(at))
    y0 = (np.arange(n) < n // 2).astype(int)
    y1 = y0.copy()
    y1[n // 2] = 1
    return (X, y0), (X, y1)


def check_audit(mechanism, dataset_0, dataset_1, epsilon, monkeypatch, module, name, *,
                delta=0.0):
    """Audit the calibrated mechanism, then a copy whose noise scale ``module.name`` is divided by 4.

    Asserts that the calibrated lower bound stays <= ``epsilon`` and that the
    under-noised one exceeds it; returns both bounds.
    """
    def bound():
        with warnings.catch_warnings():
            # The audits' label sets are public; the label-set warning of
            # classes=None is the estimators' own tests' concern.
            warnings.filterwarnings("ignore", message="classes=None")
            return audit_epsilon(mechanism, dataset_0, dataset_1, delta=delta,
                                 **AUDIT).epsilon_lower_bound

    honest = bound()
    assert honest <= epsilon
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: real(*a, **k) / 4.0)
    caught = bound()
    assert caught > epsilon
    return honest, caught
