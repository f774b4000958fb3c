"""Worst-case audit set-ups for the basic mechanisms (shared by tests and the benchmark).

Each case runs the *library's own* mechanism on a neighbouring pair that
attains its sensitivity, and can scale the noise down by ``noise_factor`` to
build the deliberately under-noised copy that the audit must catch.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from skdp.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    SparseVector,
    exponential_mechanism,
    report_noisy_max,
)

__all__ = ["MechanismCase", "mechanism_audit_cases"]


@dataclass(frozen=True)
class MechanismCase:
    """A mechanism, its claim, and a worst-case neighbouring pair.

    ``make(noise_factor)`` returns an audit callable (see
    :func:`skdp.testing.audit_epsilon`) whose noise is multiplied by
    ``noise_factor`` (1 for the real mechanism). ``catch_factor`` is the
    noise factor of the under-noised copy the audit is expected to catch.
    """

    name: str
    epsilon: float
    delta: float
    make: Callable
    dataset_0: object
    dataset_1: object
    vectorized: bool
    n_runs: int
    catch_factor: float = 0.25
    note: str = ""


def _laplace(noise_factor):
    def run(d, rng, n):
        mech = LaplaceMechanism(epsilon=1.0 / noise_factor, sensitivity=1.0, random_state=rng)
        return mech(np.full(n, d))
    return run


def _gaussian(calibration, epsilon, delta):
    def make(noise_factor):
        def run(d, rng, n):
            mech = GaussianMechanism(epsilon=epsilon, delta=delta, calibration=calibration,
                                     random_state=rng)
            # Scale the *released* noise only, keeping the calibration under audit.
            return d + noise_factor * (mech(np.zeros(n)))
        return run
    return make


_K = 50  # candidates for the selection mechanisms


def _selection(select):
    # u(D0) = [1, 0, ..., 0] and u(D1) = [0, 1, ..., 1]: every utility moves by
    # the sensitivity 1, in opposite directions; the statistic is "picked 0".
    def make(noise_factor):
        def run(d, rng):
            return float(select(d, epsilon=1.0 / noise_factor, sensitivity=1.0,
                                random_state=rng) == 0)
        return run
    return make


def _em(scores, **kw):
    return exponential_mechanism(scores, **kw)


def _rnm(scores, **kw):
    return report_noisy_max(scores, **kw)


def _sparse_vector(noise_factor):
    # One query at the threshold (value 0) vs one below it by the sensitivity.
    def run(d, rng):
        sv = SparseVector(epsilon=1.0 / noise_factor, delta=1e-6, threshold=0.0, cutoff=1,
                          calibration="thesis", random_state=rng)
        return float(sv.query(d))
    return run


def _sparse_vector_lyu(noise_factor):
    # Five queries that all drop by the sensitivity (values 0 vs -1, threshold 0,
    # cutoff 1): the shift hits the single threshold draw as well as each query.
    # The statistic is the position of the first "below" answer (5 if none).
    def run(d, rng):
        sv = SparseVector(epsilon=1.0 / noise_factor, delta=0.0, threshold=0.0, cutoff=1,
                          calibration="lyu", random_state=rng)
        for i, value in enumerate(d):
            if not sv.query(value):
                return float(i)
        return float(len(d))
    return run


def mechanism_audit_cases():
    """Return the audit cases of every basic mechanism.

    Returns
    -------
    cases : list of MechanismCase
    """
    u0 = np.zeros(_K)
    u0[0] = 1.0
    u1 = 1.0 - u0
    return [
        MechanismCase("laplace", 1.0, 0.0, _laplace, 0.0, 1.0, True, 100_000),
        MechanismCase("gaussian (analytic)", 1.0, 1e-5, _gaussian("analytic", 1.0, 1e-5),
                      0.0, 1.0, True, 200_000),
        MechanismCase("gaussian (thesis)", 1.0, 1e-5, _gaussian("thesis", 1.0, 1e-5),
                      0.0, 1.0, True, 200_000),
        MechanismCase("gaussian (classic)", 0.5, 1e-5, _gaussian("classic", 0.5, 1e-5),
                      0.0, 1.0, True, 200_000),
        MechanismCase("exponential", 1.0, 0.0, _selection(_em), u0, u1, False, 60_000),
        MechanismCase("report-noisy-max", 1.0, 0.0, _selection(_rnm), u0, u1, False, 60_000),
        MechanismCase(
            "sparse vector (thesis)", 1.0, 1e-6, _sparse_vector, 0.0, -1.0, False, 60_000,
            catch_factor=1 / 128,
            note="Thakkar (2019) calibration is >20x loose for one query, so a 1/4-noise copy is "
                 "still 1-DP; the audit catches a 1/128-noise copy",
        ),
        MechanismCase("sparse vector (lyu)", 1.0, 0.0, _sparse_vector_lyu, np.zeros(5),
                      -np.ones(5), False, 60_000),
    ]
