"""Private tree ensembles: noise calibration, an empirical audit, input refusal, accuracy."""

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdp.accounting import BudgetAccountant, zcdp_for_dp
from skdp.ensemble import DPHistGradientBoostingClassifier, DPRandomForestClassifier
from skdp.ensemble._boosting import (
    default_depth,
    default_learning_rate,
    default_n_estimators,
    leaf_noise_scales,
)
from skdp.ensemble._forest import default_forest_depth, default_forest_trees
from skdp.ensemble._private_trees import (
    GINI_SENSITIVITY,
    grow_private_tree,
    norm_sensitivity,
    split_level_rho,
)
from skdp.ensemble._random_trees import bin_data, grow_random_tree
from skdp.testing import audit_epsilon

MODELS = [DPHistGradientBoostingClassifier, DPRandomForestClassifier]


def _xor_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] > 0.6)).astype(int)
    return X, y


# -- calibration ---------------------------------------------------------------------------

def test_forest_splits_and_leaves_share_each_tree_budget():
    X, y = _xor_data(500)
    clf = DPRandomForestClassifier(epsilon=1.0, delta=1e-6, bounds=(0, 1), classes=[0, 1],
                                   n_estimators=7, max_depth=5, split_share=0.3,
                                   random_state=0).fit(X, y)
    rho = zcdp_for_dp(1.0, 1e-6)
    # Leaves: Delta_2 = sqrt(2), 0.7 rho / 7 = 2 / (2 sigma^2); splits: 5 levels of eps0^2 / 8.
    assert clf.noise_scale_ == pytest.approx(math.sqrt(7 / (0.7 * rho)), rel=1e-12)
    assert clf.split_epsilon_ == pytest.approx(math.sqrt(8 * 0.3 * rho / 7 / 5), rel=1e-12)
    tree_rho = 1 / clf.noise_scale_**2 + 5 * split_level_rho(clf.split_epsilon_)
    assert 7 * tree_rho == pytest.approx(rho, rel=1e-12)


def test_boosting_leaf_noise_spends_exactly_the_tree_budget():
    for n_outputs, same_h in ((1, 1.0), (5, 2.0)):
        sg, sh = leaf_noise_scales(0.01, 1.0, 0.25, n_outputs)
        a, b = 1.0 / sg**2, 0.25**2 / sh**2
        # Worst of: same leaf (4a + b or 4a + 2b), two leaves (2a + 2b); rho = max / 2.
        assert max(4 * a + same_h * b, 2 * a + 2 * b) / 2 == pytest.approx(0.01, rel=1e-12)
        assert b / (2 * a) == pytest.approx(0.1 / 0.9, rel=1e-12)  # the hessian share


def test_boosting_scales_compose_to_the_budget():
    X, y = _xor_data(2000)
    clf = DPHistGradientBoostingClassifier(epsilon=2.0, delta=1e-6, bounds=(0, 1),
                                           classes=[0, 1], n_estimators=10,
                                           random_state=0).fit(X, y)
    rho = zcdp_for_dp(2.0, 1e-6)
    s_prior, s_g, s_h = clf.noise_scales_
    tree_rho = max(4 / s_g**2 + 0.0625 / s_h**2, 2 / s_g**2 + 0.125 / s_h**2) / 2
    tree_rho += clf.max_depth_ * clf.split_epsilon_**2 / 8
    assert 1 / s_prior**2 + 10 * tree_rho == pytest.approx(rho, rel=1e-12)


def test_random_trees_never_read_the_data():
    a = grow_random_tree(np.random.default_rng(3), 5, 16, 4)
    b = grow_random_tree(np.random.default_rng(3), 5, 16, 4)
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    # Every leaf is reachable and the thresholds stay inside the feature's path range.
    B = bin_data(np.random.default_rng(0).uniform(0, 1, (20000, 5)), np.zeros(5), np.ones(5), 16)
    assert np.unique(a.apply(B)).size == 16


def test_default_rules_are_public_formulas():
    rho = zcdp_for_dp(1.0, 1e-8)
    m = 10_000 * math.sqrt(rho)
    assert default_depth(10_000, 2, rho) == int(np.clip(math.floor(math.log2(m / 100)), 3, 6))
    assert default_n_estimators(10_000, 2, rho) == int(np.clip(round(m / 200), 10, 100))
    assert default_learning_rate(5) == 0.5 and default_learning_rate(100) == 0.1
    # Multi-class problems boost at least 20 rounds (binary: 10).
    assert default_n_estimators(100, 2, rho) == 10 and default_n_estimators(100, 5, rho) == 20
    assert default_depth(10, 2, math.inf) == 6 and default_n_estimators(10, 2, math.inf) == 100
    assert default_forest_trees(10_000, rho) == int(np.clip(round(m / 100), 5, 25))
    assert default_forest_depth(10_000, rho) == int(np.clip(math.floor(math.log2(m / 8)), 3, 12))
    assert default_forest_trees(10, math.inf) == 25 and default_forest_depth(10, math.inf) == 12


