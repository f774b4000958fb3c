"""Which parts of a candidate read the private data, and which are provably public.

A candidate of :class:`~skdp.model_selection.PrivateParameterSelector` is one
skdp private classifier, or a :class:`~sklearn.pipeline.Pipeline` whose steps
are each either private (they spend a budget, and the pipeline spends the
sum) or on an explicit list of transformers whose ``fit`` reads nothing from
the data but its shape and whose ``transform`` maps each row on its own.
Anything else is refused: fitted on a part, it would ship statistics of that
part's rows, without noise, inside the released model.
"""

from numbers import Real

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (Binarizer, FunctionTransformer, Normalizer, OneHotEncoder,
                                   OrdinalEncoder, PolynomialFeatures)

from skdp.base import DPEstimatorMixin
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

__all__ = ["candidate_steps", "column_transformer_parts", "contains_column_transformer",
           "fitted_private_steps", "output_bound_issue", "public_front", "seeded_steps",
           "verbose_parts"]


# Finite doubles from every range a (validated, finite) entry may hold, and each side of the
# domain edges of NumPy's one-argument ufuncs (0, +-1): a ufunc that returns NaN or infinity on
# one of them is refused, because the private step after it would reject such transformed rows
# only after the selector has charged its total (an error that depends on the data).
_PROBE = np.array([-np.finfo(np.float64).max, -1e300, -1e10, -2.0, -1.0, -0.5, -5e-324, -0.0,
                   0.0, 5e-324, 0.5, 1.0, 2.0, 1e10, 1e300, np.finfo(np.float64).max])


def _function_transformer_issue(step):
    """Why a FunctionTransformer may read more than one row at a time, or fail on some row."""
    func = step.func
    # NumPy's own ufuncs only: np.frompyfunc makes a ufunc out of any Python function,
    # which may keep state from one entry to the next.
    if func is not None and not (isinstance(func, np.ufunc) and func.nin == func.nout == 1
                                 and getattr(np, func.__name__, None) is func):
        return (f"its func={func!r} is neither None nor one of NumPy's own ufuncs of one "
                "argument and one result (np.tanh, np.abs, np.arctan, ...), the functions "
                "known to act on each entry alone; a general function (or np.frompyfunc of "
                "one) may mix rows (X - X.mean(axis=0)), and then one private row changes "
                "every transformed row and every holdout prediction. If your function maps "
                "each row on its own, apply it to X before the selector (and before "
                "predicting)")
    if step.kw_args:
        return f"it has kw_args={step.kw_args!r}, which may change what the ufunc does"
    if func is not None and step.inverse_func is not None and step.check_inverse:
        return ("with inverse_func and check_inverse=True its fit evaluates both functions "
                "on the private rows and warns depending on the result; pass "
                "check_inverse=False")
    if func is not None:
        with np.errstate(all="ignore"):
            try:
                finite = bool(np.all(np.isfinite(func(_PROBE))))
            except TypeError:
                finite = False
        if not finite:
            return (f"np.{func.__name__} gives NaN or infinity (or fails) for some finite "
                    "inputs, and the private step after it would refuse such rows only after "
                    "the budget is charged, an error that depends on the private data. Use a "
                    "ufunc finite everywhere (np.tanh, np.arctan, np.abs, ...), or apply the "
                    "function to X before the selector (and before predicting)")
    return None


def _always_public(step):
    return None


def _encoder_issue(step, unknown_options):
    """Why an OneHotEncoder or OrdinalEncoder may read more than its public categories."""
    name = type(step).__name__
    if isinstance(step.categories, str):  # 'auto'
        return ("categories='auto' reads the categories from the private rows of each part "
                "and ships them in categories_ (a rare category names its record); pass the "
                "public list of every column's categories, categories=[[...], ...]")
    if step.handle_unknown not in unknown_options:
        return (f"handle_unknown={step.handle_unknown!r}: a private row whose category is not "
                f"in the list would " + ("raise an error" if step.handle_unknown == "error"
                                         else "emit a warning")
                + " (after the budget is charged, an event that depends on the private data); "
                f"pass handle_unknown={unknown_options[0]!r}")
    if step.min_frequency is not None or step.max_categories is not None:
        return ("min_frequency or max_categories counts each category in the private rows "
                "(infrequent categories are grouped by those exact counts); leave both None")
    if name == "OneHotEncoder" and step.drop is not None:
        return (f"drop={step.drop!r}: with a drop, transform warns when a row holds an unknown "
                "category (a warning that depends on the private holdout rows); pass "
                "drop=None, and unknown categories are encoded as all zeros silently")
    return None


