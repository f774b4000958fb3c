"""DPLinearRegression and DPHuberRegressor instances for scikit-learn's estimator checks."""

from skdp.linear_model import DPHuberRegressor, DPLinearRegression

# scikit-learn's checks fit 200 standardized rows (norms up to about 6) with
# standardized targets and require R^2 > 0.5 (check_regressors_train): a large
# epsilon and public bounds that cover the check's data. y_bounds=None (read from
# y, with a PrivacyLeakWarning) and the accuracy at epsilon = 1 are tested in
# tests/linear_model/test_regression.py.
_BOUNDS = dict(data_norm=8.0, y_bounds=(-5.0, 5.0))
INSTANCES = [
    DPLinearRegression(epsilon=1e4, **_BOUNDS, random_state=0),
    DPLinearRegression(epsilon=1e4, **_BOUNDS, method="adassp", random_state=0),
    DPHuberRegressor(epsilon=1e4, **_BOUNDS, learning_rate=0.1, random_state=0),
]

EXPECTED_FAILED_CHECKS = {}
