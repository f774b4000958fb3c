"""Which parts of a candidate read the private data, and which are provably public.

A candidate of :class:`~skdp.model_selection.PrivateParameterSelector` is one
skdp private classifier, or a :class:`~sklearn.pipeline.Pipeline` whose steps
are each either private (they spend a budget, and the pipeline spends the
sum) or on an explicit list of transformers whose ``fit`` reads nothing from
the data but its shape and whose ``transform`` maps each row on its own.
Anything else is refused: fitted on a part, it would ship statistics of that
part's rows, without noise, inside the released model.
"""

import numpy as np
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, PolynomialFeatures

from skdp.base import DPEstimatorMixin
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

__all__ = ["candidate_steps", "seeded_steps"]


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


# Transformers whose fit reads only the number of columns (and their names) of
# its input, and whose transform maps each row on its own with parameters and
# public constants (checked in scikit-learn 1.9's and skdp's source):
# - PublicBoundsScaler: fit checks the public bounds against n_features; per-row affine map.
# - RandomFourierFeatures: fit draws the frequencies from random_state only (seed 001,
#   Sec. 4: the frequencies are public); phi(x) depends on x alone.
# - Normalizer, Binarizer: fit only validates X (stateless); per-row norm, per-entry threshold.
# - PolynomialFeatures: fit derives the output powers from n_features; products within a row.
# - FunctionTransformer: fit only validates X unless it checks an inverse; the transform is
#   per entry only for one of NumPy's one-argument ufuncs (or None, the identity), and it
#   must be finite on finite input (see _PROBE).
# The value says why one instance's settings break that (or None).
PUBLIC_TRANSFORMERS = {
    Binarizer: _always_public,
    FunctionTransformer: _function_transformer_issue,
    Normalizer: _always_public,
    PolynomialFeatures: _always_public,
    PublicBoundsScaler: _always_public,
    RandomFourierFeatures: _always_public,
}

# skdp private transformers allowed before the last step: their fit is DP for
# replace-one neighbours with budget (epsilon, delta), and their transform maps each row
# on its own with the released statistics, so the next step's training rows are still
# neighbours (adaptive basic composition, seed 004 Lemma 2.1.5).
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

    Seed 002, Alg. 3 (the selector's Privacy section) composes candidates that are DP for
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
            f"guarantee (seed 002, Alg. 3) composes candidates that are DP for replace-one "
            f"neighbours with features and labels protected; for replace-one neighbours its "
            f"epsilon would double. Select its parameters on public data instead. Nothing "
            f"was spent.")


def _skipped(step):
    return step is None or (isinstance(step, str) and step == "passthrough")


def _is_private_classifier(step):
    return (isinstance(step, DPEstimatorMixin) and is_classifier(step)
            and "epsilon" in step.get_params(deep=False))


def _check_pipeline_step(name, step):
    """True when ``step`` spends a budget, False when it is public; raise otherwise."""
    what = f"step {name!r} ({type(step).__name__})"
    if type(step) in PRIVATE_TRANSFORMERS:
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


def candidate_steps(estimator):
    """The private parts of a candidate, after checking every other part is public.

    Parameters
    ----------
    estimator : estimator
        A candidate (an skdp classifier or a ``Pipeline``), parameters set.

    Returns
    -------
    private : list of (str or None, estimator)
        The steps that spend a budget, with their names in the pipeline
        (``None`` for an estimator alone).

    Raises
    ------
    TypeError, ValueError
        Naming the refused step and why.
    """
    if not isinstance(estimator, Pipeline):
        if "epsilon" not in estimator.get_params():
            raise TypeError(
                f"estimator must be a private estimator with an 'epsilon' parameter, or a "
                f"sklearn.pipeline.Pipeline of private and public steps; got "
                f"{type(estimator).__name__}.")
        _check_replace_one(f"estimator ({type(estimator).__name__})", estimator)
        return [(None, estimator)]
    if type(estimator) is not Pipeline:
        raise TypeError(
            f"estimator is a subclass of Pipeline ({type(estimator).__name__}), which may fit "
            f"its steps differently; only sklearn.pipeline.Pipeline itself is accepted.")
    *head, (last_name, last) = estimator.steps
    if not _is_private_classifier(last):
        raise TypeError(
            f"the pipeline's last step {last_name!r} ({type(last).__name__}) must be an skdp "
            f"private classifier (with an 'epsilon' parameter): the selector trains it "
            f"privately on its part and counts its correct predictions on the holdout. "
            f"Nothing was spent.")
    _check_replace_one(f"the pipeline's last step {last_name!r} ({type(last).__name__})", last)
    private = [(name, step) for name, step in head
               if not _skipped(step) and _check_pipeline_step(name, step)]
    return private + [(last_name, last)]


def seeded_steps(estimator):
    """The parts of a candidate whose ``random_state`` the selector sets.

    Every step with a ``random_state`` parameter (the estimator itself when
    it is not a pipeline), in order.
    """
    if not isinstance(estimator, Pipeline):
        return [estimator]
    return [step for _, step in estimator.steps
            if not _skipped(step) and "random_state" in step.get_params(deep=False)]