def _gini_scores(bins, y, n_thresholds):
    """Hand computation of sum_children sum_k n_ck^2 / n_c for every threshold."""
    scores = []
    for t in range(n_thresholds):
        total = 0.0
        for side in (bins <= t, bins > t):
            c = np.bincount(y[side], minlength=2)
            total += (c @ c) / c.sum() if c.sum() else 0.0
        scores.append(total)
    return np.array(scores)


def test_split_is_drawn_by_the_exponential_mechanism_on_the_gini_score():
    # One feature, 4 bins: 3 candidate thresholds, P(t) proportional to exp(scale u(t)).
    bins = np.array([0, 1, 1, 3, 2, 2])
    y = np.array([0, 1, 1, 0, 1, 0])
    scale = 0.8
    expected = np.exp(scale * _gini_scores(bins, y, 3))
    expected /= expected.sum()
    rng = np.random.default_rng(0)
    draws = [grow_private_tree(bins[:, None].astype(np.uint8), np.eye(2)[y], 1, 4, 1, scale,
                               rng)[0].threshold[0] for _ in range(6000)]
    freq = np.bincount(draws, minlength=3) / 6000
    np.testing.assert_allclose(freq, expected, atol=0.02)


def test_gini_score_moves_by_less_than_its_sensitivity():
    rng = np.random.default_rng(1)
    for _ in range(300):
        bins, y = rng.integers(0, 4, 6), rng.integers(0, 2, 6)
        bins2, y2 = bins.copy(), y.copy()
        bins2[0], y2[0] = rng.integers(0, 4), rng.integers(0, 2)
        change = _gini_scores(bins, y, 3) - _gini_scores(bins2, y2, 3)
        assert np.abs(change).max() < GINI_SENSITIVITY


def _norm_scores(bins, g, n_thresholds):
    """sum_children ||G_c|| for every threshold t (rows with bin <= t go left), by hand."""
    g = np.asarray(g, float).reshape(len(bins), -1)
    return np.array([np.linalg.norm(g[bins <= t].sum(0)) + np.linalg.norm(g[bins > t].sum(0))
                     for t in range(n_thresholds)])


def test_norm_score_moves_by_at_most_its_sensitivity():
    # Softmax-like gradient rows of norm <= c = sqrt(2): an added row moves every
    # candidate's score by a value in [-c, c]; a replaced row by at most 2 c.
    rng = np.random.default_rng(2)
    c = math.sqrt(2.0)
    worst_add = worst_replace = 0.0
    for _ in range(300):
        bins = rng.integers(0, 4, 7)
        g = rng.normal(size=(7, 3))
        g *= c * rng.uniform(0.5, 1.0, (7, 1)) / np.linalg.norm(g, axis=1, keepdims=True)
        added = _norm_scores(bins, g, 3) - _norm_scores(bins[1:], g[1:], 3)
        bins2, g2 = bins.copy(), g.copy()
        bins2[0], g2[0] = rng.integers(0, 4), -g[0]
        replaced = _norm_scores(bins, g, 3) - _norm_scores(bins2, g2, 3)
        worst_add = max(worst_add, np.abs(added).max())
        worst_replace = max(worst_replace, np.abs(replaced).max())
    assert worst_add <= c + 1e-12 and worst_replace <= norm_sensitivity(c) + 1e-12
    assert worst_replace > 0.5 * norm_sensitivity(c)  # the bound is not loose by much
    assert norm_sensitivity(c) == 2 * c


def test_split_is_drawn_by_the_exponential_mechanism_on_the_norm_score():
    bins = np.array([0, 1, 1, 3, 2, 2])
    g = np.array([[0.5, -0.5], [-1.0, 1.0], [0.2, -0.2], [0.9, -0.9], [-0.3, 0.3], [0.6, -0.6]])
    scale = 0.8
    expected = np.exp(scale * _norm_scores(bins, g, 3))
    expected /= expected.sum()
    rng = np.random.default_rng(0)
    draws = [grow_private_tree(bins[:, None].astype(np.uint8), g, 1, 4, 1, scale, rng,
                               score="norm")[0].threshold[0] for _ in range(6000)]
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 6000, expected, atol=0.02)


