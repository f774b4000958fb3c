"""Private hyperparameter selection on disjoint splits (Chaudhuri, Monteleoni and Sarwate 2011)."""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (check_array, check_consistent_length, check_is_fitted,
                                      column_or_1d, has_fit_parameter, validate_data)

from skdp.accounting import BudgetAccountant, PrivacyBudget
from skdp.accounting._events import plain_event
from skdp.base import DPEstimatorMixin
from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms import exponential_mechanism
from skdp.mechanisms._exponential import exponential_mechanism_factor
from skdp.model_selection._steps import (candidate_steps, column_transformer_parts,
                                         contains_column_transformer, fitted_private_steps,
                                         output_bound_issue, public_front, seeded_steps,
                                         verbose_parts)
from skdp.utils._class_columns import expand_class_columns, expand_decision_function
from skdp.utils._docstrings import fill_doc
from skdp.utils._multiclass import resolve_classes
from skdp.utils._random import check_random_state, spawn_random_states
from skdp.utils._validation import check_bounded_sample_weight, check_positive_int

__all__ = ["PrivateParameterSelector"]


def _has(attr):
    def check(self):
        return hasattr(getattr(self, "best_estimator_", self.estimator), attr)
    return check


def _is_frame(X):
    return hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2


def _rows(X, index):
    return X.iloc[index] if _is_frame(X) else X[index]


def _public_rows(X, n_rows):
    """``n_rows`` rows of the kind of ``X`` that depend on no record.

    All-zero rows (dense or CSR); for a DataFrame (kept for a ColumnTransformer), each
    column of ``X``'s dtype (schema, public) holding 0 if numeric and a missing value
    otherwise (an unknown category: all-zero in an accepted OneHotEncoder).
    """
    if _is_frame(X):
        import pandas as pd  # X is a DataFrame: pandas is installed

        columns = {}
        for i, dtype in enumerate(X.dtypes):
            try:
                columns[i] = pd.Series(
                    [0 if pd.api.types.is_numeric_dtype(dtype) else None] * n_rows, dtype=dtype)
            except (TypeError, ValueError) as exc:  # interval[int64] holds no missing value
                raise ValueError(
                    f"X's column {X.columns[i]!r} has dtype {dtype}, which cannot hold the "
                    f"public rows the selector adds and checks the candidates on (0 in a "
                    f"numeric column, a missing value in any other: {exc}). Convert it first, "
                    f"e.g. with .astype(str) or .astype('category'). Nothing was "
                    f"spent.") from None
        return pd.DataFrame(columns).set_axis(X.columns, axis=1)
    if sp.issparse(X):
        return sp.csr_matrix((n_rows, X.shape[1]))
    return np.zeros((n_rows, X.shape[1]))


def _with_public_rows(X_part, y_part, classes):
    """Append one all-zero row per class of ``classes`` to a training part.

    The rows are the same for every dataset, so neighbouring parts stay
    neighbouring, and every candidate sees every class (no part "has one
    class only", which would be a data-dependent failure).
    """
    X_pub = _public_rows(X_part, len(classes))
    if _is_frame(X_part):
        import pandas as pd

        X_aug = pd.concat([X_part, X_pub], ignore_index=True)
    elif sp.issparse(X_part):
        X_aug = sp.vstack([X_part, X_pub], format="csr")
    else:
        X_aug = np.vstack([X_part, X_pub])
    return X_aug, np.concatenate([y_part, classes])


def _weight_params(model, sample_weight):
    """``fit`` keyword arguments that give ``sample_weight`` to the candidate's classifier.

    The classifier is the candidate itself or a pipeline's last step; the steps before it
    take no weights. Raises a ``TypeError`` (before any spend) if it does not take them.
    """
    if sample_weight is None:
        return {}
    name, last = model.steps[-1] if isinstance(model, Pipeline) else (None, model)
    if not has_fit_parameter(last, "sample_weight"):
        raise TypeError(
            f"sample_weight was given, but the candidates' classifier {type(last).__name__} "
            f"does not take sample_weight in fit. Nothing was spent.")
    if name is None:
        return {"sample_weight": sample_weight}
    if get_config().get("enable_metadata_routing", False):
        last.set_fit_request(sample_weight=True)  # routed by the pipeline
        return {"sample_weight": sample_weight}
    return {f"{name}__sample_weight": sample_weight}


def _seed(model, rng):
    """Give every seeded part of ``model`` its own generator spawned from ``rng``."""
    steps = seeded_steps(model)
    for step, child in zip(steps, spawn_random_states(rng, len(steps))):
        step.set_params(random_state=child)
    return model