def _one_hot_issue(step):
    return _encoder_issue(step, ("ignore", "infrequent_if_exist"))


def _ordinal_issue(step):
    issue = _encoder_issue(step, ("use_encoded_value",))
    if issue is None and _is_nan(step.unknown_value):
        # The public rows of the dry run may hold only known categories (0 in a numeric
        # column), so the NaN that a private row's unknown category becomes would be refused
        # by the classifier only after the charge.
        return ("unknown_value=nan: a private row whose category is not in the list would "
                "become NaN, which the next step refuses only after the budget is charged "
                "(an error that depends on the private data); pass a finite unknown_value, "
                "such as -1")
    if issue is None and _is_nan(step.encoded_missing_value) and any(
            _is_nan(c) or c is None for column in step.categories for c in column):
        # A missing category is encoded as encoded_missing_value; the public rows' None
        # is an unknown category in an object column (unknown_value), a private np.nan is
        # the missing one (scikit-learn 1.9), so the dry run does not see the NaN.
        return ("a missing value is among its categories and encoded_missing_value=nan: a "
                "private row with a missing value would become NaN, which the next step "
                "refuses only after the budget is charged (an error that depends on the "
                "private data); pass a finite encoded_missing_value, such as -2")
    return issue


def _is_nan(value):
    return isinstance(value, Real) and np.isnan(value)


# Transformers whose fit reads only the number of columns (and their names) of
# its input, and whose transform maps each row on its own with parameters and
# public constants (checked in scikit-learn 1.9's and skdp's source):
# - PublicBoundsScaler: fit checks the public bounds against n_features; per-row affine map.
# - RandomFourierFeatures: fit draws the frequencies from random_state only (Rubinstein et al. (2012),
#   Sec. 4: the frequencies are public); phi(x) depends on x alone.
# - Normalizer, Binarizer: fit only validates X (stateless); per-row norm, per-entry threshold.
# - PolynomialFeatures: fit derives the output powers from n_features; products within a row.
# - FunctionTransformer: fit only validates X unless it checks an inverse; the transform is
#   per entry only for one of NumPy's one-argument ufuncs (or None, the identity), and it
#   must be finite on finite input (see _PROBE).
# - OneHotEncoder, OrdinalEncoder with explicit categories (scikit-learn 1.9,
#   preprocessing/_encoders.py, _BaseEncoder._fit): fit casts each column's given categories
#   to that column's dtype (schema, public) and checks them (sorted if numeric, no duplicate,
#   NaN last): nothing from the rows. It reads the rows only (a) with categories='auto'
#   (_unique(Xi)), (b) with handle_unknown='error' (_check_unknown(Xi, cats) raises on an
#   unknown category, in fit and transform), (c) with min_frequency or max_categories
#   (_get_counts: infrequent categories from the exact counts). OneHotEncoder.transform also
#   warns on an unknown category when drop is set or handle_unknown='warn'
#   (warn_on_unknown), a warning that depends on the holdout rows; with drop=None and
#   handle_unknown 'ignore' or 'infrequent_if_exist' (no infrequent category then) an unknown
#   category is an all-zero row, silently. OrdinalEncoder with
#   handle_unknown='use_encoded_value' maps it to unknown_value, silently (refused when NaN:
#   the next step would reject the row after the charge). Both map each row on its own (a
#   lookup in the fitted, public categories_).
# The value says why one instance's settings break that (or None).
PUBLIC_TRANSFORMERS = {
    Binarizer: _always_public,
    FunctionTransformer: _function_transformer_issue,
    Normalizer: _always_public,
    OneHotEncoder: _one_hot_issue,
    OrdinalEncoder: _ordinal_issue,
    PolynomialFeatures: _always_public,
    PublicBoundsScaler: _always_public,
    RandomFourierFeatures: _always_public,
}