# -- audit ---------------------------------------------------------------------------------

class _QuarterNoiseForest(DPRandomForestClassifier):
    def _noise_scale(self, rho, n_trees):
        eps0, sigma = super()._noise_scale(rho, n_trees)
        return 4 * eps0, sigma / 4   # 16 times the zCDP of both releases


class _ObservedBoosting(DPHistGradientBoostingClassifier):
    def _add_leaf_noise(self, G, H, sigma_g, sigma_h, rng):
        self.exact_ = (G[:, 0].copy(), H[:, 0].copy())
        G, H = super()._add_leaf_noise(G, H, sigma_g, sigma_h, rng)
        self.released_ = (G[:, 0], H[:, 0])
        return G, H


class _QuarterNoiseBoosting(_ObservedBoosting):
    def _noise_scales(self, *args):
        *sigmas, eps0 = super()._noise_scales(*args)
        return (*(s / 4 for s in sigmas), 4 * eps0)


# One feature, two bins: the only split separates x = 0.25 from x = 0.75. One row, moved
# from (left leaf, class 0) to (right leaf, class 1): the worst case of the count table,
# and no other row's gradient moves with the noisy prior.
_D0 = (np.array([[0.25]]), np.array([0]))
_D1 = (np.array([[0.75]]), np.array([1]))
_TINY = dict(epsilon=1.0, bounds=(0, 1), classes=[0, 1], n_estimators=1, max_depth=1,
             n_bins=2)


def test_forest_audit_passes_and_catches_a_quarter_of_the_noise():
    def audit(cls):
        def mechanism(data, rng):
            # One candidate split: the whole budget on the leaf counts.
            clf = cls(delta=1e-5, random_state=rng, split_share=0.0, **_TINY).fit(*data)
            return clf.leaf_counts_[0][1, 1] - clf.leaf_counts_[0][0, 0]

        return audit_epsilon(mechanism, _D0, _D1, n_runs=1000, delta=1e-5,
                             random_state=0).epsilon_lower_bound

    assert audit(DPRandomForestClassifier) <= 1.0
    assert audit(_QuarterNoiseForest) > 1.0


# Four rows, four bins: replacing the first row (bin 0 -> bin 3) moves the best threshold
# from 0 to 2, the pair found by enumerating all 4-row data sets for the largest gap.
_S0 = ((np.array([0, 1, 1, 1])[:, None] + 0.5) / 4, np.array([0, 1, 1, 1]))
_S1 = ((np.array([3, 1, 1, 1])[:, None] + 0.5) / 4, np.array([0, 1, 1, 1]))


def test_forest_split_audit_passes_and_catches_a_quarter_of_the_noise():
    # The split alone (split_share 0.9): the audit draws the threshold with the estimator's
    # own eps0 (grow_private_tree is what fit calls, checked above).
    def audit(cls):
        clf = cls(epsilon=1.0, delta=1e-2, bounds=(0, 1), classes=[0, 1], n_estimators=1,
                  max_depth=1, n_bins=4, split_share=0.9, random_state=0).fit(*_S0)
        scale = clf.split_epsilon_ / (2 * GINI_SENSITIVITY)

        def mechanism(data, rng):
            B = bin_data(data[0], np.zeros(1), np.ones(1), 4)
            return grow_private_tree(B, np.eye(2)[data[1]], 1, 4, 1, scale,
                                     rng)[0].threshold[:1]

        return audit_epsilon(mechanism, _S0, _S1, n_runs=3000, delta=1e-2,
                             random_state=0).epsilon_lower_bound

    assert audit(DPRandomForestClassifier) <= 1.0
    assert audit(_QuarterNoiseForest) > 1.0


def test_forest_fit_draws_its_split_with_the_reported_epsilon():
    # What the split audit relies on: fit's threshold frequencies are the mechanism's.
    kw = dict(epsilon=1.0, delta=1e-2, bounds=(0, 1), classes=[0, 1], n_estimators=1,
              max_depth=1, n_bins=4, split_share=0.9)
    fits = [DPRandomForestClassifier(random_state=s, **kw).fit(*_S0) for s in range(400)]
    scale = fits[0].split_epsilon_ / (2 * GINI_SENSITIVITY)
    expected = np.exp(scale * _gini_scores(np.array([0, 1, 1, 1]), _S0[1], 3))
    expected /= expected.sum()
    freq = np.bincount([f.trees_[0].threshold[0] for f in fits], minlength=3) / 400
    np.testing.assert_allclose(freq, expected, atol=0.07)


