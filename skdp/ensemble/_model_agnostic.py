"""ModelAgnosticPrivateClassifier: knowledge transfer to a student (Thakkar 2019, Alg. 11)."""

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.accounting import PrivacyBudget
from skdp.base import DPEstimatorMixin
from skdp.ensemble._answerer import (
    check_classifier_like,
    draw_seeds,
    released_labels,
    resolve_max_unstable,
    resolve_n_teachers,
    train_teachers,
)
from skdp.ensemble._stability import ABSTAINED, ANSWERED, CALIBRATIONS, REFUSED
from skdp.ensemble._teachers import (
    check_teacher_estimator, check_teacher_weights, keyed_row_hash, seed_random_states,
    vote_counts)
from skdp.exceptions import FallbackModelWarning
from skdp.utils._class_columns import expand_class_columns, expand_decision_function
from skdp.utils import check_option, check_positive_int, check_real, fill_doc, resolve_classes

__all__ = ["LabelPrivateBudget", "ModelAgnosticPrivateClassifier"]


@dataclass(frozen=True)
class LabelPrivateBudget(PrivacyBudget):
    """An ``(epsilon, delta)`` budget that protects labels only for some rows.

    Spent by :class:`ModelAgnosticPrivateClassifier` when no public data is
    given (the label-private setting of Thakkar (2019), Sec. 5.5-5.6): the rows used
    as unlabeled queries keep their labels secret but their features shape
    the released model unprotected.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float, default=0.0
        In ``[0, 1)``.
    n_query_rows : int, default=0
        Number of training rows used (features only) as the public queries.
    scope : str
        What the guarantee covers.
    """

    n_query_rows: int = 0
    scope: str = ("(epsilon, delta)-DP for the labels of all rows and for the features of "
                  "the rows that trained the teachers; the features of the n_query_rows rows "
                  "used as unlabeled queries are not protected")


def _teacher_votes(estimator, X, y, classes, X_public, *, n_teachers, rng, release_params,
                   sample_weight, n_jobs, verbose, label_vote=False):
    """Train the teachers on ``(X, y)`` and release their stable votes on ``X_public``.

    The steps of :class:`PrivateQueryAnswerer` (``fit``, then one ``answer``
    call, drawing from ``rng`` in the same order) without the answerer's
    checks of its training data, which the caller runs on the whole training
    set before the budget is charged. In the label-private setting ``(X, y)``
    is the random part of the keyed-hash split that trains the teachers: it
    may hold fewer rows than teachers, a single class, or no row at all. A
    teacher that receives no row abstains (it never votes; with no row at all
    every vote is empty, its distance to instability is 0 and nothing is
    answered except with the threshold's failure probability), so no such
    split makes ``fit`` fail after the charge.

    Parameters
    ----------
    estimator, X, y, n_teachers, rng, sample_weight, n_jobs, verbose
        See :func:`~skdp.ensemble._answerer.train_teachers`.
    classes : ndarray of shape (n_classes,)
        Sorted label set the votes are counted over (``classes``, or the
        labels of the whole training set), ``n_classes >= 2``.
    X_public : ndarray of shape (n_public, n_features)
        The queries (possibly none).
    release_params : dict
        ``epsilon``, ``delta``, ``max_unstable`` and ``calibration`` of the
        :class:`~skdp.ensemble._stability.StableVoteRelease`.
    label_vote : bool, default=False
        Ask one query before the public points: each teacher votes the most
        frequent label among its own rows (:func:`_label_vote_counts`). It is
        one more query of the same release (``max_queries`` counts it).

    Returns
    -------
    labels : ndarray of shape (n_public,)
        Majority label of each query where ``status == 1``, a filler
        elsewhere (:func:`~skdp.ensemble._answerer.released_labels`).
    status : ndarray of shape (n_public,)
        1 answered, 0 abstained, -1 refused.
    threshold : float
        The release threshold ``w``.
    voted_label : label or None
        The released answer of the label vote (``None`` when it was not
        asked or not answered).
    """
    n_queries = X_public.shape[0] + int(label_vote)
    teachers, release, assignment = train_teachers(
        estimator, X, y, n_teachers, rng,
        dict(release_params, max_queries=max(n_queries, 1)),
        sample_weight=sample_weight, n_jobs=n_jobs, verbose=verbose, return_assignment=True)
    if n_queries == 0:  # possible in the label-private setting on tiny data
        return (released_labels(classes, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=bool)),
                np.zeros(0, dtype=int), release.threshold, None)
    counts = vote_counts(teachers, X_public, classes)
    if label_vote:
        counts = np.vstack([_label_vote_counts(y, assignment, n_teachers, classes), counts])
    top, status = release.release(counts)
    voted_label = None
    if label_vote:
        if status[0] == ANSWERED:
            voted_label = classes[top[0]]
        top, status = top[1:], status[1:]
    return (released_labels(classes, top, status == ANSWERED), status, release.threshold,
            voted_label)


