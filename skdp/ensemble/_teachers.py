"""Teachers of subsample-and-aggregate: per-record assignment, parallel training, votes."""

import functools
import random
import threading
import warnings
from contextlib import contextmanager

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.utils.validation import has_fit_parameter
from threadpoolctl import ThreadpoolController

from skdp.accounting import BudgetAccountant
from skdp.accounting._accountant import spending_refused
from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._validation import check_sample_weight

__all__ = ["assign_teachers", "check_teacher_estimator", "check_teacher_weights",
           "fit_teachers", "keyed_row_hash", "seed_random_states", "unseeded_random_states",
           "vote_counts"]

_SIGN_BIT = np.uint64(1 << 63)
_MUL_1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL_2 = np.uint64(0x94D049BB133111EB)


def _mix(z):
    # The splitmix64 finalizer: a bijection of 64-bit words that spreads every input bit.
    z = (z ^ (z >> np.uint64(30))) * _MUL_1
    z = (z ^ (z >> np.uint64(27))) * _MUL_2
    return z ^ (z >> np.uint64(31))


def keyed_row_hash(X, key):
    """64-bit keyed hash of each row of ``X``, computed from that row alone.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Numeric data (hashed as float64; ``-0.0`` and ``0.0`` hash alike).
    key : sequence of two int
        Secret 64-bit words drawn from the fit's generator.

    Returns
    -------
    h : ndarray of uint64, shape (n_samples,)
    """
    key = np.asarray(key, dtype=np.uint64)
    h = np.full(X.shape[0], key[0], dtype=np.uint64)
    for j in range(X.shape[1]):
        word = np.array(X[:, j], dtype=np.float64).view(np.uint64)  # a copy: safe to edit
        word[word == _SIGN_BIT] = 0
        h = _mix(h ^ word)
    return _mix(h ^ key[1])


def assign_teachers(X, n_teachers, key):
    """Teacher of each record: a keyed hash of the record's own features.

    A record's teacher depends on nothing but the record and the key, so
    adding or removing a record leaves every other record with its teacher:
    under add/remove neighbours exactly one teacher's training set changes
    (slicing a shuffled array would move the chunk boundaries instead).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Numeric data.
    n_teachers : int
        Number of teachers.
    key : sequence of two int
        Secret key.

    Returns
    -------
    teacher : ndarray of shape (n_samples,)
        Teacher index of each row, in ``range(n_teachers)``.
    """
    return (keyed_row_hash(X, key) % np.uint64(n_teachers)).astype(np.intp)


@functools.cache
def _threadpools():
    # Built once per process (threadpoolctl's one-shot helper rescans the libraries at
    # every call, ~25 ms), after the estimators' native libraries are loaded.
    return ThreadpoolController()


@contextmanager
def _silenced():
    # A teacher's warnings depend on its private rows (whether its solver converged, "the
    # least populated class in y has only 2 members"...): like its errors, they must not
    # reach the caller. Entered in the calling thread around the whole joblib loop (which
    # covers the sequential and threading backends, and restores the caller's filters at
    # the end even if worker threads' own contexts interleave) and again in each teacher's
    # task (for process workers, whose warnings would print to the shared stderr).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# Re-entrant: a teacher may itself be a subsample-and-aggregate estimator.
_GLOBAL_STREAMS = threading.RLock()
# How deep the current thread is inside _own_global_streams (0 outside any teacher).
_STREAM_DEPTH = threading.local()


def _inside_teacher():
    """Whether the current thread holds the global streams (it runs a teacher's fit)."""
    return getattr(_STREAM_DEPTH, "value", 0) > 0