# Four rows, four bins, gradients +-1 (binary, c = 1): flipping the first row's gradient
# (its label) moves the norm scores of the three thresholds from (4, 4, 0) to (2, 2, 2),
# the pair of largest privacy loss found by enumerating all 4-row data sets with gradients
# in {-1, 1}.
_N0 = (np.array([0, 0, 2, 2]), np.array([-1.0, -1.0, 1.0, 1.0]))
_N1 = (np.array([0, 0, 2, 2]), np.array([1.0, -1.0, 1.0, 1.0]))
_SPLIT_ONLY = dict(epsilon=1.0, delta=1e-2, bounds=(0, 1), classes=[0, 1], n_estimators=1,
                   max_depth=1, n_bins=4, split_share=0.9)


def test_boosting_split_audit_passes_and_catches_a_quarter_of_the_noise():
    # The norm-score split alone, drawn with the estimator's own eps0 and sensitivity
    # (what fit draws, checked below).
    def audit(cls):
        clf = cls(random_state=0, **_SPLIT_ONLY).fit(*_S0)
        scale = clf.split_epsilon_ / (2 * norm_sensitivity(1.0))

        def mechanism(data, rng):
            return grow_private_tree(data[0][:, None].astype(np.uint8), data[1][:, None], 1, 4,
                                     1, scale, rng, score="norm")[0].threshold[:1]

        return audit_epsilon(mechanism, _N0, _N1, n_runs=3000, delta=1e-2,
                             random_state=0).epsilon_lower_bound

    assert audit(DPHistGradientBoostingClassifier) <= 1.0
    assert audit(_QuarterNoiseBoosting) > 1.0


def test_boosting_fit_draws_its_split_with_the_reported_epsilon():
    # First round: gradients p - y at the noisy prior p, thresholds drawn by the exponential
    # mechanism on their norm score with coefficient split_epsilon_ / (2 * 2 c), c = 1.
    fits = [DPHistGradientBoostingClassifier(random_state=s, **_SPLIT_ONLY).fit(*_S0)
            for s in range(400)]
    bins = np.array([0, 1, 1, 1])
    expected = np.zeros(3)
    for f in fits:
        p = 1 / (1 + np.exp(-f.init_score_[0]))
        w = np.exp(f.split_epsilon_ / (2 * norm_sensitivity(1.0))
                   * _norm_scores(bins, p - _S0[1], 3))
        expected += w / w.sum() / len(fits)
    freq = np.bincount([f.trees_[0].threshold[0] for f in fits], minlength=3) / 400
    np.testing.assert_allclose(freq, expected, atol=0.07)


def test_boosting_releases_the_exact_sums_plus_the_calibrated_noise():
    # What the vectorized audit below simulates: the first round's leaf sums are the
    # exact gradient and hessian sums at the noisy prior, plus N(0, sigma^2) noise.
    fits = [_ObservedBoosting(delta=1e-3, random_state=s, **_TINY).fit(*_D0) for s in range(300)]
    p = np.array([1 / (1 + np.exp(-f.init_score_[0])) for f in fits])
    exact_g = np.array([f.exact_[0] for f in fits])
    np.testing.assert_allclose(exact_g[:, 0], p)  # the row's gradient p - 0, left leaf
    np.testing.assert_allclose(exact_g[:, 1], 0.0)
    np.testing.assert_allclose([f.exact_[1][0] for f in fits], p * (1 - p))
    _, sigma_g, sigma_h = fits[0].noise_scales_
    noise_g = np.array([f.released_[0] for f in fits]) - exact_g
    noise_h = np.array([f.released_[1] - f.exact_[1] for f in fits])
    assert np.std(noise_g) == pytest.approx(sigma_g, rel=0.1)
    assert np.std(noise_h) == pytest.approx(sigma_h, rel=0.1)


