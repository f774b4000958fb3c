"""Shared parameter descriptions, written once and substituted into docstrings.

A docstring line holding only ``%(name)s`` (any indentation) is replaced by the
shared block ``name``, re-indented to that line's indentation.
"""

import re
import textwrap

__all__ = ["fill_doc", "SHARED_PARAMS"]

SHARED_PARAMS = {
    "epsilon": """\
epsilon : float, default=1.0
    Privacy loss bound, finite and > 0. Smaller is more private and noisier.""",
    "delta": """\
delta : float or None
    Probability with which the epsilon bound may fail, in ``[0, 1)``. Keep it
    well below ``1 / n_samples``.""",
    "data_norm": """\
data_norm : float, default=1.0
    Bound on the L2 norm of each (augmented) row. Rows with a larger norm are
    scaled down to it, a per-row operation that costs no privacy. It must be
    chosen without looking at the private data.""",
    "random_state": """\
random_state : int, numpy.random.Generator, "secure" or None, default=None
    Source of all noise. ``None`` draws fresh entropy from the operating
    system and is the safe choice for a real release; ``"secure"`` also uses a
    cryptographically secure generator (ChaCha20, optional ``randomgen``
    package), whose state cannot be reconstructed from its output. An int makes runs
    reproducible for tests and examples, but anyone who knows the seed (it
    stays in the fitted model's parameters) can remove the noise, and every
    clone of an int-seeded estimator (each fit of ``GridSearchCV`` or
    ``cross_val_score``) draws the *same* noise, which then cancels between
    fits on overlapping data. A Generator (or a legacy ``RandomState``) gives
    each clone an independent child stream, reproducible from it. A
    Generator stays in the parameters, so a pickled model carries its state
    after the fit, from which the noise can be replayed.""",
    "accountant": """\
accountant : BudgetAccountant or None, default=None
    A shared total budget. Each fit spends ``(epsilon, delta)`` from it and is
    refused with :class:`~skdp.BudgetExceededError` before touching the data
    when the total would be overrun. ``clone`` (and so ``GridSearchCV``) keeps
    the same accountant, so every fit of a search is counted. A search or
    ``cross_val_score`` with ``n_jobs > 1`` on joblib's default (process)
    backend gives its workers pickled copies, which refuse to spend (every
    fit fails with a ``RuntimeError`` saying so), unless the accountant keeps
    its spends in a ledger file (``BudgetAccountant(..., ledger="budget.db")``),
    which every process spends from.""",
    "n_jobs": """\
n_jobs : int or None, default=None
    Number of parallel jobs (joblib). ``None`` means 1 unless inside a
    :func:`joblib.parallel_backend` context; ``-1`` uses all processors.""",
    "verbose": """\
verbose : int, default=0
    Verbosity level; 0 is silent. Above 0 it prints non-private diagnostics
    (the guarantee does not cover them): keep them with the data holder.""",
    "classes": """\
classes : array-like of shape (n_classes,) or None, default=None
    The public list of possible labels. The model knows exactly these
    labels, even those no training row has, and ``y`` must use only them.
    ``None`` reads the label set from ``y``, which reveals every label
    present, and emits a :class:`~skdp.PrivacyLeakWarning`.""",
    "class_weight": """\
class_weight : dict or None, default=None
    Public weights of the classes, ``{label: weight}``; labels left out weigh
    1. Each row's loss is multiplied by its class's weight (and by its
    ``sample_weight``), and weights above 1 are clipped to 1, so give the
    largest class weight as 1 (e.g. ``{0: 0.1, 1: 1.0}`` to weigh the rare
    class 1 ten times more). ``"balanced"`` is refused: it reads the class
    counts from the private labels; compute the weights from public class
    shares instead.""",
    "non_private_diagnostics": """\
The solver diagnostics marked *not private* among the attributes are
computed from the private data without noise and are not covered by this
guarantee. They are kept on the fitted estimator for the data holder, and
are left out when it is pickled or copied; do not publish them.""",
}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(obj):
    """Substitute shared parameter blocks into ``obj.__doc__`` (a decorator).

    Parameters
    ----------
    obj : class or function
        Object whose docstring holds ``%(name)s`` placeholder lines.

    Returns
    -------
    obj : class or function
        The same object, docstring filled in.
    """
    if obj.__doc__:
        def _sub(match):
            block = SHARED_PARAMS[match.group("name")]
            return textwrap.indent(block, match.group("indent"))
        obj.__doc__ = _PLACEHOLDER.sub(_sub, obj.__doc__)
    return obj