@contextmanager
def _own_global_streams(entropy):
    """NumPy's and Python's global generators seeded from ``entropy``, restored afterwards.

    Randomness that no ``random_state`` parameter controls (``np.random``
    called directly, a shuffling cross-validation splitter inside a search)
    draws from these process-wide generators. The teachers are fitted in turn,
    and how much one draws can depend on its rows, so without this one record
    would shift the stream of every later teacher (see
    :func:`seed_random_states`). The lock keeps threads (joblib's threading
    backend) from interleaving their draws; it serialises such fits. It is
    re-entrant for an ensemble that is itself a teacher (same thread; its
    teachers are then fitted in that thread, see :func:`fit_teachers`), but
    a teacher's fit that waits for another thread entering it again (a
    search with ``n_jobs`` over an ensemble, under the threading backend)
    deadlocks: that thread cannot be told from an unrelated one, whose
    teachers must not share the streams.
    """
    with _GLOBAL_STREAMS:
        numpy_state, python_state = np.random.get_state(), random.getstate()
        seed = np.random.SeedSequence(entropy).generate_state(1)[0]
        np.random.seed(seed)
        random.seed(int(seed))
        _STREAM_DEPTH.value = getattr(_STREAM_DEPTH, "value", 0) + 1
        try:
            yield
        finally:
            _STREAM_DEPTH.value -= 1
            np.random.set_state(numpy_state)
            random.setstate(python_state)


def _fit_teacher(estimator, X, y, seed, sample_weight=None, stream=0):
    if len(y) == 0:
        return None  # a teacher without data does not vote
    if np.unique(y).size == 1:
        # Most classifiers refuse one class; the constant vote is what any of them would give.
        return DummyClassifier(strategy="most_frequent").fit(X, y)
    # Teachers are many small fits: BLAS/OpenMP threads only add contention (up to 10x
    # slower L-BFGS on a busy machine); parallelism comes from n_jobs across teachers.
    # The limit is process-wide, saved and restored: entered under the global streams'
    # lock, so that threads (joblib's threading backend) restore it in order (entered
    # before, a waiting teacher saved the running one's limit of 1 and restored it last,
    # leaving the caller's BLAS single-threaded).
    with (_own_global_streams(stream), _threadpools().limit(limits=1), _silenced(),
          spending_refused()):
        try:
            # Inside the try: only teachers with two classes get here, so an error of clone
            # or set_params would depend on the rows (the estimator is checked before the
            # charge; this is the backstop).
            estimator = clone(estimator)
            if seed is not None:
                seed_random_states(estimator, seed)
            if sample_weight is None:
                return estimator.fit(X, y)
            return estimator.fit(X, y, sample_weight=sample_weight)
        except Exception:
            # Whether a fit fails depends on this teacher's private rows (e.g. fewer rows
            # than neighbours): raising would reveal it, abstaining changes one vote only.
            return None


def unseeded_random_states(estimator):
    """Names of the ``random_state`` parameters of ``estimator`` left at ``None``.

    Nested parameters count (``get_params(deep=True)``: a pipeline step's
    ``<step>__random_state``, a meta-estimator's ``estimator__random_state``).
    """
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        return []
    return sorted(key for key, value in estimator.get_params(deep=True).items()
                  if value is None and (key == "random_state"
                                        or key.endswith("__random_state")))


def seed_random_states(estimator, seed):
    """Set every ``random_state`` of ``estimator`` left at ``None`` to ``seed`` (in place).

    An estimator whose ``random_state`` is ``None`` draws from NumPy's global
    generator. The teachers are fitted in turn (in one process, or several per
    worker), and how much a teacher draws can depend on its rows (a shuffle
    per epoch, a seed per class it saw, none for a one-class teacher): one
    record would then shift the global stream for every later teacher and
    change many votes, while the distance to instability allows for one
    (Thakkar 2019, Sec. 5.1: one record changes one teacher). Seeding every
    ``random_state`` from the fit's generator keeps each teacher a function of
    its own rows and its seed. Randomness that no ``random_state`` parameter
    controls (an estimator that calls ``np.random`` directly, a
    cross-validation splitter with ``shuffle=True`` inside a search) is
    isolated by :func:`_own_global_streams` instead.

    Returns
    -------
    estimator : estimator
        The same object.
    """
    keys = unseeded_random_states(estimator)
    if keys:
        estimator.set_params(**{key: seed for key in keys})
    return estimator