# skdp private transformers allowed before the last step: their fit is DP for
# replace-one neighbours with budget (epsilon, delta), and their transform maps each row
# on its own with the released statistics, so the next step's training rows are still
# neighbours (adaptive basic composition, Thakkar (2019), Lemma 2.1.5).
PRIVATE_TRANSFORMERS = (DPStandardScaler,)

_HINT = (
    "Use skdp.preprocessing.DPStandardScaler (a private mean and scale, paid from the budget) "
    "or skdp.preprocessing.PublicBoundsScaler (public bounds, free), or fit the transformer "
    "on public data and apply it to X before the selector. Accepted before the last step: "
    + ", ".join(sorted(cls.__name__ for cls in (*PUBLIC_TRANSFORMERS, *PRIVATE_TRANSFORMERS)))
    + ", 'passthrough' and None. Nothing was spent."
)


def _check_replace_one(what, step):
    """Refuse a candidate whose guarantee is weaker than the selector's analysis needs.

    Chaudhuri et al. (2011), Alg. 3 (the selector's Privacy section) composes candidates that are DP for
    replace-one neighbours with features and labels protected. An estimator that declares
    another relation (``_neighbouring_relation``; :class:`~skdp.ensemble.
    ModelAgnosticPrivateClassifier`: add/remove, and labels only when fitted without
    ``X_public``, as every candidate is) would be over-claimed: replacing a record is a
    removal and an addition, twice its epsilon.
    """
    relation = getattr(step, "_neighbouring_relation", "replace-one")
    if relation != "replace-one":
        raise TypeError(
            f"{what} is differentially private for {relation} neighbours, but the selector's "
            f"guarantee (Chaudhuri et al. (2011), Alg. 3) composes candidates that are DP for replace-one "
            f"neighbours with features and labels protected; for replace-one neighbours its "
            f"epsilon would double. Select its parameters on public data instead. Nothing "
            f"was spent.")


def _check_nested_selector(what, step):
    """Refuse a nested PrivateParameterSelector whose candidates have parts before their classifier.

    It checks those parts against its input (the output bounds and the public steps on X)
    only when the outer selector fits it, after the outer charge: its refusal (or the
    classifier's, on the rows it let through) would depend on the private rows.
    """
    from skdp.model_selection._parameter_tuning import PrivateParameterSelector

    inner = step.estimator if isinstance(step, PrivateParameterSelector) else None
    if isinstance(inner, Pipeline) and any(not _skipped(part) for _, part in inner.steps[:-1]):
        raise TypeError(
            f"{what} is a nested PrivateParameterSelector whose candidates are pipelines: it "
            f"would check their parts on its input only after the outer selector's charge, "
            f"and refuse rows then (an error that depends on the private data). Put every "
            f"step in one selector (a pipeline grid), or nest a selector over a classifier "
            f"alone. Nothing was spent.")


def _check_pipeline_step(name, step):
    """True when ``step`` spends a budget, False when it is public; raise otherwise."""
    what = f"step {name!r} ({type(step).__name__})"
    if type(step) in PRIVATE_TRANSFORMERS:
        _check_replace_one(f"the pipeline's {what}", step)
        return True
    if type(step) in PUBLIC_TRANSFORMERS:
        issue = PUBLIC_TRANSFORMERS[type(step)](step)
        if issue is None:
            return False
        raise ValueError(f"the pipeline's {what} is refused: {issue}. Nothing was spent.")
    if isinstance(step, DPEstimatorMixin):
        raise TypeError(
            f"the pipeline's {what} is an skdp private estimator, but before the last step "
            f"the selector accepts only private transformers known to map each row on its "
            f"own with their released statistics. {_HINT}")
    raise TypeError(
        f"the pipeline's {what} is not private and not known to read nothing from the "
        f"data: fitted on a part, it would ship exact statistics of that part's private "
        f"rows inside best_estimator_ (StandardScaler's mean_ and scale_, for one). {_HINT}")


