"""scikit-learn's estimator checks over every public skdp estimator.

Each estimator family lists the instances to check, and the checks that DP
genuinely makes fail (each with a one-line reason), in a module of
``tests/common_instances/``: that module defines ``INSTANCES`` (a list of
estimator instances) and ``EXPECTED_FAILED_CHECKS`` (a dict from class name to
``{check name: reason}``). A public estimator missing from every list fails
``test_every_estimator_is_checked``.
"""

import importlib
import pkgutil
import re

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import common_instances
from skdp.utils import all_estimators

INSTANCES = []
EXPECTED_FAILED = {}
for _info in pkgutil.iter_modules(common_instances.__path__):
    _mod = importlib.import_module(f"common_instances.{_info.name}")
    INSTANCES.extend(_mod.INSTANCES)
    EXPECTED_FAILED.update(getattr(_mod, "EXPECTED_FAILED_CHECKS", {}))


def _expected_failed(estimator):
    return EXPECTED_FAILED.get(type(estimator).__name__, {})


def test_every_estimator_is_checked():
    checked = {type(est).__name__ for est in INSTANCES}
    missing = [name for name, _ in all_estimators() if name not in checked]
    assert not missing, f"add these estimators to tests/common_instances/: {missing}"


def test_expected_failures_have_reasons():
    for name, checks in EXPECTED_FAILED.items():
        for check, reason in checks.items():
            assert isinstance(reason, str) and len(reason) > 10, (name, check)


if INSTANCES:
    # scikit-learn's checks fit on tiny data, where ModelAgnosticPrivateClassifier
    # often releases fewer than two classes and says so; and they fit classifiers
    # with classes=None, which reads the label set from y and says so. The
    # estimators' own tests check both warnings.
    @pytest.mark.filterwarnings("ignore::skdp.exceptions.FallbackModelWarning")
    @pytest.mark.filterwarnings("ignore:.*classes=None:skdp.exceptions.PrivacyLeakWarning")
    # The checks' tiny data is below DPFeatureClipper's usable size; its warning says so.
    @pytest.mark.filterwarnings("ignore:DPFeatureClipper.*below 100:UserWarning")
    # check_class_weight_classifiers passes weights of 1000: clipped to 1, with a warning.
    @pytest.mark.filterwarnings("ignore:Class weights above 1 were clipped:UserWarning")
    @parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed)
    def test_sklearn_compatible_estimator(estimator, check):
        check(estimator)


@pytest.mark.parametrize("name,cls", all_estimators(), ids=lambda x: x if isinstance(x, str) else "")
def test_docstring_has_privacy_section(name, cls):
    """Every public estimator states its neighbouring relation and guarantee in a Privacy section."""
    doc = cls.__doc__ or ""
    match = re.search(r"^\s*Privacy\n\s*-{7}\n(?P<body>(?:.*\n){1,})", doc, re.MULTILINE)
    assert match, f"{name} has no 'Privacy' docstring section"
    assert len(match.group("body").split()) > 15, f"{name}'s Privacy section is too thin"
