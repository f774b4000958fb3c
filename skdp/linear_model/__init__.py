"""Private linear models and the losses they share."""

from skdp.linear_model._amp import DPLogisticRegressionAMP
from skdp.linear_model._dpsgd import DPSGDClassifier
from skdp.linear_model._frank_wolfe import PrivateFrankWolfeClassifier
from skdp.linear_model._losses import HuberSVMLoss, LogisticLoss
from skdp.linear_model._multinomial import MultinomialLoss
from skdp.linear_model._permutation_sgd import PermutationSGDClassifier
from skdp.linear_model._regression import DPHuberRegressor, DPLinearRegression
from skdp.linear_model._perturbation import (
    ObjectivePerturbationClassifier,
    OutputPerturbationClassifier,
)

__all__ = [
    "DPLogisticRegressionAMP",
    "DPHuberRegressor",
    "DPLinearRegression",
    "DPSGDClassifier",
    "HuberSVMLoss",
    "LogisticLoss",
    "MultinomialLoss",
    "ObjectivePerturbationClassifier",
    "OutputPerturbationClassifier",
    "PermutationSGDClassifier",
    "PrivateFrankWolfeClassifier",
]