def _skipped(step):
    return step is None or (isinstance(step, str) and step in ("passthrough", "drop"))


def _is_private_classifier(step):
    return (isinstance(step, DPEstimatorMixin) and is_classifier(step)
            and "epsilon" in step.get_params(deep=False))


def _column_spec_issue(columns):
    """Why a ColumnTransformer column specification may read more than the schema."""
    # sklearn/compose/_column_transformer.py (1.9), _get_column_indices: an int, a str, a
    # slice, a list or array of them, or a boolean mask selects columns by position or name
    # (public: the shape and the feature names). A callable is called with X itself
    # (_validate_column_callables: columns(X)) and may select columns by their values; only
    # make_column_selector is known to read nothing but the names and dtypes (its __call__
    # keeps df.iloc[:1] only for select_dtypes and a regex on the column names).
    if callable(columns) and type(columns) is not make_column_selector:
        return (f"its column selector {columns!r} is a callable, which receives the private X "
                f"and may choose columns by their values; give the columns as indices, names, "
                f"a slice, a boolean mask or a sklearn.compose.make_column_selector(pattern=, "
                f"dtype_include=, dtype_exclude=)")
    return None


def _check_column_transformer(what, ct):
    """Refuse the settings of a ColumnTransformer under which it reads the private rows."""
    for name, _, columns in ct.transformers:
        issue = _column_spec_issue(columns)
        if issue is not None:
            raise ValueError(f"{what}, transformer {name!r}: {issue}. Nothing was spent.")
    # ColumnTransformer._hstack (1.9): when any part's output is sparse, the output is sparse
    # iff nnz / size < sparse_threshold, a density that depends on the private rows (zeros in
    # numeric columns, all-zero one-hot rows for unknown categories); the next step would then
    # take its dense or its sparse code path depending on the data (and a candidate could
    # fail only on the real rows). With sparse_threshold=0 the output is always dense.
    if ct.sparse_threshold != 0:
        raise ValueError(
            f"{what} has sparse_threshold={ct.sparse_threshold!r}: whether it returns a sparse "
            f"or a dense matrix depends on the density of the transformed private rows, and "
            f"the next step's computation with it. Pass sparse_threshold=0 (always dense). "
            f"Nothing was spent.")
    # remainder: 'drop', 'passthrough' or a transformer, checked as a part below.
    # transformer_weights are public constants multiplying each part's output.


def _selects_nothing(columns):
    """Whether a fitted ColumnTransformer's resolved column selection is empty.

    scikit-learn (1.9, ``ColumnTransformer._iter``) does not fit a transformer whose
    selection is an empty list or an all-False boolean mask, and leaves the unfitted one in
    ``transformers_``: it reads no row and releases nothing.
    """
    if hasattr(columns, "dtype") and np.asarray(columns).dtype == bool:
        return not np.any(columns)
    if hasattr(columns, "__len__") and not isinstance(columns, str):
        return len(columns) == 0 or (all(isinstance(c, (bool, np.bool_)) for c in columns)
                                     and not any(columns))
    return False


def _parts(container, fitted):
    """``(name, part)`` of a ColumnTransformer, FeatureUnion or Pipeline, else None.

    With ``fitted``, a fitted ColumnTransformer's ``transformers_`` (the clones it fitted,
    not the objects in ``transformers``), without the parts given no column (not fitted); a
    FeatureUnion and a Pipeline keep their fitted parts in ``transformer_list`` and
    ``steps``.
    """
    kind = type(container)
    if kind is Pipeline:
        return list(container.steps)
    if kind is FeatureUnion:
        return list(container.transformer_list)
    if kind is ColumnTransformer:
        if fitted and hasattr(container, "transformers_"):
            return [(name, part) for name, part, columns in container.transformers_
                    if not _selects_nothing(columns)]
        return ([(name, part) for name, part, _ in container.transformers]
                + [("remainder", container.remainder)])
    return None