def _label_vote_counts(y, assignment, n_teachers, classes):
    """Votes of the label query: each teacher votes the most frequent label of its own rows.

    A teacher's vote depends on its own rows only (ties: the smallest
    label; a teacher with no row abstains), so adding or removing one
    record changes at most one vote, as for a public point, and the vote
    goes through the same stable-vote release (Thakkar 2019, Alg. 8-9).

    Returns
    -------
    counts : ndarray of shape (1, n_classes)
    """
    y_index = np.searchsorted(classes, y)
    per_teacher = np.zeros((n_teachers, len(classes)), dtype=np.int64)
    np.add.at(per_teacher, (assignment, y_index), 1)
    has_rows = per_teacher.sum(axis=1) > 0
    votes = np.argmax(per_teacher[has_rows], axis=1)
    return np.bincount(votes, minlength=len(classes)).reshape(1, -1).astype(np.int64)


# Answered public points per class below which no student is trained: the constant
# model of the released labels is kept instead (post-processing, no privacy cost).
_MIN_ANSWERED_PER_CLASS = 10


def _fit_fallback(X_released, labels_released, fallback_label, classes, n_features):
    """Constant classifier when too few labels were released, from public inputs only.

    Returns ``(strategy, model)``: ``"most_frequent"`` predicts the one class
    among the released labels (post-processing of the answerer's output);
    ``"constant"`` predicts ``fallback_label`` when no label of a public
    point was released (a public label, or the released answer of the label
    vote: :func:`_teacher_votes`); ``"uniform"``, when no label was released and no
    ``fallback_label`` was given, gives every class of ``classes`` the same
    probability (its ``predict`` is ``classes[0]``, the smallest label).
    None of them reads a private label; they never raise.
    """
    if labels_released.size:
        return "most_frequent", DummyClassifier(strategy="most_frequent").fit(
            X_released, labels_released)
    # Data-independent placeholder rows: the constant models ignore their input.
    if fallback_label is not None:
        return "constant", DummyClassifier(strategy="constant", constant=fallback_label).fit(
            np.zeros((1, n_features)), np.array([fallback_label]))
    # One row per class: the prior is uniform, argmax (predict) takes the first class.
    return "uniform", DummyClassifier(strategy="prior").fit(
        np.zeros((len(classes), n_features)), classes)


def _student_has(attr):
    def check(self):
        student = getattr(self, "student_", None)
        if student is None:
            student = self.estimator if self.student is None else self.student
        return hasattr(student, attr)
    return check


