"""Tests of the fifth (wide models) and sixth (Huber widths) versions of the AMP eps3 study."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from studies import amp_eps3 as study
from studies.amp_eps3 import (
    A_GRID,
    C_GRID,
    curvature_and_rank,
    huber_width_name,
    main,
    parse_loss_name,
    score_wide,
    score_width,
    sparse_bag_of_words,
    split_by_width,
    thesis_high_dimensional_rule,
    width_scale,
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


def _save(tmp_path, groups):
    """Save ``[(which, {loss: table})]`` as ``--output`` does, one file per table."""
    paths = []
    for which, tables in groups:
        for loss, table in tables.items():
            path = tmp_path / f"{which}-{loss}.json"
            path.write_text(json.dumps({json.dumps(k): v for k, v in table.items()}))
            paths.append(str(path))
    return paths


def test_score_wide_command_line(tmp_path, capsys):
    paths = _save(tmp_path, [("original", _toy(WIDE, NARROW)), ("fresh", _toy(WIDE, NARROW))])
    main(["--score-wide", *paths[:2], "--fresh", *paths[2:]])
    out = capsys.readouterr().out
    assert "fresh huber d > m: estimator: mean regret 0.2000" in out
    assert "criterion" in out and ", met (" in out and "information only" in out


# Sixth version: the Huber constant at other widths.


@pytest.mark.parametrize("name, loss, huber_h, curvature", [
    ("huber-0.5", "huber", 0.5, 1.0),     # 1 / (2 * 0.5)
    ("huber-0.05", "huber", 0.05, 10.0),  # 1 / (2 * 0.05)
    ("huber", "huber", 0.1, 5.0),         # versions 1-5: the default width
    ("logistic", "logistic", 0.1, 0.25),
])
def test_width_keys_and_curvature(name, loss, huber_h, curvature):
    assert parse_loss_name(name) == (loss, pytest.approx(huber_h))
    key = (name, 2000, 11, 1.0, 0.3, "informative")
    assert curvature_and_rank(key) == (pytest.approx(curvature), 1)


def test_width_part_sweeps_the_width(monkeypatch):
    assert huber_width_name(0.5) == "huber-0.5" and huber_width_name(0.05) == "huber-0.05"
    calls = []
    monkeypatch.setattr(study, "_sweep", lambda data, eps, curvature, row_rank, n_draws,
                        **params: calls.append((curvature, params)) or [eps])
    problems = [("informative", 2000, 10, 1.0, 101, None)]
    table = study._binary_sweeps("huber-0.5", problems, [0.1, 1.0], 4)
    assert list(table) == [("huber-0.5", 2000, 11, 1.0, eps, "informative") for eps in (0.1, 1.0)]
    assert calls == [(1.0, dict(loss="huber", huber_h=0.5))] * 2
    calls.clear()
    assert list(study._binary_sweeps("huber", problems, [0.1], 4))[0][0] == "huber"
    assert calls == [(5.0, dict(loss="huber", huber_h=0.1))]


@pytest.mark.parametrize("huber_h, q, expected", [
    (0.5, 0.0, 85.0), (0.5, 1.0, 425.0), (0.05, 1.0, 42.5),
    (0.5, -0.5, 38.01316), (0.05, -2.0, 340.0), (0.05, 0.35, 66.68965),  # 85 * 0.5^0.35
])
def test_width_scale_hand_values(huber_h, q, expected):
    assert width_scale(huber_h, q) == pytest.approx(expected, rel=1e-6)


# At (m, d) = (289, 10000) and eps1 = 1, c = A sqrt(d / m) = A * 100 / 17: the current
# A = 85 gives c = 500; q = -1 gives A(0.5) = 17, c = 100, and A(0.05) = 170, c = 1000.
# At c = 500 (between 300 and 1000 in log c) a row 0.5 at 300 and 0.9 at 1000 reads
# 0.5 + 0.4 ln(5/3) / ln(10/3) = 0.669713, a regret of 0.230287.
WIDTH_KEY, FLAT_KEY = (289, 10000, 1.0, EPS, "t"), (289, 10000, 2.0, EPS, "t")


def _width_toy(peak_h05, peak_h005):
    return {name: {(name, *WIDTH_KEY): _row(peak), (name, *FLAT_KEY): _row({})}
            for name, peak in [("huber-0.5", peak_h05), ("huber-0.05", peak_h005)]}


def test_score_width_regrets_by_hand():
    result = score_width(_width_toy({100: 0.9}, {1000: 0.9}))
    assert result["q"] == -1.0
    assert result["A"] == pytest.approx({"huber-0.5": 17.0, "huber-0.05": 170.0})
    r = result["regrets"]
    assert r["original", "huber-0.5", "current"] == pytest.approx((0.2, 0.4))
    assert r["original", "huber-0.05", "current"] == pytest.approx((0.11514333, 0.2302867))
    for name, a in [("huber-0.5", 17), ("huber-0.05", 170)]:
        assert r["original", name, "candidate"] == pytest.approx((0.0, 0.0), abs=1e-9)
        step = math.log(A_GRID[1] / A_GRID[0])
        assert abs(math.log(result["own_A"][name] / a)) <= step / 2 + 1e-12
    assert "criterion" not in result and not any(k[0] == "fresh" for k in r)


def test_score_width_ties_keep_the_least_q():
    # Flat tables: every q has regret 0, so the current rule (q = 0) stays.
    assert score_width(_width_toy({}, {}))["q"] == 0.0


def test_score_width_criterion_met_and_not_met():
    original = _width_toy({100: 0.9}, {1000: 0.9})
    met = score_width(original, _width_toy({100: 0.9}, {1000: 0.9}))["criterion"]
    assert met["met"] and met["candidate"] == pytest.approx(0.0, abs=1e-9)
    assert met["current"] == pytest.approx((0.2 + 0.11514333) / 2)
    # Fresh problems whose best c is 300-1000 for h = 0.5: the current c = 500 has no
    # regret there, the candidate's c = 100 loses 0.4 on one cell of two.
    result = score_width(original, _width_toy({300: 0.9, 1000: 0.9}, {1000: 0.9}))
    c = result["criterion"]
    assert not c["met"]
    assert result["regrets"]["fresh", "huber-0.5", "candidate"] == pytest.approx((0.2, 0.4))
    assert c["current"] == pytest.approx(0.11514333 / 2)
    assert c["candidate"] == pytest.approx(0.1, abs=1e-9)


def test_score_width_command_line(tmp_path, capsys):
    toy = _width_toy({100: 0.9}, {1000: 0.9})
    paths = _save(tmp_path, [("original", toy), ("fresh", toy)])
    main(["--score-width", *paths[:2], "--fresh", *paths[2:]])
    out = capsys.readouterr().out
    assert "q = -1 " in out and "A(h) = 17," in out
    assert "fresh huber-0.05: current: mean regret 0.1151 (worst 0.2303)" in out
    assert ", met (" in out