def _walk(name, part, fitted=False, check=False):
    """``(path, leaf)`` for every part nested in ``part``, paths as in ``get_params``."""
    children = _parts(part, fitted)
    if children is None:
        yield name, part
        return
    if check:
        what = f"the pipeline's step {name!r} ({type(part).__name__})"
        if type(part) is ColumnTransformer:
            _check_column_transformer(what, part)
        elif type(part) is Pipeline and part.memory is not None:
            raise ValueError(f"{what} has memory={part.memory!r}: it would store transformers "
                             f"fitted on private rows on disk. Pass memory=None. Nothing was "
                             f"spent.")
    for child_name, child in children:
        if not _skipped(child):
            yield from _walk(f"{name}__{child_name}", child, fitted, check)


def candidate_steps(estimator):
    """The private parts of a candidate, after checking every other part is public.

    Parameters
    ----------
    estimator : estimator
        A candidate (an skdp classifier or a ``Pipeline``), parameters set.
        Before its last step a pipeline may nest ``Pipeline``,
        ``ColumnTransformer`` and ``FeatureUnion`` (those exact types), each
        checked part by part.

    Returns
    -------
    private : list of (str or None, estimator)
        The parts that spend a budget, named by their ``get_params`` path
        (``prep__num`` for a transformer ``num`` of a ColumnTransformer step
        ``prep``; ``None`` for an estimator alone), the classifier last.

    Raises
    ------
    TypeError, ValueError
        Naming the refused part and why.
    """
    if not isinstance(estimator, Pipeline):
        # An 'epsilon' parameter alone proves nothing (SGDClassifier's is a loss margin).
        if not _is_private_classifier(estimator):
            raise TypeError(
                f"estimator must be an skdp private classifier (with an 'epsilon' "
                f"parameter), or a sklearn.pipeline.Pipeline of private and public steps "
                f"ending with one; got {type(estimator).__name__}. Nothing was spent.")
        _check_replace_one(f"estimator ({type(estimator).__name__})", estimator)
        _check_nested_selector("estimator", estimator)
        return [(None, estimator)]
    if type(estimator) is not Pipeline:
        raise TypeError(
            f"estimator is a subclass of Pipeline ({type(estimator).__name__}), which may fit "
            f"its steps differently; only sklearn.pipeline.Pipeline itself is accepted.")
    if estimator.memory is not None:
        raise ValueError(f"estimator has memory={estimator.memory!r}: it would store "
                         f"transformers fitted on private rows on disk. Pass memory=None. "
                         f"Nothing was spent.")
    *head, (last_name, last) = estimator.steps
    if not _is_private_classifier(last):
        raise TypeError(
            f"the pipeline's last step {last_name!r} ({type(last).__name__}) must be an skdp "
            f"private classifier (with an 'epsilon' parameter): the selector trains it "
            f"privately on its part and counts its correct predictions on the holdout. "
            f"Nothing was spent.")
    _check_replace_one(f"the pipeline's last step {last_name!r} ({type(last).__name__})", last)
    _check_nested_selector(f"the pipeline's last step {last_name!r}", last)
    # Every private part, wherever nested, sees the same rows (a ColumnTransformer and a
    # FeatureUnion give each part all rows): basic composition, Thakkar (2019), Lemma 2.1.5.
    private = [(path, leaf) for name, step in head if not _skipped(step)
               for path, leaf in _walk(name, step, check=True)
               if _check_pipeline_step(path, leaf)]
    return private + [(last_name, last)]


def fitted_private_steps(estimator):
    """The private parts of a fitted candidate, as fitted (see :func:`candidate_steps`)."""
    if not isinstance(estimator, Pipeline):
        return [(None, estimator)]
    *head, (last_name, last) = estimator.steps
    private = [(path, leaf) for name, step in head if not _skipped(step)
               for path, leaf in _walk(name, step, fitted=True)
               if type(leaf) in PRIVATE_TRANSFORMERS]
    return private + [(last_name, last)]


