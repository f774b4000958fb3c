"""Private linear models and the losses they share."""

from skdp.linear_model._amp import DPLogisticRegressionAMP
from skdp.linear_model._losses import HuberSVMLoss, LogisticLoss
from skdp.linear_model._multinomial import MultinomialLoss

__all__ = [
    "DPLogisticRegressionAMP",
    "HuberSVMLoss",
    "LogisticLoss",
    "MultinomialLoss",
]