@fill_doc
class ModelAgnosticPrivateClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Differentially private classifier from any classifier (Thakkar 2019, Alg. 11).

    Subsample and aggregate, sparse vector and knowledge transfer: the private
    data is split among ``n_teachers`` copies of ``estimator`` (a
    :class:`PrivateQueryAnswerer`); the teachers label the unlabeled public
    points through the answerer, which releases only stable majority votes;
    a ``student`` is trained on the answered points (abstentions are
    dropped) and is the only model kept. Predictions come from the student:
    unlimited queries at no further privacy cost.

    It needs much data per teacher: at ``epsilon = 1`` and tables of 5,000
    to 20,000 rows, no generic teacher agrees often enough, and ``fit``
    keeps a constant fallback model (``fallback_``, with a warning) that
    scores the majority class at best. The design, the privacy argument and
    measurements are in the user guide (:doc:`/guide/model_agnostic`).

    Parameters
    ----------
    estimator : classifier
        Any object with ``fit`` and ``predict``; cloned for each teacher,
        with its ``random_state`` parameters seeded as in
        :class:`PrivateQueryAnswerer`. It may be an skdp estimator, but
        without an ``accountant`` (refused: how often the teachers would
        charge it depends on their rows).
    student : classifier or None, default=None
        Model trained on the privately labeled public points; ``None`` uses a
        clone of ``estimator``.
    n_teachers : int or "auto", default="auto"
        Number of teachers, see :class:`PrivateQueryAnswerer` (not checked
        against the number of rows, which is private; see Privacy). Without
        ``X_public``, ``"auto"`` counts the rows picked as queries.
    max_unstable : int or "auto", default="auto"
        Abstentions allowed before the remaining public points are refused
        (>= 1). ``"auto"``: the largest number (at most the number of public
        points) at which a unanimous vote needs no more teachers than with
        one abstention; that is 1 at ``epsilon = 1`` and every public point
        at very large ``epsilon`` (an unstable vote is then skipped, not the
        end of the labelling). Each allowed abstention adds sparse-vector
        noise, which more teachers, each with fewer rows, must outvote.
    %(epsilon)s
    delta : float, default=1e-6
        In ``(0, 1)``; see :class:`PrivateQueryAnswerer`.
    calibration : {"lyu", "thesis"}, default="lyu"
        Sparse-vector calibration, see :class:`PrivateQueryAnswerer`.
    public_fraction : float, default=0.2
        Used only when ``fit`` gets no ``X_public``: the fraction of training
        rows (chosen per row by a keyed hash, so about that fraction) whose
        labels are discarded and whose features serve as the public points
        (label-private setting).
    fallback_label : "vote", scalar or None, default="vote"
        Label of the constant fallback model when the answerer releases no
        label of a public point. ``"vote"``: one more query, asked first,
        on which each teacher votes the most frequent label of its own rows;
        its stable answer, if released, is the fallback label (usually the
        majority class; ``fallback_ = "constant"``), otherwise as ``None``.
        A scalar: a label known publicly (for example the negative class);
        must be among ``classes`` when that is given. ``None``: the fallback
        gives every class the same probability (see ``fallback_``). Ignored
        whenever a label of a public point is released.
    %(classes)s
        The teachers vote over these labels; the student learns the ones
        released; ``classes_`` is ``classes`` all the same.
    %(n_jobs)s
        Teachers are trained with joblib (any backend, e.g. Dask).
    %(random_state)s
    %(accountant)s
    verbose : int, default=0
        Verbosity level; 0 is silent. Above 0 it prints
        non-private diagnostics (joblib's progress of the teachers' fits);
        keep them with the data holder. The teachers' own ``verbose`` is warned about
        (:class:`~skdp.PrivacyLeakWarning`).

    Attributes
    ----------
    student_ : estimator
        The fitted student; the only model derived from the private data.
        A :class:`~sklearn.dummy.DummyClassifier` when ``fallback_`` is set.
    fallback_ : {None, "most_frequent", "constant", "uniform"}
        ``None`` when ``student_`` was trained on the answered points.
        Otherwise fewer than two classes or fewer than 10 points per class
        were released (or the student's ``fit`` raised on the answered
        points), and ``student_`` is a
        constant model (a :class:`~skdp.exceptions.FallbackModelWarning` is
        emitted): ``"most_frequent"`` predicts the most frequent released
        class; with no label of a public point released, ``"constant"``
        predicts the label of the teachers' released vote or the given
        ``fallback_label``, and ``"uniform"`` (neither) gives
        every class of ``classes_`` probability ``1 / n_classes`` and
        predicts ``classes_[0]``.
    max_unstable_ : int
        Number of abstentions allowed (``max_unstable`` resolved).
    classes_ : ndarray of shape (n_classes,)
        With ``classes`` given: ``classes``, sorted (public), even when the
        student learned only some of them; ``predict_proba``,
        ``predict_log_proba`` and ``decision_function`` have one column per
        class, in this order, and a class the student never saw has
        probability 0. With ``classes=None``: the labels the
        student knows (those among the answered votes, or
        ``[fallback_label]``), a post-processing of the released labels;
        they match the student's columns.
    n_teachers_ : int
        Number of teachers used.
    threshold_ : float
        Threshold ``w`` on the distance to instability.
    n_public_ : int
        Number of public points queried.
    n_answered_, n_abstained_, n_refused_ : int
        How the public points fared; the student is trained on the answered ones.
    privacy_spent_ : PrivacyBudget or LabelPrivateBudget
        ``(epsilon, delta)``; a :class:`LabelPrivateBudget` when ``X_public``
        was not given, recording the weaker, label-private guarantee.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit`` (only when ``X`` has string
        column names).

    Privacy
    -------
    Neighbouring relation: add/remove one private record (Thakkar (2019),
    Sec. 5.1). Protected: each private training record, features and label
    (and its ``sample_weight``, which only its own teacher sees). The labels
    released for the public points are ``(epsilon, delta)``-DP
    (:class:`PrivateQueryAnswerer`; Thakkar (2019), Thm. 9, with a corrected
    distance to instability), and the student, or the constant fallback, is
    a post-processing of them and of public inputs (Thakkar (2019),
    Alg. 11), so ``student_`` and every prediction are
    ``(epsilon, delta)``-DP. The public points ``X_public`` are not
    protected. Without ``X_public``, about ``public_fraction`` of the rows
    serve as queries and only their labels are protected
    (``privacy_spent_`` is a :class:`LabelPrivateBudget`); pass ``X_public``
    for a record-level guarantee. Public inputs: ``classes`` (with
    ``classes=None`` the label set is read from ``y``, with a
    :class:`~skdp.PrivacyLeakWarning`), ``fallback_label``, ``n_teachers``
    (never compared with the private number of rows) and the other
    parameters. Details: :ref:`model_agnostic_privacy`.

    The guarantee is proved for exact real-valued noise; the floating-point
    noise drawn here can leak through its least significant bits (Mironov
    2012).

    See Also
    --------
    PrivateQueryAnswerer : The online answering service used for the labels.

    Notes
    -----
    The student sees only answered points, those far from the teachers'
    decision boundary. If fewer than two classes are answered, ``fit`` keeps
    a constant model (``fallback_``, with a
    :class:`~skdp.exceptions.FallbackModelWarning`) rather than read a label
    from the private data. After the charge ``fit`` never raises: a teacher
    that receives no row or fails abstains, so a misconfigured ``estimator``
    shows up as unanswered public points. Why it cannot work on small tables
    at ``epsilon = 1``, and the label-private setting without ``X_public``:
    :doc:`/guide/model_agnostic`.

    References
    ----------
    R. Bassily, A. Thakurta and O. Thakkar. Model-agnostic private learning.
    NeurIPS 2018; O. Thakkar, PhD thesis, Boston University, 2019, Ch. 5.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp.ensemble import ModelAgnosticPrivateClassifier
    >>> rng = np.random.default_rng(0)
    >>> X, X_public = rng.normal(size=(5000, 2)), rng.normal(size=(100, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = ModelAgnosticPrivateClassifier(LogisticRegression(), n_teachers=100,
    ...                                      max_unstable=2, epsilon=5.0, classes=[0, 1],
    ...                                      random_state=0)
    >>> clf.fit(X, y, X_public=X_public).predict([[1.0, 1.0], [-1.0, -1.0]]).tolist()
    [1, 0]
    """

    # Thakkar (2019), Sec. 5.1: DP for add/remove neighbours (labels only without ``X_public``);
    # meta-estimators that need replace-one candidates (PrivateParameterSelector) refuse it.
    _neighbouring_relation = "add/remove"

    def __init__(self, estimator, *, student=None, n_teachers="auto", max_unstable="auto",
                 epsilon=1.0, delta=1e-6, calibration="lyu", public_fraction=0.2,
                 fallback_label="vote", classes=None, n_jobs=None, random_state=None,
                 accountant=None, verbose=0):
        self.estimator = estimator
        self.student = student
        self.n_teachers = n_teachers
        self.max_unstable = max_unstable
        self.epsilon = epsilon
        self.delta = delta
        self.calibration = calibration
        self.public_fraction = public_fraction
        self.fallback_label = fallback_label
        self.classes = classes
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def fit(self, X, y, X_public=None, sample_weight=None):
        """Train the teachers, label the public points privately, train the student.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private training data (dense, numeric).
        y : array-like of shape (n_samples,)
            Private labels (among ``classes`` when it is given).
        X_public : array-like of shape (n_public, n_features) or None, default=None
            Unlabeled public points. ``None``: label-private fallback (see
            ``public_fraction`` and the Privacy section). In a
            :class:`~sklearn.pipeline.Pipeline` the earlier steps do not
            transform it: pass it transformed, or put the preprocessing in
            ``estimator`` and ``student``.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights, passed to the ``fit`` of each teacher with its own
            rows (``estimator`` must take ``sample_weight``; the student
            learns from the public points and gets none). A record's weight
            is protected with it and is not bounded: however it is weighted,
            a record changes one teacher. Without ``X_public`` the weights of
            the rows drawn as unlabeled queries are not used.

        Returns
        -------
        self : ModelAgnosticPrivateClassifier
            The fitted classifier.

        Invalid parameters and data are refused before the budget is
        charged; after the charge ``fit`` does not raise.

        Warns
        -----
        FallbackModelWarning
            If fewer than two classes were answered (or the student could
            not be fitted on them): ``student_`` is then a constant model,
            see ``fallback_``.
        """
        X, y = validate_data(self, X, y)
        classes, _ = resolve_classes(self.classes, y, type(self).__name__)
        check_classifier_like(self.estimator, "estimator")
        check_teacher_estimator(self.estimator)
        student = self.estimator if self.student is None else self.student
        check_classifier_like(student, "student")
        sample_weight = check_teacher_weights(self.estimator, sample_weight, X.shape[0])
        epsilon, delta = self._resolve_budget(allow_zero_delta=False)
        check_positive_int(self.verbose, "verbose", low=0)  # joblib would check it after the charge
        calibration = check_option(self.calibration, "calibration", CALIBRATIONS)
        label_vote = isinstance(self.fallback_label, str) and self.fallback_label == "vote"
        if self.fallback_label is not None and np.ndim(self.fallback_label) != 0:
            raise ValueError("fallback_label must be a single label (a scalar), 'vote' or None, "
                             f"got {self.fallback_label!r}.")
        if (self.fallback_label is not None and not label_vote and self.classes is not None
                and not np.isin(self.fallback_label, classes)):
            raise ValueError(f"fallback_label={self.fallback_label!r} is not in "
                             f"classes={self.classes!r}.")
        if X_public is not None:
            X_public = validate_data(self, X_public, reset=False)
        else:
            fraction = check_real(self.public_fraction, "public_fraction", low=0.0, high=1.0,
                                  low_inclusive=False, high_inclusive=False)
        # Validated here, before the charge; without X_public the number of queries (and so
        # "auto") is known only after the split below, which cannot make it fail.
        # fallback_label="vote" asks one query more (the label vote, _teacher_votes).
        n_queries = 1 if X_public is None else max(X_public.shape[0] + int(label_vote), 1)
        max_unstable = resolve_max_unstable(self.max_unstable, epsilon=epsilon, delta=delta,
                                            max_queries=n_queries, calibration=calibration)
        release_params = dict(epsilon=epsilon, delta=delta, max_unstable=max_unstable,
                              calibration=calibration)
        n_teachers = resolve_n_teachers(self.n_teachers, max_queries=n_queries,
                                        **release_params)

        # No row count: under add/remove neighbours it is private, and the base class would
        # warn "delta >= 1 / n_samples = <1/n>" from it (a fit at n = 1/delta warned, one
        # row less did not).
        budget, rng = self._start_private_fit(None, allow_zero_delta=False)
        if X_public is None:
            # Label-private fallback: each row's role comes from a keyed hash of the row alone.
            key = rng.integers(0, 2**64, size=2, dtype=np.uint64)
            is_query = (keyed_row_hash(X, key) >> np.uint64(11)) * 2.0**-53 < fraction
            X, y, X_public = X[~is_query], y[~is_query], X[is_query]
            if sample_weight is not None:
                sample_weight = sample_weight[~is_query]
            budget = LabelPrivateBudget(budget.epsilon, budget.delta,
                                        n_query_rows=int(is_query.sum()))
            # From the query rows only (as the threshold), never from the private row count.
            # An int max_unstable was validated above; "auto" only bisects over calibrations
            # that release_calibration accepts, so neither can fail here.
            n_queries = max(X_public.shape[0] + int(label_vote), 1)
            max_unstable = resolve_max_unstable(self.max_unstable, epsilon=epsilon,
                                                delta=delta, max_queries=n_queries,
                                                calibration=calibration)
            release_params["max_unstable"] = max_unstable
            n_teachers = resolve_n_teachers(self.n_teachers, max_queries=n_queries,
                                            **release_params)
        # The budget was charged above: nothing from here on may fail because of the split.
        labels, status, threshold, voted_label = _teacher_votes(
            self.estimator, X, y, classes, X_public, n_teachers=n_teachers, rng=rng,
            release_params=release_params, sample_weight=sample_weight, n_jobs=self.n_jobs,
            verbose=self.verbose, label_vote=label_vote)
        answered = status == ANSWERED
        # Everything below is post-processing of the released labels and the public points.
        X_released, labels_released = X_public[answered], labels[answered]
        fallback, reason = None, None
        min_answered = _MIN_ANSWERED_PER_CLASS * len(classes)
        if np.unique(labels_released).size >= 2 and answered.sum() >= min_answered:
            student = clone(student)
            seed = draw_seeds(student, 1, rng)
            if seed is not None:
                seed_random_states(student, int(seed[0]))
            try:
                student = student.fit(X_released, labels_released)
            except Exception as exc:  # e.g. more neighbours than answered points
                # Post-processing, so raising would leak nothing, but the budget is spent:
                # keep a usable constant model rather than nothing.
                reason = f"the student's fit raised {type(exc).__name__}: {exc}"
        elif np.unique(labels_released).size < 2:
            reason = "fewer than two classes among them: no student can be trained"
        else:
            # A student fitted on a handful of points is worse than their majority
            # (flights, 5 points answered: 0.617 against 0.761).
            reason = f"fewer than {min_answered} ({_MIN_ANSWERED_PER_CLASS} per class)"
        if reason is not None:
            # "vote": the released answer of the label vote (post-processing), if any.
            fallback_label = voted_label if label_vote else self.fallback_label
            fallback, student = _fit_fallback(X_released, labels_released,
                                              fallback_label, classes, X.shape[1])
            what = ("gives every class the same probability and predicts "
                    if fallback == "uniform" else "predicts ")
            warnings.warn(
                f"{int(answered.sum())} of {len(answered)} public points were answered, "
                f"{reason}. Kept a constant model (fallback_={fallback!r}) that {what}"
                f"{student.classes_.tolist()[0]!r} everywhere, at no extra privacy cost. "
                "Subsample-and-aggregate needs teachers that agree: use more rows per "
                "teacher (more data, fewer teachers), a larger epsilon, or a fallback_label.",
                FallbackModelWarning, stacklevel=2)
        self.student_ = student
        self.fallback_ = fallback
        # Declared classes are public: they stay the model's label set even when the student
        # learned a subset of them (its missing classes get probability 0 in predict_proba).
        self.classes_ = student.classes_ if self.classes is None else classes
        self.n_teachers_ = n_teachers
        self.max_unstable_ = max_unstable
        self.threshold_ = threshold
        self.n_public_ = X_public.shape[0]
        self.n_answered_ = int(answered.sum())
        self.n_abstained_ = int(np.sum(status == ABSTAINED))
        self.n_refused_ = int(np.sum(status == REFUSED))
        self.privacy_spent_ = budget
        return self

    def _student_input(self, X):
        check_is_fitted(self)
        return self.student_, validate_data(self, X, reset=False)

    def _expand(self, values, fill):
        """The student's columns at their place in ``classes_`` (post-processing)."""
        seen = getattr(self.student_, "classes_", self.classes_)
        return expand_class_columns(values, seen, self.classes_, fill)

    def predict(self, X):
        """Student's predicted labels (no further privacy cost).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        student, X = self._student_input(X)
        return student.predict(X)

    @available_if(_student_has("predict_proba"))
    def predict_proba(self, X):
        """Student's class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to classify.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``; 0 for a class the student
            never saw.
        """
        student, X = self._student_input(X)
        return self._expand(student.predict_proba(X), 0.0)

    @available_if(_student_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Student's log class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to classify.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``; ``-inf`` for a class the
            student never saw.
        """
        student, X = self._student_input(X)
        return self._expand(student.predict_log_proba(X), -np.inf)

    @available_if(_student_has("decision_function"))
    def decision_function(self, X):
        """Student's decision function.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to classify.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As the student's when it saw every class of ``classes_`` (the
            score of ``classes_[1]`` for two classes); otherwise one column
            per class of ``classes_``, a binary student's score ``s`` becoming
            ``(-s, s)`` for its two classes, and a class it never saw getting
            the lowest finite float.
        """
        student, X = self._student_input(X)
        seen = getattr(student, "classes_", self.classes_)
        return expand_decision_function(student.decision_function(X), seen, self.classes_)