def _holds_private(name, part):
    return not _skipped(part) and any(type(leaf) in PRIVATE_TRANSFORMERS
                                      for _, leaf in _walk(name, part))


def public_front(estimator):
    """The public parts of a candidate that read its input rows, as an unfitted Pipeline.

    A copy of its leading steps that hold no private part, and of the first step that
    holds one if it is a ColumnTransformer or a FeatureUnion: its public parts, with the
    parts that hold a private one dropped. None when there is no such part. Those parts
    are fitted from the schema alone, so, fitted on public rows with the candidate's own
    generators (a copy made by ``clone`` keeps their state), they transform the rows
    exactly as the candidate's will.
    """
    if not isinstance(estimator, Pipeline):
        return None
    front = clone(estimator)
    n = 0
    while n < len(front.steps) - 1 and not _holds_private(*front.steps[n]):
        n += 1
    step = front.steps[n][1]
    if n < len(front.steps) - 1 and type(step) in (ColumnTransformer, FeatureUnion):
        if any(not _skipped(part) and not _holds_private(child, part)
               for child, part in _parts(step, fitted=False)):
            if type(step) is FeatureUnion:
                step.transformer_list = [(child, "drop" if _holds_private(child, part)
                                          else part) for child, part in step.transformer_list]
            else:
                step.transformers = [(child, "drop" if _holds_private(child, part) else part,
                                      columns) for child, part, columns in step.transformers]
                if _holds_private("remainder", step.remainder):
                    step.remainder = "drop"
            n += 1
    return front[:n] if n else None


def column_transformer_parts(estimator):
    """The paths of the parts of a candidate nested in a ColumnTransformer.

    Whether such a part is fitted (and spends) depends on its column selection, resolved
    against the schema of its input only when the candidate is fitted.
    """
    found = set()

    def visit(path, part, inside):
        children = _parts(part, fitted=False)
        if children is None:
            if inside:
                found.add(path)
            return
        inside = inside or type(part) is ColumnTransformer
        for name, child in children:
            if not _skipped(child):
                visit(f"{path}__{name}", child, inside)

    if isinstance(estimator, Pipeline):
        for name, step in estimator.steps[:-1]:
            if not _skipped(step):
                visit(name, step, False)
    return found


def contains_column_transformer(estimator):
    """Whether a ColumnTransformer is nested anywhere in a candidate."""
    return any(type(part) is ColumnTransformer for part in _containers(estimator))


def _containers(part):
    children = _parts(part, fitted=False)
    if children is not None:
        yield part
        for _, child in children:
            if not _skipped(child):
                yield from _containers(child)


def verbose_parts(estimator):
    """The paths of the parts of a candidate (itself included, as ``''``) set to print.

    A Pipeline, FeatureUnion or ColumnTransformer with ``verbose=True`` prints each part's
    fitting time, and a private estimator with ``verbose`` its solver's progress: both depend
    on the private rows (and are not covered by the guarantee). A nested
    PrivateParameterSelector prints only public values (its own candidates are checked when
    it fits).
    """
    from skdp.model_selection._parameter_tuning import PrivateParameterSelector

    found = []

    def visit(path, part):
        if part.get_params(deep=False).get("verbose") and not isinstance(
                part, PrivateParameterSelector):
            found.append(path)
        for name, child in _parts(part, fitted=False) or []:
            if not _skipped(child):
                visit(f"{path}__{name}" if path else name, child)

    visit("", estimator)
    return found