def test_boosting_audit_passes_and_catches_a_quarter_of_the_noise():
    # The first round's release (prior counts, then leaf sums), vectorized with the
    # estimator's own noise scales; the statistic is the log-likelihood ratio of the leaf
    # sums given the released prior p. The first round uses about a quarter of the
    # gradient budget (p - y moves by 1; the calibration allows 2 for later rounds), so
    # the audit needs delta = 1e-3 and 20000 runs to certify the quarter-noise copy.
    def audit(cls):
        scales = cls(delta=1e-3, random_state=0, **_TINY).fit(*_D0).noise_scales_
        sigma_prior, sigma_g, sigma_h = scales

        def mechanism(data, rng, n):
            left = data[0][0, 0] < 0.5
            counts = np.array([1.0, 0.0]) if left else np.array([0.0, 1.0])
            counts = np.maximum(counts + sigma_prior * rng.standard_normal((n, 2)), 1.0)
            p = counts[:, 1] / counts.sum(axis=1)
            h = p * (1 - p)
            G = sigma_g * rng.standard_normal((n, 2))
            H = sigma_h * rng.standard_normal((n, 2))
            if left:
                G[:, 0] += p
                H[:, 0] += h
            else:
                G[:, 1] += p - 1
                H[:, 1] += h
            mu0 = np.column_stack([p, 0 * p])
            mu1 = np.column_stack([0 * p, p - 1])
            llr_g = (np.sum(G * (mu1 - mu0), axis=1)
                     - (np.sum(mu1**2, axis=1) - np.sum(mu0**2, axis=1)) / 2) / sigma_g**2
            return llr_g + h * (H[:, 1] - H[:, 0]) / sigma_h**2

        return audit_epsilon(mechanism, _D0, _D1, n_runs=20000, delta=1e-3, vectorized=True,
                             random_state=0).epsilon_lower_bound

    assert audit(DPHistGradientBoostingClassifier) <= 1.0
    assert audit(_QuarterNoiseBoosting) > 1.0


# -- input refused before any budget is spent ----------------------------------------------

@pytest.mark.parametrize("cls", MODELS)
@pytest.mark.parametrize("params,error", [
    (dict(bounds=None), "bounds"),
    (dict(bounds=(1, 0)), "lower < upper"),
    (dict(bounds=[(0, 1)] * 3), "shape"),
    (dict(n_bins=1), "n_bins"),
    (dict(max_depth=0), "max_depth"),
    (dict(n_estimators="many"), "n_estimators"),
    (dict(n_estimators=0), "n_estimators"),
    (dict(classes=[0, 2]), "not in classes"),
    (dict(delta=0.0), "delta"),
])
def test_bad_input_is_refused_before_any_spend(cls, params, error):
    X, y = _xor_data(100)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    kwargs = dict(bounds=(0, 1), classes=[0, 1], accountant=acc, random_state=0)
    kwargs.update(params)
    with pytest.raises((ValueError, TypeError), match=error):
        cls(**kwargs).fit(X, y)
    assert acc.spent is None


def test_boosting_refuses_a_bad_learning_rate_and_clipping_norm():
    X, y = _xor_data(100)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    for params in (dict(learning_rate=0.0), dict(max_gradient_norm=-1.0)):
        with pytest.raises(ValueError):
            DPHistGradientBoostingClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc,
                                             **params).fit(X, y)
    assert acc.spent is None


@pytest.mark.parametrize("cls", MODELS)
def test_spends_the_budget_once_and_reports_it(cls):
    X, y = _xor_data(500)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    clf = cls(epsilon=0.5, delta=1e-6, bounds=(0, 1), classes=[0, 1], accountant=acc,
              random_state=0).fit(X, y)
    assert clf.privacy_spent_.epsilon == 0.5 and clf.privacy_spent_.delta == 1e-6
    assert acc.spent.epsilon == pytest.approx(0.5)


# -- accuracy ------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", MODELS)
def test_learns_an_interaction_a_linear_model_cannot(cls):
    # XOR of two features (off-centre, so that greedy splits see a marginal gain).
    X, y = _xor_data(20000)
    X_test, y_test = _xor_data(2000, seed=1)
    assert LogisticRegression().fit(X, y).score(X_test, y_test) < 0.7
    clf = cls(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    assert clf.score(X_test, y_test) > 0.85


def test_boosting_multiclass_beats_the_majority_class():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(6000, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [0.5, 0.9, 1.2])
    clf = DPHistGradientBoostingClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1, 2, 3],
                                           random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (6000, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.score(X, y) > np.bincount(y).max() / y.size + 0.2


@pytest.mark.parametrize("cls", MODELS)
def test_huge_epsilon_gives_the_noise_free_model(cls):
    X, y = _xor_data(3000)
    clf = cls(epsilon=1e300, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.95


def test_forest_results_do_not_depend_on_n_jobs():
    X, y = _xor_data(500)
    kw = dict(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0)
    a = DPRandomForestClassifier(n_jobs=1, **kw).fit(X, y)
    b = DPRandomForestClassifier(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