def _check_on_public_input(model, params, X, n_rows, classes, rng, weighted=False):
    """Fit a copy of a candidate on data-independent input of its training shape.

    This runs the estimator's own validation of its parameters (and of
    anything that depends only on the public shape), through every step of a
    pipeline, before any budget is spent; the fitted copy is discarded. It
    also checks that no private step spends more than the ``epsilon`` and
    ``delta`` parameters the selector counts it by (a nested
    ``PrivateParameterSelector`` spends ``max(epsilon, its candidates')``).
    With ``weighted``, the classifier also gets a public constant weight.
    """
    X_dry = _public_rows(X, n_rows)  # reads only the schema of X
    y_dry = np.resize(classes, n_rows)  # every class present
    candidate = clone(model)
    fit_params = _weight_params(candidate, np.full(n_rows, 0.5) if weighted else None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warnings about the stand-in data are noise
            dry = _seed(candidate, rng).fit(X_dry, y_dry, **fit_params)
    except Exception as exc:
        raise ValueError(
            f"candidate {params!r} cannot be fitted ({type(exc).__name__}: {exc}). It was "
            f"checked on data-independent input before any budget was spent; nothing was spent."
        ) from exc
    _check_public_front(model, params, X, X_dry)
    _check_output_bounds(dry, model, params, X, n_rows)
    for name, step in fitted_private_steps(dry):  # the fitted parts, which spent
        spent = getattr(step, "privacy_spent_", None)
        where = type(step).__name__ if name is None else f"step {name!r} ({type(step).__name__})"
        if spent is None:  # read after the real fit (a data-size default delta)
            raise ValueError(
                f"candidate {params!r}: {where} sets no privacy_spent_ when fitted, so the "
                f"selector cannot tell what it spent. Nothing was spent.")
        declared = step.get_params(deep=False)
        epsilon, delta = declared["epsilon"], declared.get("delta", 0.0)
        # Relative slack for rounding in a step's own bookkeeping only.
        if spent.epsilon > epsilon * (1.0 + 1e-9) or (
                delta is not None and spent.delta > delta * (1.0 + 1e-9)):
            raise ValueError(
                f"candidate {params!r}: {where} spent epsilon={spent.epsilon}, "
                f"delta={spent.delta} when fitted on data-independent input, more than its "
                f"parameters epsilon={epsilon}, delta={delta} by which the selector counts it "
                f"(a PrivateParameterSelector spends the largest of its own and its "
                f"candidates' epsilons); the selector's total would be too small. Select its "
                f"parameters directly. Nothing was spent.")
    return dry


def _check_public_front(model, params, X, X_dry):
    """Refuse ``X`` if the candidate's public parts that read it map a row to NaN or infinity.

    Finite input, but too large for a public step (``PolynomialFeatures`` raises it to a
    power, ``RandomFourierFeatures`` multiplies it): the next step would refuse those rows
    only after the charge. Bad input, refused before it as NaN in ``X`` is. Those parts
    (:func:`~skdp.model_selection._steps.public_front`) read nothing but the schema, so
    fitted on the public rows ``X_dry`` with the candidate's own (seeded) generators they
    are exactly the candidate's (the same random frequencies) and transform ``X`` as it will.
    """
    front = public_front(model)
    if front is None:
        return
    names = [name for name, _ in front.steps]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow warnings: the error below says it
        try:
            Xt = front.fit(X_dry).transform(X)
        except Exception as exc:
            raise ValueError(
                f"candidate {params!r}: its public steps {names} fail on X ({type(exc).__name__}"
                f": {exc}), as they would after the budget is charged. Nothing was "
                f"spent.") from exc
        values = Xt.data if sp.issparse(Xt) else np.asarray(Xt)
        finite = values.dtype.kind not in "fc" or bool(np.all(np.isfinite(values)))
    if not finite:
        raise ValueError(
            f"candidate {params!r}: X holds finite values that its public steps {names} map "
            f"to NaN or infinity (too large for them), which its next step would refuse only "
            f"after the budget is charged. Bring X into a public range first (e.g. a "
            f"PublicBoundsScaler, which clips, as the first step). Nothing was spent.")


def _warn_verbose_parts(models, candidates):
    """Warn (before the charge) that candidates' parts set to print will print private facts."""
    printing = {}
    for model, params in zip(models, candidates):
        for path in verbose_parts(model):
            printing.setdefault(path or "the estimator itself", params)
    if printing:
        warnings.warn(
            f"verbose is set on part(s) {sorted(printing)} of the candidates (e.g. candidate "
            f"{next(iter(printing.values()))!r}): a verbose Pipeline, FeatureUnion or "
            f"ColumnTransformer prints each part's fitting timings, and a private estimator "
            f"its solver's progress, on the private rows of each candidate's part. They "
            f"depend on those rows and are not covered by the selector's guarantee (the "
            f"released model is): do not share that output. Set verbose=False on the "
            f"parts, and verbose on the selector, which prints only public values.",
            PrivacyLeakWarning, stacklevel=3)


def _largest_entry(X):
    """The largest ``|value|`` in ``X`` (its numeric columns, for a DataFrame)."""
    if _is_frame(X):
        import pandas as pd  # X is a DataFrame: pandas is installed

        numeric = [i for i, dtype in enumerate(X.dtypes) if pd.api.types.is_numeric_dtype(dtype)]
        values = X.iloc[:, numeric].to_numpy(dtype=np.float64)
    else:
        values = X.data if sp.issparse(X) else X
    return float(np.max(np.abs(values), initial=0.0))


def _largest_float(X):
    """The largest finite value of the narrowest floating dtype of ``X`` (float64 if none).

    ``PolynomialFeatures`` and ``FunctionTransformer`` keep float32 (and float16): their
    output overflows at that dtype's largest value, not float64's.
    """
    limits = [np.finfo(np.float64).max]
    for dtype in (X.dtypes if _is_frame(X) else [X.dtype]):
        dtype = getattr(dtype, "numpy_dtype", dtype)  # pandas' nullable Float32
        if isinstance(dtype, np.dtype) and dtype.kind == "f":
            limits.append(np.finfo(dtype).max)
    return float(min(limits))


def _check_output_bounds(dry, model, params, X, n_rows):
    """Refuse ``X`` if some part of the candidate could map one of its rows past the floats.

    Wherever the part sits (after a private part, or in a nested pipeline beside one), a
    NaN or infinity in its output would be refused by the next step only after the charge,
    and whether it happens may depend on one record and on the noise (a DPStandardScaler
    divides by a noisy scale). Each part's output is bounded for every noise draw from
    public information (:func:`~skdp.model_selection._steps.output_bound_issue`) starting
    from the largest entry of ``X``: a refusal is "an entry of some record is above a
    public threshold", a condition on each record alone, refused before the charge as NaN
    in ``X`` is.
    """
    largest = _largest_entry(X)
    issue = output_bound_issue(dry, model, largest, n_rows, limit=_largest_float(X))
    if issue is None:
        return
    path, part, bound = issue
    raise ValueError(
        f"candidate {params!r}: its part {path!r} ({type(part).__name__}) may map rows of X "
        f"to NaN or infinity: X's entries reach {largest:g}, and for every noise draw the "
        f"parts before it only guarantee that its input stays within {bound:g} (a "
        f"DPStandardScaler divides by a noisy scale, at least the public floor of its "
        f"variance), too large for it. The next step would refuse such rows only after the "
        f"budget is charged. Bring X into a public range first (a PublicBoundsScaler, "
        f"which clips, as the first step, or clip=True on the scalers), or lower the "
        f"degree, gamma or epsilon of the parts that amplify it. Nothing was spent.")


def _holdout_counts(models, X_holdout, y_holdout, weight):
    """Weighted counts of correct holdout predictions, one per model, computed silently.

    The counts are private until the exponential mechanism releases a noisy
    choice among them, and so is anything else the predictions reveal about
    the holdout rows: whether a candidate's ``predict`` overflows (a
    ``RuntimeWarning`` such as "overflow encountered in exp"), or warns about
    an unknown category, depends on those rows. The budget is already charged
    here, so a warning (or a ``FloatingPointError`` under ``np.seterr(all=
    "raise")``) would publish that outside the guarantee: every warning and
    floating-point report is suppressed while predicting. The predictions
    themselves, hence the counts and the selection, are unchanged.
    """
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.array([np.sum(weight * (model.predict(X_holdout) == y_holdout))
                         for model in models], dtype=float)


def _spent(model):
    """What a fitted candidate spent: the basic composition of its private steps' spends."""
    spends = [step.privacy_spent_ for _, step in fitted_private_steps(model)]
    return sum(spends[1:], spends[0])


@fill_doc
class PrivateParameterSelector(DPEstimatorMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Choose among candidate hyperparameters privately, holdout included.

    Chaudhuri, Monteleoni and Sarwate (2011), Sec. 6 and Alg. 3: the data is
    cut into ``k + 1`` disjoint parts for ``k`` candidates; candidate ``i`` is
    trained by its own private algorithm on part ``i`` (plus one public
    all-zero row per class), and one model is released by the exponential
    mechanism on the counts of correct predictions on the last part. Each
    candidate sees ``1 / (k + 1)`` of the data, so keep the grid small. See
    the user guide, :ref:`model_selection_guide`.

    Parameters
    ----------
    estimator : estimator or Pipeline
        An skdp private classifier (a ``DPEstimatorMixin`` classifier with an
        ``epsilon`` parameter, and ``random_state``, that sets
        ``privacy_spent_`` when fitted), or a
        :class:`~sklearn.pipeline.Pipeline` whose last step is one and whose
        other steps are :class:`~skdp.preprocessing.DPStandardScaler`
        (private, it spends its own budget) or provably public (e.g.
        :class:`~skdp.preprocessing.PublicBoundsScaler`, ``Normalizer``,
        ``RandomFourierFeatures``, encoders with public categories, and
        Pipelines, FeatureUnions and ColumnTransformers of these: the full
        list is in :ref:`model_selection_pipelines`). Any other step (a
        ``StandardScaler``, a ``PCA``, a user function) is refused, naming
        it, before anything is spent. Cloned for every candidate.
    param_grid : dict or list of dict
        Candidate settings, as for :class:`sklearn.model_selection.GridSearchCV`;
        for a pipeline, ``<step>__<parameter>`` names (e.g.
        ``dpstandardscaler__epsilon``, or ``prep__num__epsilon`` for a part
        ``num`` of a ColumnTransformer step ``prep``) or whole steps. They
        may include ``epsilon``, not ``accountant``.
    epsilon : float, default=1.0
        Budget of the selection step (exponential mechanism on the holdout,
        pure DP).
    %(classes)s
        Candidates (private steps of a pipeline) that take a ``classes``
        parameter get this label set.
    %(random_state)s
        Every step of a candidate that has a ``random_state`` gets its own
        generator spawned from this one; the parts of ``best_estimator_`` are
        left with ``random_state=None`` (their generators would reproduce the
        noise of the released model).
    %(accountant)s
        Charged the selector's total (``privacy_spent_``) once, before any
        candidate touches the data. When None, the total is charged to
        ``estimator.accountant`` (of its private steps, for a pipeline);
        two different accountants are refused. With an accountant, every
        private step of every candidate needs an explicit ``delta`` (set it
        on the step or in ``param_grid``).
    %(n_jobs)s
    %(verbose)s
        With ``verbose >= 1`` the fit prints each candidate's part and
        parameters, and the selected candidate, never a holdout count. The
        candidates' own ``verbose`` is left as set, with a
        :class:`~skdp.PrivacyLeakWarning`: their output is not private.

    Attributes
    ----------
    best_estimator_ : estimator
        The released model (trained on its own part only). Its
        ``accountant`` (of each private step, for a pipeline) is the one
        charged with the total, so that refitting it later is charged as
        well.
    best_params_ : dict
        Its parameters.
    best_index_ : int
        Its position in ``ParameterGrid(param_grid)``.
    candidate_params_ : list of dict
        The candidates, in order.
    classes_ : ndarray
        Class labels of the training data; ``predict_proba``,
        ``predict_log_proba`` and ``decision_function`` have one column per
        class, in this order (a class a candidate dropped gets probability 0).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen in ``fit``; only when ``X`` has string column
        names (a pandas DataFrame).
    privacy_spent_ : PrivacyBudget
        ``(max(epsilon, max candidate epsilon), max candidate delta)``; a
        pipeline candidate's budget is the sum of its private parts',
        wherever nested, except the parts given no column (not fitted).
    privacy_event_ : dp_accounting.DpEvent
        The plain ``(epsilon, delta)`` of ``privacy_spent_``.
        The event a tight :class:`~skdp.BudgetAccountant` composes.

    Privacy
    -------
    ``(max(epsilon, max_i epsilon_i), max_i delta_i)``-differential privacy
    for replace-one neighbours: features, labels and sample weights of every
    row, holdout included, are protected. A changed record lies in one part:
    it changes one candidate, ``(epsilon_i, delta_i)``-DP, or every holdout
    count by at most 1, under the ``epsilon``-DP exponential mechanism
    (McSherry and Talwar 2007; parallel composition, Chaudhuri et al. (2011),
    Thm. 18). A pipeline candidate's budget is the sum of its private steps'
    (adaptive composition, Thakkar (2019), Lemma 2.1.5). Public inputs: the
    label set ``classes`` (with ``classes=None`` it is read from ``y``, with a
    :class:`~skdp.PrivacyLeakWarning`), the grid, and a DataFrame's column
    names and dtypes (set dtypes from public knowledge, not inferred from
    the values). Candidates are checked on public input before the charge;
    only invalid ``X`` (NaN, infinity, or entries some step could map past
    the largest float) is refused from the rows. Candidates that are DP only
    for add/remove neighbours are refused. Details:
    :ref:`model_selection_privacy`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    Notes
    -----
    Each candidate is first fitted once on all-zero input of its training
    shape (and discarded), so that invalid parameters fail before the budget
    is charged; this can up to double the fitting time
    (:ref:`model_selection_checks`). An error that only the real data
    triggers (for instance a :class:`~skdp.exceptions.CertificationError`)
    propagates from ``fit`` after the charge, with nothing released.

    References
    ----------
    K. Chaudhuri, C. Monteleoni and A. D. Sarwate, "Differentially private
    empirical risk minimization", JMLR 12, 2011.

    O. Thakkar, "Advances in Privacy-Preserving Machine Learning", PhD thesis,
    Boston University, 2019.

    Examples
    --------
    Four candidates (two budgets, two losses) on disjoint fifths of the data;
    with an accountant every candidate needs an explicit ``delta``:

    >>> from sklearn.datasets import make_classification
    >>> from skdp import BudgetAccountant
    >>> from skdp.linear_model import DPLogisticRegressionAMP
    >>> from skdp.model_selection import PrivateParameterSelector
    >>> X, y = make_classification(3000, 5, n_informative=3, class_sep=2.0, random_state=0)
    >>> acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    >>> grid = {"epsilon": [0.5, 1.0], "loss": ["logistic", "huber"]}
    >>> sel = PrivateParameterSelector(DPLogisticRegressionAMP(delta=1e-6), grid, epsilon=1.0,
    ...                                classes=[0, 1], accountant=acc, random_state=0)
    >>> sel.fit(X, y).privacy_spent_  # parallel composition: the max, not the sum
    PrivacyBudget(epsilon=1.0, delta=1e-06)
    >>> acc.spent
    PrivacyBudget(epsilon=1.0, delta=1e-06)
    >>> sorted(sel.best_params_), sel.predict(X[:3]).shape
    (['epsilon', 'loss'], (3,))

    A pipeline with a private scaler: each candidate costs the sum of its
    steps' budgets, here ``(0.3 + 0.7, 2e-06)``:

    >>> from sklearn.pipeline import make_pipeline
    >>> from skdp.preprocessing import DPStandardScaler
    >>> pipe = make_pipeline(DPStandardScaler(0.3, 1e-6, bounds=(-5.0, 5.0)),
    ...                      DPLogisticRegressionAMP(0.7, 1e-6))
    >>> grid = {"dplogisticregressionamp__loss": ["logistic", "huber"]}
    >>> acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    >>> sel = PrivateParameterSelector(pipe, grid, epsilon=0.5, classes=[0, 1], accountant=acc,
    ...                                random_state=0).fit(X, y)
    >>> acc.spent
    PrivacyBudget(epsilon=1.0, delta=2e-06)
    """

    def __init__(self, estimator, param_grid, *, epsilon=1.0, classes=None, random_state=None,
                 accountant=None, n_jobs=None, verbose=0):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _resolve_accountant(self, candidates, private_steps):
        """The accountant charged with the total: the selector's, else its private steps'."""
        own = self.accountant
        if own is not None and not isinstance(own, BudgetAccountant):
            raise TypeError(f"accountant must be a skdp.BudgetAccountant or None, got {own!r}.")
        inner = []
        for steps in private_steps:
            for name, step in steps:
                acc = step.get_params(deep=False).get("accountant")
                where = "estimator.accountant" if name is None else f"step {name!r}'s accountant"
                if acc is not None and not isinstance(acc, BudgetAccountant):
                    raise TypeError(f"{where} must be a skdp.BudgetAccountant or None, got "
                                    f"{acc!r}.")
                if acc is not None and all(acc is not seen for seen in inner):
                    inner.append(acc)
        if any(key == "accountant" or key.endswith("__accountant")
               for params in candidates for key in params):
            raise ValueError(
                "param_grid may not set an accountant: the selector charges its total once, to "
                "its own accountant or else to the estimator's."
            )
        if len(inner) > 1 or (own is not None and inner and inner[0] is not own):
            raise ValueError(
                "the selector and its estimator (or the private steps of its pipeline) have "
                "different accountants; the selector charges its total once, to one "
                "accountant. Pass the same BudgetAccountant to all of them, or to the "
                "selector only. Nothing was spent."
            )
        return own if own is not None else (inner[0] if inner else None)

    @staticmethod
    def _total(selection, budgets):
        """Parallel composition: the largest of the selection's and the candidates' budgets."""
        return PrivacyBudget(max(selection.epsilon, *(b.epsilon for b in budgets)),
                             max(selection.delta, *(b.delta for b in budgets)))

    def _candidate_budget(self, params, private_steps, accountant):
        """Basic composition (Thakkar (2019), Lemma 2.1.5) of the budgets of the private steps."""
        budget = None
        for name, step in private_steps:
            step_params = step.get_params(deep=False)
            delta = step_params.get("delta", 0.0)
            if delta is None and accountant is not None:
                raise ValueError(self._explicit_delta_message(params, name, step))
            step_budget = PrivacyBudget(step_params["epsilon"], 0.0 if delta is None else delta)
            budget = step_budget if budget is None else budget + step_budget
        return budget

    @staticmethod
    def _explicit_delta_message(params, name, step):
        cls = type(step).__name__
        if name is None:
            where = f"estimator={cls}(delta=1e-06) (with your other parameters;"
            key = "delta"
        else:
            where = (f"step {name!r} as {cls}(delta=1e-06) in the pipeline (with its other "
                     f"parameters;")
            key = f"{name}__delta"
        return (
            f"with an accountant, every candidate needs an explicit delta, but candidate "
            f"{params!r} has delta=None{'' if name is None else f' in step {name!r}'} "
            f"({cls}'s default that depends on the size of the training part, known only "
            f"after its fit, while the selector charges its total before any data is "
            f"touched). Pass {where} any delta well below 1 / n_samples), or set delta on "
            f"every candidate, e.g. param_grid={{..., {key!r}: [1e-06]}} (in each dict of a "
            f"list). Nothing was spent."
        )

    def _make_candidate(self, params):
        """A clone of ``estimator`` with ``params`` (their estimators cloned too)."""
        return clone(self.estimator).set_params(
            **{key: clone(value, safe=False) for key, value in params.items()})

    def _set_overrides(self, private_steps, classes):
        """Settings the selector imposes on every private step of a candidate."""
        for _, step in private_steps:
            step_params = step.get_params(deep=False)
            overrides = {}
            if "classes" in step_params:
                overrides["classes"] = classes  # resolved once, by the selector
            if "accountant" in step_params:
                overrides["accountant"] = None  # the selector charges the total once
            if "n_jobs" in step_params and self.n_jobs is not None:
                overrides["n_jobs"] = self.n_jobs
            step.set_params(**overrides)

    def _validate_frame(self, X, y=None, reset=True):
        """Check a DataFrame that is passed on as is (to a ColumnTransformer).

        Its column names unique and its dtypes able to hold the public rows
        (:func:`_public_rows`; not ``interval[int64]``), its feature names and width, as
        ``validate_data`` does, its numeric columns finite,
        and its other columns as the encoders (which alone take them) check them only after
        the charge: each column by ``check_array(dtype=None, ensure_all_finite='allow-nan')``
        (no infinity in a categorical column of numbers), and its values hashable (looked
        up in a hash table of the public categories).
        """
        import pandas as pd  # X is a DataFrame: pandas is installed

        duplicated = X.columns[X.columns.duplicated()].unique()
        if len(duplicated):
            raise ValueError(
                f"X has duplicated column names ({', '.join(map(repr, duplicated))}): a "
                f"column selector could not tell them apart. Rename the columns. Nothing "
                f"was spent.")
        _public_rows(X, 1)  # every column's dtype can hold the public rows
        if y is None:
            validate_data(self, X, reset=reset, skip_check_array=True)
        else:
            validate_data(self, X, y, reset=reset, skip_check_array=True)
            y = column_or_1d(check_array(y, ensure_2d=False, dtype=None), warn=True)
            check_consistent_length(X, y)
        numeric = [i for i, dtype in enumerate(X.dtypes) if pd.api.types.is_numeric_dtype(dtype)]
        values = X.iloc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.all(np.isfinite(values)):
            raise ValueError("X holds NaN or infinity in a numeric column. Nothing was spent.")
        for i in sorted(set(range(X.shape[1])) - set(numeric)):
            # sklearn/preprocessing/_encoders.py (1.9), _BaseEncoder._check_X on a DataFrame.
            try:
                set(check_array(X.iloc[:, i], ensure_2d=False, dtype=None,
                                ensure_all_finite="allow-nan"))
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"X's column {X.columns[i]!r} holds a value the encoders refuse ({exc}; "
                    f"their values must be hashable, and not infinite). Nothing was "
                    f"spent.") from None
        return X if y is None else (X, y)

    def fit(self, X, y, sample_weight=None):
        """Train every candidate on its own part and privately select one.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights, protected like the rows. Weights above 1 are clipped
            to 1 (silently). Each candidate's classifier (a pipeline's
            last step) is fitted with its part's weights (it must take
            ``sample_weight``; the public all-zero rows weigh 1), and the
            holdout counts are weighted: a weight in ``[0, 1]`` keeps their
            sensitivity at 1.

        Returns
        -------
        self : PrivateParameterSelector
            The fitted selector.
        """
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError("param_grid has no candidate.")
        models = [self._make_candidate(params) for params in candidates]
        # Decided for all candidates at once; predict passes a DataFrame on the same way.
        keep_frame = _is_frame(X) and any(contains_column_transformer(m) for m in models)
        if keep_frame:
            X, y = self._validate_frame(X, y)  # kept as a DataFrame for the ColumnTransformer
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr")
        classes, _ = resolve_classes(self.classes, y, type(self).__name__)
        # Whether weights were passed (never whether they are all 1, which is protected)
        # decides the refusals and the dry runs below.
        weighted = sample_weight is not None
        sample_weight = check_bounded_sample_weight(sample_weight, X.shape[0])
        k = len(candidates)
        verbose = check_positive_int(self.verbose, "verbose", low=0)
        if X.shape[0] < 2 * (k + 1):
            raise ValueError(
                f"{k} candidates need {k + 1} disjoint parts of at least 2 rows; "
                f"got n_samples={X.shape[0]}."
            )
        # Refuses any part of a candidate that is neither private nor provably public.
        private_steps = [candidate_steps(model) for model in models]
        if weighted:
            for model in models:
                _weight_params(model, np.ones(1))  # refuses classifiers that take no weights
        accountant = self._resolve_accountant(candidates, private_steps)
        _warn_verbose_parts(models, candidates)
        selection = self._resolve_budget()
        # The selection's noise scale is checked here, from parameters only: the exponential
        # mechanism would refuse it after the charge.
        exponential_mechanism_factor(selection.epsilon, 1.0)
        rng = check_random_state(self.random_state)
        # A data-independent random split into k + 1 parts (Chaudhuri et al. (2011), Alg. 3 step 1).
        parts = np.array_split(rng.permutation(X.shape[0]), k + 1)
        holdout = parts[-1]
        children = spawn_random_states(rng, 2 * k)
        for model, steps, child in zip(models, private_steps, children[:k]):
            self._set_overrides(steps, classes)
            _seed(model, child)
        if accountant is not None:
            # Refuse an overrun before any work, by the parts charged whatever the schema.
            optional = [column_transformer_parts(model) for model in models]
            accountant.check(self._total(selection, [
                self._candidate_budget(params, [s for s in steps if s[0] not in skip], accountant)
                for params, steps, skip in zip(candidates, private_steps, optional)]))
        name = type(self).__name__
        if verbose:
            print(f"[{name}] {k} candidates on {k + 1} parts of the {X.shape[0]} rows; "
                  f"checking each candidate on data-independent input first")
        dry_runs = [_check_on_public_input(model, params, X, len(part) + len(classes), classes,
                                           child, weighted=weighted)
                    for model, params, part, child in zip(models, candidates, parts,
                                                          children[k:])]
        # A private part of a ColumnTransformer given no column (an empty list or mask, or a
        # selector matching no column of the schema) is not fitted and reads no record: not
        # charged. Which parts are fitted follows from the schema alone, the same in the dry
        # run as in the real fit.
        fitted = [{path for path, _ in fitted_private_steps(dry)} for dry in dry_runs]
        budgets = [self._candidate_budget(params, [s for s in steps if s[0] in paths], accountant)
                   for params, steps, paths in zip(candidates, private_steps, fitted)]
        total = self._total(selection, budgets)
        if accountant is not None:
            accountant.check(total)
            accountant.spend(total, by=name)
        # Only public values: the parts' sizes depend on n_samples and k alone. No holdout
        # count is ever printed (they are private until the exponential mechanism).
        for i, (model, params, part) in enumerate(zip(models, candidates, parts), start=1):
            if verbose:
                print(f"[{name}] fitting candidate {i}/{k} on part {i} ({len(part)} rows): "
                      f"{params}")
            # Decided per part, from its own rows: a global "all weights are 1" switch would
            # let one record's weight change how every candidate is fitted.
            part_weight = (None if sample_weight is None or np.all(sample_weight[part] == 1.0)
                           else np.concatenate([sample_weight[part], np.ones(len(classes))]))
            model.fit(*_with_public_rows(_rows(X, part), y[part], classes),
                      **_weight_params(model, part_weight))
        # Chaudhuri et al. (2011), Alg. 3 step 3: counts of correct holdout predictions,
        # selected with probability proportional to exp(epsilon * count / 2). Weighted
        # counts: one record adds at most its weight, at most 1, so the sensitivity stays 1.
        holdout_weight = np.ones(len(holdout)) if sample_weight is None else sample_weight[holdout]
        correct = _holdout_counts(models, _rows(X, holdout), y[holdout], holdout_weight)
        self.best_index_ = exponential_mechanism(correct, epsilon=selection.epsilon,
                                                 sensitivity=1.0, random_state=rng)
        self.best_estimator_ = models[self.best_index_]
        if accountant is not None:
            # Charged above for every candidate; a later refit by hand must be charged too.
            # Both the fitted parts and those a refit clones (a ColumnTransformer's).
            for _, step in (candidate_steps(self.best_estimator_)
                            + fitted_private_steps(self.best_estimator_)):
                if "accountant" in step.get_params(deep=False):
                    step.set_params(accountant=accountant)
        # The generators that drew the released model's noise are not released with it: a
        # ColumnTransformer fits clones of its parts, so its own parts hold the very state the
        # noise was drawn from, and a generator used in place can be rewound (PCG64.advance);
        # with one, the noise, then exact statistics of the part's rows, could be read off.
        for step in (seeded_steps(self.best_estimator_)
                     + seeded_steps(self.best_estimator_, fitted=True)):
            step.set_params(random_state=None)
        self.best_params_ = candidates[self.best_index_]
        self.candidate_params_ = candidates
        self.classes_ = classes
        self._keep_frame = keep_frame
        # Data-size dependent default deltas (delta=None) are known only now.
        spent = [_spent(model) for model in models]
        self.privacy_spent_ = PrivacyBudget(
            total.epsilon, max([total.delta] + [b.delta for b in spent]))
        # Parallel composition over disjoint parts and the selection: no finer description.
        self.privacy_event_ = plain_event(self.privacy_spent_)
        if verbose:
            print(f"[{name}] selected candidate {self.best_index_ + 1}/{k} (best_index_="
                  f"{self.best_index_}) by the exponential mechanism on part {k + 1} "
                  f"({len(holdout)} rows): {self.best_params_}; spent "
                  f"epsilon={self.privacy_spent_.epsilon:g}, delta={self.privacy_spent_.delta:g}")
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Sparse input works exactly when the candidates take it (fit checks nothing else).
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags

    def _validate_for_predict(self, X):
        check_is_fitted(self)
        if _is_frame(X) and self._keep_frame:
            return self._validate_frame(X, reset=False)
        # Checked (feature names, width) and converted here, so the candidate,
        # fitted on NumPy parts, receives what it was fitted on.
        return validate_data(self, X, reset=False, accept_sparse="csr")

    def _align(self, values, fill):
        """Put the columns of the released model's classes at their place in ``classes_``."""
        return expand_class_columns(values, self.best_estimator_.classes_, self.classes_, fill)

    def predict(self, X):
        """Predict with the selected model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        X = self._validate_for_predict(X)
        return self.best_estimator_.predict(X)

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the selected model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; 0 for a class the selected
            model never saw.
        """
        X = self._validate_for_predict(X)
        proba = self.best_estimator_.predict_proba(X)
        return self._align(proba, 0.0)

    @available_if(_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Logarithm of the class probabilities of the selected model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; ``-inf`` for a class the
            selected model never saw.
        """
        X = self._validate_for_predict(X)
        log_proba = self.best_estimator_.predict_log_proba(X)
        return self._align(log_proba, -np.inf)

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the selected model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As the selected model's (one column per class of ``classes_``,
            or the score of ``classes_[1]`` for two classes). A class the
            selected model never saw gets the lowest finite float.
        """
        X = self._validate_for_predict(X)
        scores = self.best_estimator_.decision_function(X)
        return expand_decision_function(scores, self.best_estimator_.classes_, self.classes_)
