"""User-level (joint) differentially private matrix completion (Thakkar (2019), Ch. 6)."""

from skdp.matrix_completion._completer import DPMatrixCompleter

__all__ = [
    "DPMatrixCompleter",
]