def seeded_steps(estimator, fitted=False):
    """The parts of a candidate whose ``random_state`` the selector sets.

    Every part with a ``random_state`` parameter (the estimator itself when
    it is not a pipeline; the parts nested in a pipeline's steps), in order;
    with ``fitted``, a fitted ColumnTransformer's fitted clones instead of
    its transformers (see :func:`_parts`).
    """
    if not isinstance(estimator, Pipeline):
        return [estimator]
    return [leaf for name, step in estimator.steps if not _skipped(step)
            for _, leaf in _walk(name, step, fitted=fitted)
            if "random_state" in leaf.get_params(deep=False)]


# --- Public bounds on the magnitude of every part's output ------------------------------------

_LARGEST = np.finfo(np.float64).max


def _scaler_bound(leaf, bound, n_rows):
    """Largest ``|output|`` of a fitted DPStandardScaler for ``|input| <= bound``, any noise.

    Its ``mean_`` lies in ``[lower_, upper_]`` and its variance, in units of the squared
    half-width, is at least ``min(square_sum_scale / n, 1)`` (the floor of
    :func:`~skdp.preprocessing._dp_scaler.private_standardization`, public: the noise scale
    and the number of rows), whatever the data and the noise draw.
    """
    reach = np.maximum(np.abs(leaf.lower_), np.abs(leaf.upper_))
    # Clipped: the bounds alone, not the smaller bound of X (no refusal that depends on X).
    value = reach if leaf.clip else np.full_like(reach, bound)
    if leaf.with_mean:
        value = value + reach
    if leaf.with_std:
        floor = min(leaf.noise_scales_[1] / n_rows, 1.0)
        value = value / ((leaf.upper_ - leaf.lower_) / 2.0 * np.sqrt(floor))
    return float(np.max(value))


def _affine_bound(leaf, bound):
    """A per-feature monotone map (PublicBoundsScaler) is largest at the ends of its input.

    Those are its bounds when it clips (whatever ``X`` holds), else ``+-bound``.
    """
    ends = (np.vstack([leaf.lower_, leaf.upper_]) if leaf.clip
            else np.outer([-bound, bound], np.ones(leaf.n_features_in_)))
    return float(np.max(np.abs(leaf._map(ends, forward=True))))  # transform, unvalidated


# NumPy's periodic one-argument ufuncs: |f| is not monotone between the probe points (sin
# is 1 at pi/2, between the probes 1 and 2), so their values there bound nothing. sin and cos
# are at most 1; tan is finite on every double (no double is an odd multiple of pi/2) but
# reaches 1.6e16 near pi/2: only the largest float bounds it.
_PERIODIC = {np.sin: 1.0, np.cos: 1.0, np.tan: _LARGEST}


def _function_bound(leaf, bound):
    if leaf.func is None:
        return bound
    if leaf.func in _PERIODIC:
        return _PERIODIC[leaf.func]
    # Every other accepted ufunc is finite on every finite input (_PROBE), and its |value|
    # is monotone between consecutive probe points (0 and +-1 are probes: the zeros and
    # the poles of log, reciprocal, arctanh, ...). Its largest |value| on [-bound, bound]
    # is then taken at the probe points inside or at the ends.
    points = np.concatenate([_PROBE[np.abs(_PROBE) <= bound], [-bound, bound]])
    return float(np.max(np.abs(leaf.func(points))))


def _ordinal_bound(leaf):
    codes = [len(categories) - 1.0 for categories in leaf.categories_]
    extra = [abs(value) for value in (leaf.unknown_value, leaf.encoded_missing_value)
             if isinstance(value, Real) and np.isfinite(value)]
    return max(codes + extra)


def _fourier_bound(leaf, template, bound):
    """``cos`` and ``sin`` of ``x . w`` are finite while ``|x . w| <= bound * sum_i |w_i|`` is.

    With the candidate's own frequencies: a clone of its (unfitted) part keeps the state
    of the generator it will draw them from.
    """
    frequencies = clone(template).fit(np.zeros((1, leaf.n_features_in_))).frequencies_
    reach = bound * np.max(np.sum(np.abs(frequencies), axis=0))
    return 1.0 if reach <= _LARGEST else np.inf