def check_teacher_estimator(estimator, name="estimator"):
    """Refuse (before any budget is charged) teachers that carry a budget accountant.

    The ensemble's guarantee comes from its vote (Thakkar 2019, Sec. 5.1), not from
    the teachers' own budgets, and an accountant shared by the teachers would be
    an unnoised output of the private data: a teacher whose rows hold one class
    is replaced by a constant vote and a teacher whose fit fails abstains, so the
    accountant's ``spent`` would count, e.g., the teachers that saw two classes.
    Nested estimators (pipelines, meta-estimators) are searched too, and so are
    lists, tuples, sets and dicts among the parameters (a list of estimators, a
    ``GridSearchCV`` ``param_grid``), which ``get_params(deep=True)`` does not
    enter but ``clone`` keeps the accountant in.
    """
    _warn_verbose_teachers(estimator, name)
    key = _find_accountant(estimator, "", set())
    if key is not None:
        raise ValueError(
            f"{name} carries a BudgetAccountant ({key or name}=...). Teachers are trained on "
            f"parts of the private data and protected by the ensemble's own budget; "
            f"how often their accountant would be charged depends on their rows, so "
            f"it would leak. Give the teachers accountant=None (the ensemble's "
            f"`accountant` records the whole fit). Nothing was spent.")


def _warn_verbose_teachers(estimator, name):
    """Warn (before the charge) that teachers set to print will print private facts.

    A teacher is fitted on its own private rows: a verbose solver prints its
    progress on them, a verbose Pipeline, FeatureUnion or ColumnTransformer
    each step's fitting time. None of it is noised, and a Python or C
    library's own output cannot be captured safely (it goes to the process's
    standard output), so the output is flagged as
    :class:`~skdp.model_selection.PrivateParameterSelector` does for its
    candidates.
    """
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        return
    from skdp.model_selection._steps import verbose_parts  # lazy: a heavier import

    try:
        parts = verbose_parts(estimator)
    except Exception:  # an estimator whose parameters cannot be walked: nothing to flag
        return
    if parts:
        paths = sorted(path or "the estimator itself" for path in parts)
        warnings.warn(
            f"verbose is set on part(s) {paths} of {name}: each of the teachers prints "
            f"its solver's progress or its steps' timings on its own private rows. That "
            f"output is not covered by the differential privacy guarantee (the answers and "
            f"the released model are): do not share it. Set verbose=False (or 0) on those "
            f"parts.", PrivacyLeakWarning, stacklevel=4)


