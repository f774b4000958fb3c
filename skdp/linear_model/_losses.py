"""Margin losses for linear classifiers, with the constants privacy proofs use.

Each loss is a function of the margin ``z = y <x, theta>`` with ``y`` in
``{-1, +1}``. For rows with ``||x|| <= data_norm`` the loss, as a function of
``theta``, is ``lipschitz(data_norm)``-Lipschitz and
``smoothness(data_norm)``-smooth: the chain rule multiplies the margin
derivative bounds by ``||x||`` and ``||x||^2``. The smoothness constant grows
with the *square* of the data norm (an earlier implementation scaled it
linearly, under-stating the Hessian term of objective perturbation).
"""

import numpy as np
from scipy.special import expit

from skdp.utils._validation import check_option, check_real

__all__ = ["HuberSVMLoss", "LogisticLoss", "get_loss"]


class LogisticLoss:
    """Logistic loss ``l(z) = ln(1 + exp(-z))``.

    ``|l'(z)| <= 1`` and ``0 < l''(z) <= 1/4``, so on rows of norm at most
    ``data_norm`` it is ``data_norm``-Lipschitz and ``data_norm^2 / 4``-smooth
    (Thakkar (2019), Sec. 4.4; Chaudhuri et al. 2011, Sec. 3.4.1).
    """

    name = "logistic"

    def value(self, z):
        """Loss at margins ``z``."""
        return np.logaddexp(0.0, -z)

    def derivative(self, z):
        """First derivative with respect to the margin."""
        return -expit(-z)

    def second_derivative(self, z):
        """Second derivative with respect to the margin."""
        p = expit(z)
        return p * (1.0 - p)

    def lipschitz(self, data_norm):
        """L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""
        return float(data_norm)

    def smoothness(self, data_norm):
        """Smoothness constant ``beta = data_norm^2 / 4``."""
        return float(data_norm) ** 2 / 4.0

    #: Rank of one row's Hessian ``l''(z) x x^T``, and dimension of the span of
    #: its gradients ``l'(z) x`` (Thakkar (2019), Lemma 4.3.2 uses twice this).
    row_hessian_rank = 1

    def hessian_trace_bound(self, data_norm):
        """Bound on the trace of one row's Hessian ``l''(z) x x^T``: the smoothness constant."""
        return self.smoothness(data_norm)

    def __repr__(self):
        return "LogisticLoss()"


class HuberSVMLoss:
    """Huber SVM loss, a smooth hinge of width ``h`` (Thakkar (2019), Sec. 4.4.6).

    ``l(z) = 1 - z`` if ``1 - z > h``; ``0`` if ``1 - z < -h``; otherwise
    ``(1 - z)^2 / (4h) + (1 - z)/2 + h/4`` (Bassily, Smith and Thakurta 2014).
    ``|l'(z)| <= 1`` and ``0 <= l''(z) <= 1/(2h)``, so on rows of norm at most
    ``data_norm`` it is ``data_norm``-Lipschitz and ``data_norm^2 / (2h)``-smooth.

    Parameters
    ----------
    h : float, default=0.1
        Half-width of the quadratic zone around the hinge, > 0.
    """

    name = "huber"

    def __init__(self, h=0.1):
        self.h = check_real(h, "huber_h", low=0.0, low_inclusive=False)

    def value(self, z):
        """Loss at margins ``z``."""
        u = 1.0 - np.asarray(z, dtype=float)
        h = self.h
        mid = u**2 / (4.0 * h) + u / 2.0 + h / 4.0
        return np.where(u > h, u, np.where(u < -h, 0.0, mid))

    def derivative(self, z):
        """First derivative with respect to the margin."""
        u = 1.0 - np.asarray(z, dtype=float)
        h = self.h
        return np.where(u > h, -1.0, np.where(u < -h, 0.0, -u / (2.0 * h) - 0.5))

    def second_derivative(self, z):
        """Second derivative with respect to the margin (zero outside the quadratic zone)."""
        u = 1.0 - np.asarray(z, dtype=float)
        return np.where(np.abs(u) <= self.h, 1.0 / (2.0 * self.h), 0.0)

    def lipschitz(self, data_norm):
        """L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""
        return float(data_norm)

    def smoothness(self, data_norm):
        """Smoothness constant ``beta = data_norm^2 / (2 h)``."""
        return float(data_norm) ** 2 / (2.0 * self.h)

    #: Rank of one row's Hessian ``l''(z) x x^T``, and dimension of the span of
    #: its gradients ``l'(z) x`` (Thakkar (2019), Lemma 4.3.2 uses twice this).
    row_hessian_rank = 1

    def hessian_trace_bound(self, data_norm):
        """Bound on the trace of one row's Hessian ``l''(z) x x^T``: the smoothness constant."""
        return self.smoothness(data_norm)

    def __repr__(self):
        return f"HuberSVMLoss(h={self.h!r})"


def get_loss(loss, huber_h=0.1):
    """Return the loss object named ``loss`` (``'logistic'`` or ``'huber'``).

    Parameters
    ----------
    loss : {"logistic", "huber"}
        Loss name.
    huber_h : float, default=0.1
        Width of the Huber SVM loss.

    Returns
    -------
    loss : LogisticLoss or HuberSVMLoss
    """
    check_option(loss, "loss", ("logistic", "huber"))
    return LogisticLoss() if loss == "logistic" else HuberSVMLoss(huber_h)
