"""Tests of the fifth version (wide models) of the AMP eps3 study's generator and scorer."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdp.benchmarks._amp_eps3_study import (
    A_GRID,
    C_GRID,
    main,
    score_wide,
    sparse_bag_of_words,
    split_by_width,
    thesis_high_dimensional_rule,
)


def test_sparse_bag_of_words_shape_density_and_determinism():
    X, y = sparse_bag_of_words(1500, 5000, random_state=3)
    assert sp.isspmatrix_csr(X) and X.shape == (1500, 5000) and y.shape == (1500,)
    words = np.diff(X.indptr)
    # 50-100 draws per row; the most frequent words repeat, so fewer distinct ones.
    assert 30 <= words.mean() <= 80 and words.max() <= 100 and words.min() >= 10
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0)
    assert X.min() >= 0 and set(np.unique(y)) == {0, 1} and 0.4 < y.mean() < 0.6
    X2, y2 = sparse_bag_of_words(1500, 5000, random_state=3)
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    X3, _ = sparse_bag_of_words(1500, 5000, random_state=4)
    assert (X != X3).nnz > 0


def test_sparse_bag_of_words_labels_follow_a_few_words():
    X, y = sparse_bag_of_words(2500, 3000, random_state=5)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    clf = LogisticRegression(C=100).fit(X_train, y_train)
    assert clf.score(X_test, y_test) > 0.75
    # The label is a function of 50 words: the 50 largest weights carry most of the fit.
    top = np.argsort(-np.abs(clf.coef_[0]))[:50]
    assert LogisticRegression(C=100).fit(X_train[:, top], y_train).score(
        X_test[:, top], y_test) > 0.75
    shuffled = np.random.default_rng(0).permutation(y_train)
    assert LogisticRegression(C=100).fit(X_train, shuffled).score(X_test, y_test) < 0.6


@pytest.mark.parametrize("loss, eps, expected", [
    # gap = 0.03 * 0.99 eps, c = C / (exp(gap) - 1) * (0.99 eps)^2, by hand:
    ("logistic", 1.0, 8.12809),   # 0.25 / 0.0301454 * 0.9801
    ("huber", 3.0, 473.275),      # 5 / 0.0931886 * 8.8209
    ("logistic", 0.1, 0.823775),  # 0.25 / 0.00297441 * 0.009801
])
def test_thesis_high_dimensional_rule_hand_values(loss, eps, expected):
    key = (loss, 500, 4001, 1.0, eps, "wide-dense")
    assert thesis_high_dimensional_rule(key, 0.99 * eps) == pytest.approx(expected, rel=1e-5)


def test_split_by_width():
    table = {("logistic", 1000, 1001, 1.0, 1.0, "f"): [1],
             ("logistic", 1001, 1001, 1.0, 1.0, "f"): [2],
             ("logistic", 2000, 1001, 2.0, 0.1, "f"): [3],
             ("logistic", 500, 20001, 0, 0.3, "g"): [4]}
    wide, narrow = split_by_width(table)
    assert sorted(wide.values()) == [[1], [4]] and sorted(narrow.values()) == [[2], [3]]


def _row(values):
    """An accuracy row over C_GRID from ``{c: accuracy}``, 0.5 elsewhere."""
    return [values.get(c, 0.5) for c in C_GRID]


EPS = 1 / 0.99  # eps1 = 1, so c = A sqrt(d / m) for the estimator's form
# c of each rule at (m, d) = (100, 400) and eps1 = 1: estimator 69 * 2 = 138 (logistic) and
# 85 * 2 = 170 (Huber), both in [100, 300]; before version 4: 7 * 400 / 10 = 280, in
# [100, 300]; thesis: 0.25 / (e^0.03 - 1) = 8.21 (logistic, in [3, 10]) and 164 (Huber).
WIDE = {c: 0.7 for c in (100, 300)} | {20: 0.9}
# At (m, d) = (400, 100): estimator 34.5 / 42.5 and before version 4 35, in [30, 50];
# thesis 8.21 (logistic).
NARROW = {30: 0.6, 50: 0.6, 1000: 0.8, 3: 0.7, 10: 0.7}


def _toy(wide_row, narrow_row):
    return {loss: {(loss, 100, 400, 1.0, EPS, "t"): _row(wide_row),
                   (loss, 400, 100, 1.0, EPS, "t"): _row(narrow_row)}
            for loss in ("logistic", "huber")}


def test_score_wide_regrets_by_hand():
    result = score_wide(_toy(WIDE, NARROW))
    r = result["regrets"]
    for loss in ("logistic", "huber"):
        assert r["original", loss, "d > m", "estimator"] == pytest.approx((0.2, 0.2))
        assert r["original", loss, "d > m", "before version 4"] == pytest.approx((0.2, 0.2))
        assert r["original", loss, "d <= m", "estimator"] == pytest.approx((0.2, 0.2))
        assert r["original", loss, "d <= m", "before version 4"] == pytest.approx((0.2, 0.2))
    assert r["original", "logistic", "d > m", "thesis high-dimensional"] == pytest.approx(
        (0.4, 0.4))
    assert r["original", "logistic", "d <= m", "thesis high-dimensional"] == pytest.approx(
        (0.1, 0.1))
    assert r["original", "huber", "d > m", "thesis high-dimensional"] == pytest.approx(
        (0.2, 0.2))
    # A_high puts c = 2 A at the peak c = 20: the A of A_GRID nearest to 10 (in log).
    step = math.log(A_GRID[1] / A_GRID[0])
    for loss, a in result["A_high"].items():
        assert abs(math.log(a / 10)) <= step / 2 + 1e-12
        assert r["original", loss, "d > m", "A_high"][0] < 0.03
    assert "criterion" not in result


def test_score_wide_criterion_on_fresh_tables():
    fresh_same = _toy(WIDE, NARROW)
    met = score_wide(_toy(WIDE, NARROW), fresh_same)["criterion"]
    assert met["met"] and met["estimator"] == pytest.approx(0.2) and met["A_high"] < 0.03
    # Fresh problems whose best c is where the estimator's rule lands.
    fresh_other = _toy({100: 0.9, 300: 0.9}, NARROW)
    result = score_wide(_toy(WIDE, NARROW), fresh_other)
    assert result["regrets"]["fresh", "logistic", "d > m", "estimator"] == pytest.approx(
        (0.0, 0.0))
    assert not result["criterion"]["met"] and result["criterion"]["A_high"] > 0.3


def test_score_wide_command_line(tmp_path, capsys):
    paths = []
    for name, tables in [("original", _toy(WIDE, NARROW)), ("fresh", _toy(WIDE, NARROW))]:
        for loss, table in tables.items():
            path = tmp_path / f"{name}-{loss}.json"
            path.write_text(json.dumps({json.dumps(k): v for k, v in table.items()}))
            paths.append(str(path))
    main(["--score-wide", *paths[:2], "--fresh", *paths[2:]])
    out = capsys.readouterr().out
    assert "fresh huber d > m: estimator: mean regret 0.2000" in out
    assert "criterion" in out and ", met (" in out and "information only" in out
