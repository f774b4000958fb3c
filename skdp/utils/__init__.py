"""Validation, clipping, random state and shared helpers."""

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._clipping import clip_entries, clip_rows_l2, row_norms_l2
from skdp.utils._discovery import all_estimators
from skdp.utils._docstrings import fill_doc
from skdp.utils._multiclass import fit_one_vs_rest, resolve_classes
from skdp.utils._random import check_random_state, spawn_random_states
from skdp.utils._validation import (
    check_epsilon_delta,
    check_option,
    check_positive_int,
    check_real,
)

__all__ = [
    "PrivacyLeakWarning",
    "all_estimators",
    "check_epsilon_delta",
    "check_option",
    "check_positive_int",
    "check_random_state",
    "check_real",
    "clip_entries",
    "clip_rows_l2",
    "fill_doc",
    "fit_one_vs_rest",
    "resolve_classes",
    "row_norms_l2",
    "spawn_random_states",
]
