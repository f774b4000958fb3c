"""The label set is a public bound: given as ``classes``, or read from ``y`` with a warning."""

import numpy as np
import pytest

from skdp import PrivacyLeakWarning
from skdp.utils import resolve_classes


def test_given_classes_are_the_label_set_even_without_rows():
    classes, y_index = resolve_classes([2, 0, 1], np.array([0, 2, 2]), "Est")
    np.testing.assert_array_equal(classes, [0, 1, 2])
    np.testing.assert_array_equal(y_index, [0, 2, 2])


def test_reading_the_label_set_from_y_warns():
    with pytest.warns(PrivacyLeakWarning, match="classes=None.*reveals every label"):
        classes, y_index = resolve_classes(None, np.array(["b", "a", "b"]), "Est")
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(y_index, [1, 0, 1])


@pytest.mark.parametrize("classes, y, match", [
    ([0, 0, 1], [0, 1], "duplicate"),
    ([0], [0, 0], "at least 2 classes"),
    ([[0, 1]], [0, 1], "1-D"),
    ([0, 1], ["a", "b"], "not in classes"),
    ([0, 1], [0, 2], "not in classes.*2"),
    (None, [1, 1], "at least 2 classes"),
])
def test_bad_label_sets_are_clear_errors(classes, y, match):
    with pytest.warns(PrivacyLeakWarning) if classes is None else _no_warning():
        with pytest.raises(ValueError, match=match):
            resolve_classes(classes, np.array(y), "Est")


def test_continuous_targets_are_refused():
    with pytest.raises(ValueError, match="Unknown label type"):
        resolve_classes(None, np.array([0.5, 1.5]), "Est")
    with pytest.raises(ValueError, match="not in classes"):
        resolve_classes([0, 1], np.array([0.5, 1.5]), "Est")


@pytest.mark.parametrize("y", [[0.0, 0.0], [0.0, 0.5]])
def test_declared_continuous_classes_are_refused_whatever_the_rows_hold(y):
    # The refusal reads the public label set only: it failed before only when a private
    # row held 0.5, so whether a model came out depended on one record's label.
    with pytest.raises(ValueError, match="Unknown label type"):
        resolve_classes([0.0, 0.5], np.array(y), "Est")


class _no_warning:
    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", PrivacyLeakWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)
