"""Private hyperparameter selection."""

from skdp.model_selection._parameter_tuning import PrivateParameterSelector

__all__ = ["PrivateParameterSelector"]
