"""Instances of skdp.ensemble for the scikit-learn estimator checks."""

from sklearn.tree import DecisionTreeClassifier

from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer

# The checks' data sets have tens of rows, so three teachers (a vote is stable only
# when all three agree) and a huge epsilon; real use needs thousands of teachers.
INSTANCES = [
    PrivateQueryAnswerer(DecisionTreeClassifier(max_depth=3), n_teachers=3, random_state=0),
    ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=3), n_teachers=3,
                                   epsilon=1e4, random_state=0),
]

# With fewer than two released classes fit keeps a constant fallback model (fallback_):
# the one released class. Only when no label at all is released does fit still raise,
# unless fallback_label is given; tests/test_ensemble.py runs every check on an instance
# with fallback_label set and expects no failure.
_NO_LABEL_RELEASED = (
    "on the tiny check data (a few rows per teacher, labels often random) the 3 teachers "
    "never agree on the 1-8 public points, so the DP answerer releases no label at all; a "
    "constant fallback then needs fallback_label (None here), as any label read from the "
    "private data would be an unprotected release, so fit raises"
)
# Row weights reach the teachers; a teacher that cannot fit (all its weights zero) abstains.
ALL_ZERO_WEIGHTS = {
    "check_all_zero_sample_weights_error": (
        "weights are protected like the rows: an error only for all-zero weights would tell "
        "that data set from its neighbours, so the teachers that cannot fit abstain and the "
        "fit goes on"),
}
EXPECTED_FAILED_CHECKS = {
    "ModelAgnosticPrivateClassifier": {
        **dict.fromkeys([
            "check_estimators_dtypes",
            "check_estimators_nan_inf",
            "check_f_contiguous_array_estimator",
            "check_fit2d_1feature",
            "check_fit_score_takes_y",
            "check_supervised_y_2d",
            "check_sample_weights_list",
            "check_sample_weights_not_an_array",
            "check_sample_weights_not_overwritten",
            "check_sample_weights_pandas_series",
            "check_sample_weights_shape",
        ], _NO_LABEL_RELEASED),
        **ALL_ZERO_WEIGHTS,
    },
    "PrivateQueryAnswerer": {
        "check_estimators_pickle": (
            "a fitted answerer holds the non-private teachers and the sparse vector's state, "
            "so it refuses to be pickled unless allow_pickle=True (tests/test_ensemble.py "
            "checks the opt-in)"),
        **ALL_ZERO_WEIGHTS,
    },
}
