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

_NO_STABLE_VOTE = (
    "tiny (often random-label) check data leaves each of the 3 teachers a few rows, so "
    "fewer than two classes get a stable (unanimous) vote: the DP answerer releases "
    "nothing usable and fit raises instead of training a student"
)
EXPECTED_FAILED_CHECKS = {
    "ModelAgnosticPrivateClassifier": dict.fromkeys([
        "check_classifier_data_not_an_array",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_nan_inf",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in_after_fitting",
        "check_supervised_y_2d",
    ], _NO_STABLE_VOTE),
}