def _leaf_bound(leaf, template, bound, n_rows):
    kind = type(leaf)
    if kind is DPStandardScaler:
        return _scaler_bound(leaf, bound, n_rows)
    if kind is PublicBoundsScaler:
        return _affine_bound(leaf, bound)
    if kind is PolynomialFeatures:
        return float(np.float64(max(1.0, bound)) ** np.max(leaf.degree))  # bias 1, products
    if kind is FunctionTransformer:
        return _function_bound(leaf, bound)
    if kind is OrdinalEncoder:
        return _ordinal_bound(leaf)
    if kind is RandomFourierFeatures:
        return _fourier_bound(leaf, template, bound)
    if kind in (Binarizer, Normalizer, OneHotEncoder):
        return 1.0  # 0 or 1; a row over its norm (0 where the norm overflows); one-hot
    return np.inf  # not on the lists candidate_steps accepts


class _Unbounded(Exception):
    def __init__(self, path, part, bound):
        super().__init__(path)
        self.path, self.part, self.bound = path, part, bound


def _bound(path, part, templates, bound, n_rows, limit):
    """Largest ``|output|`` of the fitted ``part`` for ``|input| <= bound``; raise past limit."""
    if part is None or (isinstance(part, str) and part == "passthrough"):
        return bound
    if isinstance(part, str):  # 'drop'
        return 0.0
    kind = type(part)
    if kind is Pipeline:
        for name, step in part.steps:
            bound = _bound(f"{path}__{name}", step, templates, bound, n_rows, limit)
        return bound
    if kind in (FeatureUnion, ColumnTransformer):
        weights = part.transformer_weights or {}
        out = max([abs(weights.get(name, 1.0))
                   * _bound(f"{path}__{name}", child, templates, bound, n_rows, limit)
                   for name, child in _parts(part, fitted=True)], default=0.0)
    else:
        with np.errstate(all="ignore"):
            out = _leaf_bound(part, templates.get(path), bound, n_rows)
    if not out <= limit:  # NaN too
        raise _Unbounded(path, part, bound)
    return out


def output_bound_issue(fitted, template, bound, n_rows, limit=_LARGEST):
    """The first part whose output may be NaN or infinite for inputs bounded by ``bound``.

    Each part's output is bounded from public information only: its parameters, what it
    released on public input (the fitted shapes, categories and bounds of ``fitted``, a
    copy of ``template`` fitted on ``n_rows`` public rows) and, for a private part, the
    worst case over every noise draw. The bounds grow with ``bound``, so the refusal is
    "some record has an entry above a public threshold", a condition on each record alone,
    like NaN in ``X``.

    Parameters
    ----------
    fitted : estimator
        The candidate fitted on public rows.
    template : estimator
        The unfitted candidate (its random parts as they will draw).
    bound : float
        Largest ``|value|`` of the input.
    n_rows : int
        The number of rows each part is fitted on.
    limit : float, default=the largest float64
        The largest finite value of the input's floating dtype: a part that keeps the
        dtype (``PolynomialFeatures`` keeps float32) overflows past it. Lowered to an
        encoder's float ``dtype``'s, and applied to every part, including those whose
        output is float64 (stricter than needed there).

    Returns
    -------
    issue : None or (str, estimator, float)
        The part's path, the part and the bound of its input.
    """
    if not isinstance(fitted, Pipeline):
        return None
    templates = dict(template.get_params(deep=True))
    # An encoder's output has its dtype parameter (float16 holds no code above 65504), and
    # the parts after it (transformer_weights, PolynomialFeatures) may keep it.
    for name, step in fitted.steps[:-1]:
        for _, leaf in ([] if _skipped(step) else _walk(name, step, fitted=True)):
            if type(leaf) in (OneHotEncoder, OrdinalEncoder) and np.dtype(leaf.dtype).kind == "f":
                limit = min(limit, float(np.finfo(leaf.dtype).max))
    try:
        for name, step in fitted.steps[:-1]:
            bound = _bound(name, step, templates, bound, n_rows, limit)
    except _Unbounded as exc:
        return exc.path, exc.part, exc.bound
    return None
