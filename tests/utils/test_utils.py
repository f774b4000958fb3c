import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.utils import (
    check_epsilon_delta,
    check_option,
    check_positive_int,
    check_random_state,
    check_real,
    clip_entries,
    clip_rows_l2,
    fill_doc,
    row_norms_l2,
)


@pytest.mark.parametrize("sparse", [False, True])
def test_row_norms_do_not_overflow(sparse):
    """Entries above ~1e154 overflow when squared; the norm must not become inf."""
    X = np.array([[3e200, 4e200], [3.0, 4.0], [1e-200, 0.0]])
    Xs = sp.csr_matrix(X) if sparse else X
    np.testing.assert_allclose(row_norms_l2(Xs), [5e200, 5.0, 1e-200], rtol=1e-15)
    clipped = clip_rows_l2(Xs, 1.0)
    clipped = clipped.toarray() if sparse else clipped
    np.testing.assert_allclose(clipped[0], [0.6, 0.8], rtol=1e-15)  # not zeroed
    assert np.isinf(row_norms_l2(np.array([[np.inf, 1.0]])))[0]


def test_row_norms_float32_input_does_not_warn():
    """Comparing float32 norms with the rescaling thresholds must not overflow a cast."""
    X = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(row_norms_l2(X), [5.0, 0.0])


def test_row_norms_do_not_copy_all_zero_rows():
    """All-zero rows (a norm of 0 that is not an underflow) must not be gathered into a
    copy: data with many empty rows would otherwise double its memory (and triple the time)."""
    import tracemalloc
    X = np.zeros((100_000, 50))
    X[0] = [1e-200] + [0.0] * 49  # one genuine underflow row, still recomputed
    X[1, :2] = [3.0, 4.0]
    tracemalloc.start()
    try:
        norms = row_norms_l2(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(norms[:3], [1e-200, 5.0, 0.0], rtol=1e-15)
    assert peak < X.nbytes / 4, peak  # X itself is 40 MB


def test_clip_rows_l2_dense_and_sparse():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = clip_rows_l2(X, 1.0)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    assert X[0, 0] == 3.0  # input untouched
    Xs = sp.csr_matrix(X)
    outs = clip_rows_l2(Xs, 1.0)
    assert sp.issparse(outs)
    np.testing.assert_allclose(outs.toarray(), out)
    np.testing.assert_allclose(row_norms_l2(outs), [1.0, 0.5, 0.0])


def test_clip_entries_dense_and_sparse():
    X = np.array([[3.0, -4.0], [0.3, 0.4]])
    np.testing.assert_allclose(clip_entries(X, 1.0), [[1.0, -1.0], [0.3, 0.4]])
    Xs = sp.csr_matrix(X)
    out = clip_entries(Xs, 1.0)
    assert sp.issparse(out) and Xs.data.max() == 3.0
    np.testing.assert_allclose(out.toarray(), [[1.0, -1.0], [0.3, 0.4]])
    with pytest.raises(ValueError, match="bound"):
        clip_entries(X, 0.0)


def test_random_state_semantics():
    a = check_random_state(None).normal(size=4)
    b = check_random_state(None).normal(size=4)
    assert not np.allclose(a, b)  # fresh OS entropy each time
    np.testing.assert_array_equal(check_random_state(7).normal(size=4),
                                  check_random_state(7).normal(size=4))
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    assert isinstance(check_random_state(np.random.RandomState(0)), np.random.Generator)
    with pytest.raises(TypeError):
        check_random_state("seed")
    with pytest.raises(ValueError):
        check_random_state(-1)


def test_validators():
    assert check_epsilon_delta(1, 0) == (1.0, 0.0)
    with pytest.raises(ValueError, match="delta"):
        check_epsilon_delta(1.0, 0.0, allow_zero_delta=False)
    with pytest.raises(TypeError):
        check_real(True, "x")
    with pytest.raises(ValueError, match="x must be > 0"):
        check_real(0.0, "x", low=0.0, low_inclusive=False)
    assert check_real(float("inf"), "x", allow_inf=True) == float("inf")
    with pytest.raises(ValueError, match="n must be >= 1"):
        check_positive_int(0, "n")
    with pytest.raises(TypeError):
        check_positive_int(1.5, "n")
    assert check_option("a", "opt", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="opt must be one of"):
        check_option("c", "opt", ("a", "b"))


def test_fill_doc_substitutes_with_indentation():
    @fill_doc
    def f():
        """Doc.

        Parameters
        ----------
        %(epsilon)s
        """
    assert "        epsilon : float, default=1.0\n            Privacy loss bound" in f.__doc__


def test_clip_entries_sums_duplicate_sparse_entries_first():
    # Non-canonical CSR: the entry (0, 0) is stored twice, 5 + 5 = 10.
    X = sp.csr_matrix((np.array([5.0, 5.0, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])),
                      shape=(2, 2))
    assert not X.has_canonical_format and X.toarray()[0, 0] == 10.0
    out = clip_entries(X, 1.0)
    np.testing.assert_array_equal(out.toarray(), [[1.0, 0.0], [0.0, 1.0]])
    assert X.data.tolist() == [5.0, 5.0, 1.0]  # the input is not modified


def test_html_repr_does_not_warn_about_the_privacy_section():
    """Notebook displays parse docstrings; the Privacy section must not warn each time."""
    import pathlib
    import subprocess
    import sys
    # Each class's docstring is parsed once: the first display of one class
    # must not warn (under -W error), while the same parse of another class
    # with every filter reset does warn (so the check can fail).
    code = ("import warnings\n"
            "import skdp\n"
            "from skdp.linear_model import DPLogisticRegressionAMP, "
            "ObjectivePerturbationClassifier\n"
            "ObjectivePerturbationClassifier()._repr_html_()\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    DPLogisticRegressionAMP()._repr_html_()\n"
            "assert any('Privacy' in str(w.message) for w in caught)\n")
    root = pathlib.Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code],
                            cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_sparse_row_norms_of_entries_below_2_pow_minus_1024():
    # 1 / peak overflows for such rows: the sparse path gave inf (nan with an explicit zero)
    # while the dense path was right (review s19).
    import scipy.sparse as sp
    from skdp.utils import row_norms_l2
    dense = np.array([[3e-310, 4e-310, 0.0], [1e-320, 0.0, 0.0], [1.0, 0.0, 0.0]])
    X = sp.csr_matrix(dense)
    X.data[X.data == 0] = 0.0
    explicit = sp.csr_matrix((np.array([3e-310, 0.0, 4e-310]), np.array([0, 1, 2]),
                              np.array([0, 3])), shape=(1, 3))
    expected = row_norms_l2(dense)
    np.testing.assert_allclose(row_norms_l2(X), expected, rtol=1e-12)
    np.testing.assert_allclose(row_norms_l2(explicit), expected[:1], rtol=1e-12)
    assert expected[0] == pytest.approx(5e-310, rel=1e-12)


