"""Private linear models and the losses they share."""

from skdp.linear_model._losses import HuberSVMLoss, LogisticLoss

__all__ = [
    "HuberSVMLoss",
    "LogisticLoss",
]
