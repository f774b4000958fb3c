"""PrivateQueryAnswerer: private online classification (Thakkar 2019, Alg. 10, K classes)."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import DPEstimatorMixin, refuse_unsafe_pickle
from skdp.ensemble._stability import (
    ABSTAINED,
    ANSWERED,
    CALIBRATIONS,
    REFUSED,
    StableVoteRelease,
    release_calibration,
    unanimous_vote_teachers,
)
from skdp.ensemble._teachers import (
    assign_teachers,
    check_teacher_estimator,
    check_teacher_weights,
    fit_teachers,
    unseeded_random_states,
    vote_counts,
)
from skdp.utils import check_option, check_positive_int, fill_doc, resolve_classes

__all__ = ["PrivateQueryAnswerer"]


def check_classifier_like(estimator, name):
    """Refuse (before any budget is spent) an object that cannot fit and predict."""
    for method in ("fit", "predict"):
        if not callable(getattr(estimator, method, None)):
            raise TypeError(f"{name} must be a classifier with fit and predict methods; "
                            f"{estimator!r} has no {method}.")
    # Cloned only for teachers (and a student) that see two classes, i.e. depending on the
    # private rows: an object that cannot be cloned must be refused here, without data.
    try:
        clone(estimator)
    except Exception as exc:
        raise TypeError(f"{name} must be an estimator that sklearn.base.clone can copy "
                        f"(checked before any budget was spent): {exc}") from exc
    # Teachers whose fit raises abstain (the failure could depend on their private
    # rows), so a bad parameter value would only show as abstentions: scikit-learn
    # estimators can check their parameters without data, which reveals nothing.
    # Only estimators that declare constraints: scikit-learn's `_validate_params` raises
    # AttributeError on any other BaseEstimator (skdp's own and third-party ones).
    validate_params = getattr(estimator, "_validate_params", None)  # does not mutate
    if callable(validate_params) and hasattr(estimator, "_parameter_constraints"):
        try:
            validate_params()
        except ValueError as exc:  # InvalidParameterError is a ValueError
            raise ValueError(f"{name} has an invalid parameter (checked before any budget "
                             f"was spent): {exc}") from exc


def resolve_n_teachers(n_teachers, *, epsilon, delta, max_unstable, max_queries, calibration):
    """Validate ``n_teachers`` (an int or ``"auto"``) and the release's calibration.

    Called before the budget is charged, so that every parameter error comes
    first (:func:`~skdp.ensemble._stability.release_calibration` also refuses
    a ``"thesis"`` calibration outside its proof). ``n_teachers`` is not
    compared with the number of private rows: that count is private under
    add/remove neighbours (a fit that refuses ``n < n_teachers`` and accepts
    ``n + 1`` rows tells the two neighbours apart with certainty), and a
    teacher that receives no row simply abstains.
    """
    release_calibration(epsilon, delta, max_unstable, max_queries, calibration)
    if isinstance(n_teachers, str) and n_teachers == "auto":
        n_teachers = unanimous_vote_teachers(epsilon, delta, max_unstable, max_queries,
                                             calibration)
    elif not isinstance(n_teachers, numbers.Integral):
        raise TypeError(f"n_teachers must be an int or 'auto', got {n_teachers!r}.")
    # Teachers are indexed by np.intp (their seeds are one array): more would fail only after
    # the charge ("auto" at a tiny epsilon asks for ~1 / epsilon teachers).
    return check_positive_int(n_teachers, "n_teachers", high=int(np.iinfo(np.intp).max))


def resolve_max_unstable(max_unstable, *, epsilon, delta, max_queries, calibration):
    """Validate ``max_unstable`` (an int or ``"auto"``) from public quantities only.

    ``"auto"``: the largest ``T <= max_queries`` at which a unanimous vote needs
    no more teachers than at ``T = 1`` (:func:`unanimous_vote_teachers`). Each
    allowed abstention adds sparse-vector noise (Lyu, Su and Li 2017, Alg. 7:
    query noise ``Lap(2 T / eps2)``), and more noise needs more teachers, each
    with fewer rows; ``"auto"`` allows abstentions only while they cost no
    teacher. At ``epsilon = 1`` that is ``T = 1``; at large ``epsilon`` it is
    every query (``T = max_queries``), so that an unstable vote is only
    skipped, not the end of the release.
    """
    if isinstance(max_unstable, str) and max_unstable == "auto":
        def teachers(cutoff):
            try:
                return unanimous_vote_teachers(epsilon, delta, cutoff, max_queries, calibration)
            except ValueError:  # "thesis" is refused beyond its proof: not a candidate
                return None

        base = unanimous_vote_teachers(epsilon, delta, 1, max_queries, calibration)
        lo, hi = 1, max_queries  # teachers(T) does not decrease with T: bisect
        while lo < hi:
            mid = (lo + hi + 1) // 2
            count = teachers(mid)
            lo, hi = (mid, hi) if count is not None and count <= base else (lo, mid - 1)
        return lo
    if isinstance(max_unstable, str) or not isinstance(max_unstable, numbers.Integral):
        raise TypeError(f"max_unstable must be an int or 'auto', got {max_unstable!r}.")
    return check_positive_int(max_unstable, "max_unstable")


def draw_seeds(estimator, n, rng):
    """``n`` seeds for clones of ``estimator`` if any ``random_state`` of it is ``None``.

    Returns ``None`` when there is none to seed.

    Nested ones count (a pipeline's ``<step>__random_state``): see
    :func:`~skdp.ensemble._teachers.seed_random_states`, which applies a seed.
    Makes every fit reproducible from the skdp ``random_state`` alone.
    """
    if not unseeded_random_states(estimator):
        return None
    return rng.integers(0, 2**31 - 1, size=n)


def train_teachers(estimator, X, y, n_teachers, rng, release_params, *, sample_weight=None,
                   n_jobs=None, verbose=0, return_assignment=False):
    """Train the teachers and open their vote release (Thakkar 2019, Alg. 10, set-up).

    Draws from ``rng`` in a fixed order: the teachers' secret key, their
    seeds (:func:`draw_seeds`), then the release's sparse-vector noise.
    :class:`PrivateQueryAnswerer` and
    :class:`~skdp.ensemble.ModelAgnosticPrivateClassifier` both start here.

    Parameters
    ----------
    estimator : classifier
        The base estimator, cloned per teacher.
    X : ndarray of shape (n_samples, n_features)
        Rows that train the teachers (possibly none).
    y : ndarray of shape (n_samples,)
        Their labels.
    n_teachers : int
        Number of teachers.
    rng : numpy.random.Generator
        Source of the key, the seeds and the release noise.
    release_params : dict
        Keyword arguments of :class:`~skdp.ensemble._stability.StableVoteRelease`
        except ``random_state``.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights, each teacher fitted with its own rows' weights
        (:func:`~skdp.ensemble._teachers.check_teacher_weights`).
    n_jobs : int or None, default=None
        joblib parallelism of the teachers' training.
    verbose : int, default=0
        joblib verbosity.
    return_assignment : bool, default=False
        Also return each row's teacher index (private: for votes computed
        from the teachers' own rows, e.g. their label counts).

    Returns
    -------
    teachers : list
        Fitted teachers (``None`` for a teacher that received no row).
    release : StableVoteRelease
        The release of their votes.
    assignment : ndarray of shape (n_samples,)
        Teacher index of each row; only with ``return_assignment=True``.
    """
    key = rng.integers(0, 2**64, size=2, dtype=np.uint64)
    seeds = draw_seeds(estimator, n_teachers, rng)
    assignment = assign_teachers(X, n_teachers, key)
    teachers = fit_teachers(estimator, X, y, assignment, n_teachers,
                            seeds, sample_weight=sample_weight, n_jobs=n_jobs, verbose=verbose,
                            stream_key=[int(word) for word in key])
    release = StableVoteRelease(random_state=rng, **release_params)
    return (teachers, release, assignment) if return_assignment else (teachers, release)


def released_labels(classes, top, answered):
    """Labels of the answered votes; the other entries hold a filler.

    The filler carries neither the majority nor any private label
    (``classes[0]``, the smallest label, would leak a label read from the
    data): 0 or ``False`` for numeric or boolean labels, ``None`` for
    string or object labels, which go out with dtype object (NumPy's string
    dtype is as wide as the longest label).

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted labels the votes are counted over.
    top : ndarray of shape (n_queries,)
        Index of each vote's majority class.
    answered : ndarray of bool, shape (n_queries,)
        Which votes were released.

    Returns
    -------
    labels : ndarray of shape (n_queries,)
    """
    labels = (np.full(len(top), None, dtype=object) if classes.dtype.kind in "OSU"
              else np.zeros(len(top), dtype=classes.dtype))
    labels[answered] = classes[top[answered]]
    return labels


@fill_doc
class PrivateQueryAnswerer(DPEstimatorMixin, BaseEstimator):
    """Private online classification with any classifier (Thakkar 2019, Alg. 10).

    ``fit`` splits the private data among ``n_teachers`` copies of
    ``estimator`` (each record goes to one teacher, chosen by a keyed hash of
    the record itself) and trains them, in parallel with joblib. Each query
    to :meth:`answer` then gets the teachers' exact majority label when the
    vote is stable enough, at no privacy cost; otherwise the answerer
    abstains, and each abstention spends part of a sparse-vector budget.
    After ``max_unstable`` abstentions, or after ``max_queries`` queries, it
    refuses every further query. The number of classes is arbitrary.

    The fitted object holds the non-private teachers: it is the data
    curator's service and must never be published itself. Only the answers
    are private. The design, the privacy argument and the calibrations are
    in the user guide (:doc:`/guide/model_agnostic`).

    Parameters
    ----------
    estimator : classifier
        Any object with ``fit`` and ``predict`` (a scikit-learn classifier, a
        pipeline...). Cloned for each teacher; each ``random_state`` left at
        ``None`` (nested ones too) gets a seed drawn from ``random_state``,
        and the global NumPy and Python generators are seeded per teacher
        (do not draw from them in another thread during ``fit`` or
        ``answer``; details in :ref:`model_agnostic_privacy`). It may be an
        skdp estimator, but without an ``accountant`` (refused: how often the
        teachers would charge it depends on their rows).
    n_teachers : int or "auto", default="auto"
        Number of teachers ``b``. ``"auto"``: the smallest number at which a
        unanimous vote is answered with probability 0.99
        (:func:`unanimous_vote_teachers`); votes that are not unanimous need
        more, and every teacher needs enough data to be accurate. It is not
        checked against the number of rows, which is private under
        add/remove neighbours (see Privacy): take it from a public estimate.
    max_unstable : int or "auto", default="auto"
        ``T``: abstentions allowed before every further query is refused, >= 1.
        Thakkar (2019), Thm. 10 sets it to about three times the number of queries
        a single teacher would misclassify. ``"auto"``: the largest ``T`` (at
        most ``max_queries``) at which a unanimous vote needs no more teachers
        than at ``T = 1``: 1 at ``epsilon = 1``, ``max_queries`` at very large
        ``epsilon``. Each allowed abstention adds noise that more teachers,
        each with fewer rows, must outvote.
    max_queries : int, default=1000
        ``m~``: the declared number of queries, >= 1. It enters the threshold
        (a distance must beat ``log(m~ / delta)``-sized noise tails); query
        number ``m~ + 1`` is refused.
    %(epsilon)s
    delta : float, default=1e-6
        Probability with which the epsilon bound may fail, in ``(0, 1)``: the
        chance that a vote which one record could flip is ever released
        (and, for ``calibration='thesis'``, half of it also covers the sparse
        vector). Keep it well below ``1 / n_samples``.
    calibration : {"lyu", "thesis"}, default="lyu"
        Noise of the sparse vector over the distances to instability.
        ``"lyu"``: Lyu, Su and Li (2017), Alg. 7, pure ``epsilon``-DP.
        ``"thesis"``: Thakkar (2019), Alg. 10 exactly, refused where its
        Thm. 3 is not proved; it needs several times more teachers (6983
        against 1103 at ``epsilon = 1``, ``delta = 1e-6``, ``m~ = 1000``,
        ``T = 10``). See :ref:`model_agnostic_privacy`.
    %(classes)s
    %(n_jobs)s
        Teachers are trained with joblib, so ``with
        joblib.parallel_backend("dask"):`` trains them on a Dask cluster.
    %(random_state)s
    %(accountant)s
    verbose : int, default=0
        Verbosity level; 0 is silent. Above 0 it prints
        non-private diagnostics (joblib's progress of the teachers' fits);
        keep them with the data holder. The teachers' own ``verbose`` is warned about
        (:class:`~skdp.PrivacyLeakWarning`).
    allow_pickle : bool, default=False
        Whether a fitted answerer may be pickled (``pickle``, ``joblib.dump``,
        ``copy.deepcopy``): a pickle holds the teachers, which are not
        private, and the sparse vector's state, so that each loaded copy
        could answer a new allowance of queries. May be set on the object at
        any time; an unfitted object always pickles.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labels the votes are counted over: the sorted ``classes``, or those
        of ``y``.
    teachers_ : list of estimators
        The fitted teachers (``None`` for a teacher that received no record
        or whose ``fit`` raised: it abstains).
    n_teachers_ : int
        Number of teachers used.
    max_unstable_ : int
        Abstentions allowed (``max_unstable`` resolved).
    threshold_ : float
        The threshold ``w`` on the distance to instability.
    n_queries_ : int
        Queries received so far (answered, abstained or refused).
    n_answered_ : int
        Queries answered with the majority label.
    n_abstained_ : int
        Abstentions so far (at most ``max_unstable_``).
    n_refused_ : int
        Queries refused because the abstentions or ``max_queries`` ran out.
    privacy_spent_ : PrivacyBudget
        ``(epsilon, delta)``, reserved at ``fit`` for the answerer's whole life.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit`` (only when ``X`` has string
        column names).

    Privacy
    -------
    Neighbouring relation: add/remove one record (Thakkar (2019), Sec. 5.1).
    Protected: each private training record, features and label (and its
    ``sample_weight``, which only its own teacher sees). The whole stream of
    answers (labels, abstentions and refusals) to up to ``max_queries``
    adaptively chosen queries is ``(epsilon, delta)``-DP (Thakkar (2019),
    Thm. 7 and 9, with a corrected distance to instability of sensitivity 1,
    and Lyu, Su and Li (2017) for the default sparse vector). The query
    points are public. Public inputs: ``classes`` (with ``classes=None`` the
    label set is read from ``y``, with a :class:`~skdp.PrivacyLeakWarning`),
    ``n_teachers`` (never compared with the private number of rows: take it
    from a public estimate) and the other parameters. Nothing else depends
    on the private rows: a teacher that fails abstains rather than raising.
    Details and the corrections to Thakkar (2019):
    :ref:`model_agnostic_privacy`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    ModelAgnosticPrivateClassifier : Trains a releasable student on the answers.
    unanimous_vote_teachers : Teachers needed for a unanimous vote to be answered.

    Notes
    -----
    A misconfigured ``estimator`` shows up as abstentions, not as an error,
    and the teachers' warnings are silenced: an error or a warning after
    ``fit`` would reveal a teacher's rows. Concurrent calls to
    :meth:`answer` are served one batch at a time, so ``max_queries`` and
    ``max_unstable`` hold for an online service too.

    References
    ----------
    R. Bassily, A. Thakurta and O. Thakkar. Model-agnostic private learning.
    NeurIPS 2018; O. Thakkar, PhD thesis, Boston University, 2019, Ch. 5.
    M. Lyu, D. Su and N. Li. Understanding the sparse vector technique for
    differential privacy. Proc. VLDB Endowment 10(6), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp.ensemble import PrivateQueryAnswerer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> answerer = PrivateQueryAnswerer(LogisticRegression(), n_teachers=100, max_unstable=2,
    ...                                 max_queries=20, epsilon=3.0, classes=[0, 1],
    ...                                 random_state=0)
    >>> labels, answered = answerer.fit(X, y).answer([[2.0, 0.0], [-2.0, 0.0]])
    >>> labels[answered].tolist(), answerer.n_abstained_
    ([1, 0], 0)
    """

    # Thakkar (2019), Sec. 5.1: DP for add/remove neighbours; meta-estimators that need
    # replace-one candidates (PrivateParameterSelector) refuse it.
    _neighbouring_relation = "add/remove"

    def __init__(self, estimator, *, n_teachers="auto", max_unstable="auto", max_queries=1000,
                 epsilon=1.0, delta=1e-6, calibration="lyu", classes=None, n_jobs=None,
                 random_state=None, accountant=None, verbose=0, allow_pickle=False):
        self.estimator = estimator
        self.n_teachers = n_teachers
        self.max_unstable = max_unstable
        self.max_queries = max_queries
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.classes = classes
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose
        self.allow_pickle = allow_pickle

    def __getstate__(self):
        # Also reached by joblib.dump and copy.deepcopy.
        if hasattr(self, "teachers_"):
            refuse_unsafe_pickle(self, "the teachers (models trained on the private data)")
        return super().__getstate__()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Assign the records to teachers and train the teachers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private training data (dense, numeric).
        y : array-like of shape (n_samples,)
            Private labels (among ``classes`` when it is given).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights, passed to the ``fit`` of each teacher with its own
            rows (``estimator`` must take ``sample_weight``). A record's
            weight is protected with it and is not bounded: however it is
            weighted, a record changes one teacher.

        Returns
        -------
        self : PrivateQueryAnswerer
            The fitted answerer.
        """
        X, y = validate_data(self, X, y)
        classes, _ = resolve_classes(self.classes, y, type(self).__name__)
        check_classifier_like(self.estimator, "estimator")
        check_teacher_estimator(self.estimator)
        sample_weight = check_teacher_weights(self.estimator, sample_weight, X.shape[0])
        epsilon, delta = self._resolve_budget(allow_zero_delta=False)
        max_queries = check_positive_int(self.max_queries, "max_queries")
        check_positive_int(self.verbose, "verbose", low=0)  # joblib would check it after the charge
        calibration = check_option(self.calibration, "calibration", CALIBRATIONS)
        max_unstable = resolve_max_unstable(self.max_unstable, epsilon=epsilon, delta=delta,
                                            max_queries=max_queries, calibration=calibration)
        n_teachers = resolve_n_teachers(
            self.n_teachers, epsilon=epsilon, delta=delta, max_unstable=max_unstable,
            max_queries=max_queries, calibration=calibration)

        # No row count: under add/remove neighbours it is private, and the base class would
        # warn "delta >= 1 / n_samples = <1/n>" from it (a fit at n = 1/delta warned, one
        # row less did not).
        budget, rng = self._start_private_fit(None, allow_zero_delta=False)
        self.teachers_, self._release = train_teachers(
            self.estimator, X, y, n_teachers, rng,
            dict(epsilon=epsilon, delta=delta, max_unstable=max_unstable,
                 max_queries=max_queries, calibration=calibration),
            sample_weight=sample_weight, n_jobs=self.n_jobs, verbose=self.verbose)
        self.classes_ = classes
        self.n_teachers_ = n_teachers
        self.max_unstable_ = max_unstable
        self.threshold_ = self._release.threshold
        self.n_queries_ = self.n_answered_ = self.n_abstained_ = self.n_refused_ = 0
        self.privacy_spent_ = budget
        return self

    def answer(self, X):
        """Answer a batch of classification queries, in order.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            The queries (public points).

        Returns
        -------
        labels : ndarray of shape (n_queries,)
            The teachers' majority label where ``answered`` is True. Other
            entries hold a filler that never depends on the private labels
            (0 or ``False`` for numeric or boolean labels, ``None`` for
            string or object labels, which are returned with dtype object):
            use ``answered`` to tell them apart.
        answered : ndarray of bool, shape (n_queries,)
            False for abstentions and refused queries.

        Raises
        ------
        SparseVectorExhaustedError
            If the answerer already refuses every query.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        top, status = self._release.release(vote_counts(self.teachers_, X, self.classes_))
        answered = status == ANSWERED
        self.n_queries_ += len(status)
        self.n_answered_ += int(answered.sum())
        self.n_abstained_ += int(np.sum(status == ABSTAINED))
        self.n_refused_ += int(np.sum(status == REFUSED))
        return released_labels(self.classes_, top, answered), answered