def test_clipping_ignores_a_global_floating_point_error_mode():
    # Under np.seterr(all="raise") the expected under/overflow of the squares (handled by
    # rescaling) raised FloatingPointError inside a private fit, after the charge, for rows
    # such as [1e300, 1e-310]: a data-dependent failure. Clipping must not depend on it.
    from skdp.utils import clip_rows_l2

    X = np.array([[1e300, 1e-310], [3.0, 4.0], [1e-200, 1e-200]])
    expected = clip_rows_l2(X, 1.0)
    with np.errstate(all="raise"):
        clipped = clip_rows_l2(X, 1.0)
        clipped_sparse = clip_rows_l2(sp.csr_matrix(X), 1.0)
    np.testing.assert_array_equal(clipped, expected)
    np.testing.assert_array_equal(clipped_sparse.toarray(), expected)
    assert np.linalg.norm(clipped[0]) == pytest.approx(1.0)


def test_every_verbose_parameter_says_its_output_is_not_private():
    # Printed diagnostics (solver iterations, per-class progress, timings) are computed
    # from the private rows without noise: each verbose parameter must say so.
    import inspect
    import re

    from skdp.utils import all_estimators

    missing = []
    for name, cls in all_estimators():
        if "verbose" not in inspect.signature(cls.__init__).parameters:
            continue
        doc = cls.__doc__ or ""
        start = doc.find("verbose : int")
        entry = re.sub(r"\s+", " ", doc[start:start + 600]) if start >= 0 else ""
        if "non-private diagnostics" not in entry:
            missing.append(name)
    assert not missing


def test_every_privacy_section_states_the_floating_point_limitation():
    # Mironov (2012): noise drawn in floating point leaks through its low-order bits. Every
    # estimator whose default noise is floating-point says so in its Privacy section, and
    # names its exact discrete option where it has one.
    import re

    from skdp.utils import all_estimators

    noise_free = {"PublicBoundsScaler", "RandomFourierFeatures"}
    discrete_option = {"PrivateHistogram": 'noise="discrete_gaussian"',
                       "PrivateKernelNetClassifier": 'mechanism="discrete_laplace"',
                       "DPLogisticRegressionAMP": 'output_noise="discrete_gaussian"',
                       "DPStandardScaler": 'noise="discrete"',
                       "PrivateKernelClassifier": 'mechanism="discrete_laplace"',
                       "OutputPerturbationClassifier": "discrete",
                       "PermutationSGDClassifier": "discrete_gaussian",
                       "PrivateLinearSVM": "discrete",
                       "PrivateSVMRFF": "discrete",
                       "DPMatrixCompleter": "discrete_gaussian"}
    missing = []
    for name, cls in all_estimators():
        doc = cls.__doc__ or ""
        start = doc.find("Privacy\n    -------")
        if start < 0 or name in noise_free:
            continue
        end = re.compile(r"\n\n    \w[\w ]*\n    ---").search(doc, start + 20)
        section = re.sub(r"\s+", " ", doc[start:end.start() if end else len(doc)])
        if "Mironov 2012" not in section or discrete_option.get(name, "") not in section:
            missing.append(name)
    assert not missing
