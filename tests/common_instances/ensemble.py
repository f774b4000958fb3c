"""Instances of skdp.ensemble for the scikit-learn estimator checks."""

from sklearn.tree import DecisionTreeClassifier

from skdp.ensemble import ModelAgnosticPrivateClassifier, PrivateQueryAnswerer

# The checks' data sets have tens of rows, so three teachers (a vote is stable only
# when all three agree) and a huge epsilon; real use at epsilon = 1 needs hundreds.
INSTANCES = [
    PrivateQueryAnswerer(DecisionTreeClassifier(max_depth=3), n_teachers=3, random_state=0),
    ModelAgnosticPrivateClassifier(DecisionTreeClassifier(max_depth=3), n_teachers=3,
                                   epsilon=1e4, random_state=0),
]

# Whatever the votes release, fit keeps a model: a student, or a constant fallback
# (fallback_) when fewer than two classes were released; so every check that fits passes.
# Row weights reach the teachers; a teacher that cannot fit (all its weights zero) abstains.
ALL_ZERO_WEIGHTS = {
    "check_all_zero_sample_weights_error": (
        "weights are protected like the rows: an error only for all-zero weights would tell "
        "that data set from its neighbours, so the teachers that cannot fit abstain and the "
        "fit goes on"),
}
EXPECTED_FAILED_CHECKS = {
    "ModelAgnosticPrivateClassifier": {
        **ALL_ZERO_WEIGHTS,
    },
    "PrivateQueryAnswerer": {
        "check_estimators_pickle": (
            "a fitted answerer holds the non-private teachers and the sparse vector's state, "
            "so it refuses to be pickled unless allow_pickle=True (tests/ensemble/test_ensemble.py "
            "checks the opt-in)"),
        **ALL_ZERO_WEIGHTS,
    },
}