def _find_accountant(value, path, seen):
    """Path of a BudgetAccountant in ``value``'s parameters or containers, else None."""
    if isinstance(value, BudgetAccountant):
        return path
    if id(value) in seen:
        return None
    seen.add(id(value))
    if isinstance(value, dict):
        items = [(f"{path}[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    elif hasattr(value, "get_params") and not isinstance(value, type):
        items = [(f"{path}__{key}" if path else key, item)
                 for key, item in value.get_params(deep=False).items()]
    else:
        return None
    for key, item in items:
        found = _find_accountant(item, key, seen)
        if found is not None:
            return found
    return None


def check_teacher_weights(estimator, sample_weight, n_samples):
    """Validate row weights for the teachers (before any budget is charged).

    Subsample-and-aggregate needs no bound on a weight: a record, weight
    included, changes one teacher's training set whatever that teacher does
    with it (Thakkar 2019, Sec. 5.1), so the weights are only checked to be
    finite and non-negative, and ``estimator`` to accept them.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,) or None
        ``None`` when every weight is 1 (the unweighted fit, bit for bit).
    """
    # Refused whatever the weights are (unit weights included): they are protected, so
    # whether they are all 1 must not decide whether fit raises.
    if sample_weight is not None and not has_fit_parameter(estimator, "sample_weight"):
        raise TypeError(
            f"sample_weight was given, but the teachers' estimator "
            f"{type(estimator).__name__} does not take sample_weight in fit. Nothing was "
            f"spent.")
    return check_sample_weight(sample_weight, n_samples)


def fit_teachers(estimator, X, y, teacher, n_teachers, seeds, *, sample_weight=None,
                 n_jobs=None, verbose=0, stream_key=()):
    """Train one clone of ``estimator`` per teacher on its own records (joblib).

    Parameters
    ----------
    estimator : classifier
        The base estimator (cloned per teacher).
    X : ndarray of shape (n_samples, n_features)
        Training data.
    y : ndarray of shape (n_samples,)
        Labels.
    teacher : ndarray of shape (n_samples,)
        Teacher index of each row (:func:`assign_teachers`).
    n_teachers : int
        Number of teachers.
    seeds : ndarray of shape (n_teachers,) or None
        ``random_state`` of each teacher's clone, or ``None`` to leave it.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights, passed to each teacher's ``fit`` with its own rows (not
        passed to a teacher whose own rows all weigh 1; a teacher whose rows
        are all of one class is constant and ignores them).
    n_jobs : int or None, default=None
        joblib parallelism; any joblib backend (e.g. ``"dask"``) applies. Ignored
        (sequential) inside another ensemble's teacher, see :func:`_own_global_streams`.
    verbose : int, default=0
        joblib verbosity.
    stream_key : sequence of int, default=()
        Entropy (with the teacher's index) of the global NumPy and Python
        generators during each teacher's fit (:func:`_own_global_streams`).

    Returns
    -------
    teachers : list
        Fitted estimators; ``None`` for a teacher that received no record, or
        whose ``fit`` raised (it abstains: see :func:`vote_counts`). Warnings
        of the teachers' fits are silenced: they depend on the teachers' rows.
    """
    order = np.argsort(teacher, kind="stable")  # keeps the rows' relative order in each chunk
    bounds = np.searchsorted(teacher[order], np.arange(n_teachers + 1))
    chunks = (order[bounds[j]:bounds[j + 1]] for j in range(n_teachers))
    # Inside a teacher (this ensemble is itself a teacher), this thread holds the global
    # streams' lock: teachers dispatched to other threads (joblib's threading backend, also
    # the nested backend of process workers) would wait for it while this thread waits for
    # them. Fitted in this thread instead (same result: each teacher has its own seeds).
    parallel = (Parallel(n_jobs=1, backend="sequential", verbose=verbose) if _inside_teacher()
                else Parallel(n_jobs=n_jobs, verbose=verbose))
    with _silenced():
        return parallel(
            delayed(_fit_teacher)(estimator, X[idx], y[idx],
                                  None if seeds is None else int(seeds[j]),
                                  _own_weights(sample_weight, idx), [*stream_key, j])
            for j, idx in enumerate(chunks)
        )


def _own_weights(sample_weight, idx):
    # Decided per teacher, from its own rows' weights: a global "all weights are 1" switch
    # would let one record's weight change how every teacher is fitted (an estimator may
    # treat fit(X, y) and fit(X, y, sample_weight=ones) differently).
    if sample_weight is None or np.all(sample_weight[idx] == 1.0):
        return None
    return sample_weight[idx]


def vote_counts(teachers, X, classes):
    """Count the teachers' votes for each class on each query.

    A teacher whose ``predict`` raises, or returns something other than one
    label of ``classes`` per query, abstains on those queries: whether that
    happens depends on the teacher's private rows (a nearest-neighbour
    teacher with fewer rows than neighbours, a regressor's leaf means), so
    an error would reveal them, while an abstention changes only that
    teacher's vote, which the distance to instability already allows for.
    The teachers' warnings are silenced for the same reason.

    Parameters
    ----------
    teachers : list
        Fitted teachers (``None`` entries do not vote).
    X : ndarray of shape (n_queries, n_features)
        Queries.
    classes : ndarray of shape (n_classes,)
        Sorted labels of the private data.

    Returns
    -------
    counts : ndarray of shape (n_queries, n_classes)
    """
    counts = np.zeros((X.shape[0], len(classes)), dtype=np.int64)
    rows = np.arange(X.shape[0])
    # Many small predictions, as in _fit_teacher, whose warnings are silenced for the same
    # reason as its errors (they depend on the teachers' private rows).
    with _threadpools().limit(limits=1), _silenced():
        for j, model in enumerate(teachers):
            if model is None:
                continue
            try:
                with _own_global_streams([j]):  # a fixed stream per teacher, as in its fit
                    pred = np.asarray(model.predict(X))
                if pred.shape != rows.shape:
                    continue
                idx = np.minimum(np.searchsorted(classes, pred), len(classes) - 1)
                valid = np.asarray(classes[idx] == pred, dtype=bool)
            except Exception:  # abstains, see the docstring
                continue
            if valid.shape != rows.shape:
                continue
            counts[rows[valid], idx[valid]] += 1
    return counts
