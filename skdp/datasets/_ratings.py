"""Ratings files a user already has (MovieLens and similar), as a sparse users x items matrix."""

import codecs
import io
import re
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils._random import check_random_state
from skdp.utils._validation import check_real

__all__ = ["load_ratings", "split_ratings"]

# Separators tried, in this order, on the first data line: MovieLens 1M/10M use "::",
# MovieLens 100k a tab, MovieLens "latest"/20M/25M a comma (with a header line).
_SEPARATORS = ("::", "\t", ",", ";")


# The file is parsed in blocks of about this many bytes (cut at line ends), so that
# the whole text, its lines and the parser's per-line objects are never all in memory:
# only the parsed columns of the whole file are.
_BLOCK_SIZE = 1 << 22
_FEW_FIELDS = ("load_ratings: a rating is not a number, or a line has fewer than three fields "
               "'user item rating'.")


def _blocks(handle):
    """The file's bytes in blocks of whole lines (the last one may lack its line end)."""
    rest = b""
    while True:
        chunk = handle.read(_BLOCK_SIZE)
        if not chunk:
            if rest:
                yield rest
            return
        rest += chunk
        # Cut after the last line end (a CRLF cut in two leaves an empty line, skipped).
        end = max(rest.rfind(b"\n"), rest.rfind(b"\r")) + 1
        if end:
            yield rest[:end]
            rest = rest[end:]


def _detect(text, sep):
    """Return ``(sep, has_header)`` from the first line of ``text``."""
    first = re.split(rb"\r\n|\r|\n", text, maxsplit=1)[0].strip()
    if sep == "auto":
        sep = next((s for s in _SEPARATORS if s.encode() in first), None)  # None: whitespace
    fields = first.split(sep.encode()) if sep else first.split()
    if len(fields) < 3:
        raise ValueError(f"load_ratings: the first line {first[:80]!r} does not have the three "
                         f"fields 'user item rating' (separator {sep!r}); pass sep=.")
    try:
        float(fields[2].strip().strip(b'"'))  # a quoted rating is still a rating
        has_header = False
    except ValueError:
        has_header = True
    return sep, has_header


def _data_lines(text, has_header):
    return [line for line in text.splitlines()[int(has_header):] if line.strip()]


def _parse_pandas(lines, sep):
    import pandas as pd

    # na_filter=False: an id "NA" (or an empty one, refused later) stays as written.
    try:
        frame = pd.read_csv(io.BytesIO(b"\n".join(lines)), sep=sep if sep else r"\s+",
                            header=None, usecols=[0, 1, 2], dtype={0: str, 1: str}, engine="c",
                            na_filter=False)
    except ValueError as error:  # a block whose first line has fewer than three fields
        if "Usecols" not in str(error):
            raise
        raise ValueError(_FEW_FIELDS) from None
    users, items, ratings = (frame[c].to_numpy() for c in (0, 1, 2))
    return users.astype(str), items.astype(str), _as_ratings(ratings)


def _as_ratings(values):
    try:
        return np.asarray(values, dtype=np.float64)
    except ValueError as error:
        raise ValueError(f"{_FEW_FIELDS[:-1]} ({error}).") from None


def _parse_plain(lines, sep):
    rows = [line.decode().split(sep) if sep else line.decode().split() for line in lines]
    if any(len(r) < 3 for r in rows):
        raise ValueError("load_ratings: a line has fewer than three fields 'user item rating'.")
    # Quotes removed as pandas' CSV reader does (a separator inside quotes is not handled).
    users = np.array([r[0].strip().strip('"') for r in rows])
    items = np.array([r[1].strip().strip('"') for r in rows])
    return users, items, _as_ratings([r[2].strip().strip('"') for r in rows])


def _parse(text, sep, has_header):
    """Columns user, item (as strings of their ids) and rating (float) of every data line.

    pandas (optional) parses large files fast; without it, plain Python does.
    ``None`` when ``text`` has no data line.
    """
    if sep and len(sep.encode()) > 1:  # "::" (MovieLens 1M/10M): one byte, as the C parser needs
        text, sep = text.replace(sep.encode(), b"\t"), "\t"
    lines = _data_lines(text, has_header)
    if not lines:
        return None
    try:
        import pandas  # noqa: F401
    except ImportError:  # pragma: no cover - pandas is optional
        return _parse_plain(lines, sep)
    return _parse_pandas(lines, sep)


def _parse_file(path, sep):
    """``_parse`` of the whole file, block by block (the separator and header from the first)."""
    parts = []
    with open(path, "rb") as handle:
        for number, text in enumerate(_blocks(handle)):
            if number == 0:
                if text.startswith(codecs.BOM_UTF8):  # written by some spreadsheet exports
                    text = text[len(codecs.BOM_UTF8):]
                sep, has_header = _detect(text, sep)
            part = _parse(text, sep, has_header and number == 0)
            if part is not None:
                parts.append(part)
    if not parts:
        raise ValueError("load_ratings: the file has no ratings.")
    columns = [list(column) for column in zip(*parts)]
    parts.clear()
    result = []
    while columns:  # each column's blocks are freed once it is joined
        result.append(np.concatenate(columns.pop(0)))
    return tuple(result)


def _as_ids(values, block=1 << 14):
    """Integer ids as integers (so that they sort numerically), other ids as strings."""
    as_int = np.empty(values.shape, dtype=np.int64)
    # In blocks: NumPy casts strings to integers through Python objects, and the
    # decimal strings of int64 are 21 characters wide (about 6 copies of the ids).
    for start in range(0, values.size, block):
        part = slice(start, start + block)
        try:
            as_int[part] = values[part].astype(np.int64)
        except (ValueError, OverflowError):  # not integers, or beyond int64
            return values
        if not np.array_equal(as_int[part].astype(str), np.char.strip(values[part])):
            return values
    return as_int


def load_ratings(path, *, sep="auto", items=None):
    """Load a ratings file as a sparse users x items matrix for :class:`~skdp.matrix_completion.DPMatrixCompleter`.

    Reads text files with one rating per line, ``user item rating`` first
    (later fields, such as timestamps, are ignored): MovieLens 100k
    (``u.data``, tab-separated), 1M and 10M (``ratings.dat``, ``::``), and
    the comma-separated ``ratings.csv`` of the later releases (with a header
    line), or any file of that shape. Nothing is downloaded: the file is
    one you already have.

    Parameters
    ----------
    path : str or path-like
        The ratings file.
    sep : str, default="auto"
        Field separator; ``"auto"`` takes the first of ``"::"``, tab,
        ``","`` and ``";"`` found on the first line, else whitespace. A first
        line whose third field is not a number is a header and is skipped.
    items : array-like or None, default=None
        The public catalogue of item ids (for MovieLens, the ids of
        ``movies.csv``): the matrix has one column per catalogue item, in
        this order, rated or not. A rating of an item outside it is an
        error. ``None`` takes the items rated in the file, which reveals which
        items at least one user rated (an item only one user rated, for
        instance) through the number and order of the columns, and emits a
        :class:`~skdp.PrivacyLeakWarning`.

    Returns
    -------
    data : Bunch
        ``ratings``: CSR matrix of shape ``(n_users, n_items)`` whose stored
        entries are the ratings (a rating of 0 is stored too); ``user_ids``:
        the id of each row (sorted; integers when every id is one);
        ``item_ids``: the id of each column (``items``, or the rated ids
        sorted). When a user rated an item more than once, the last rating
        in the file is kept.

    Notes
    -----
    Loading is not a release and spends no budget. Which users have a row is
    data, as it is in any data set; the matrix completer treats the number of
    users as public (its neighbouring relation replaces one user's whole
    row) and releases nothing about rows other than through its noisy global
    component. The column set is different: a fitted model's shape reveals
    it, so it should be a public catalogue (``items``).

    Examples
    --------
    >>> import tempfile, os
    >>> from skdp.datasets import load_ratings
    >>> path = os.path.join(tempfile.mkdtemp(), "u.data")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1\\t10\\t4\\t881250949\\n2\\t10\\t3\\t891717742\\n2\\t30\\t5\\t878887116\\n")
    >>> data = load_ratings(path, items=[10, 20, 30])
    >>> data.ratings.toarray()
    array([[4., 0., 0.],
           [3., 0., 5.]])
    >>> data.ratings.nnz, data.user_ids.tolist(), data.item_ids.tolist()
    (3, [1, 2], [10, 20, 30])
    """
    if sep != "auto" and not (isinstance(sep, str) and sep):
        raise ValueError(f"sep must be 'auto' or a non-empty string, got {sep!r}.")
    users, item_values, ratings = _parse_file(path, sep)
    if not np.all(np.isfinite(ratings)):
        raise ValueError("load_ratings: a rating is NaN or infinite.")
    if np.any(np.char.str_len(users) == 0) or np.any(np.char.str_len(item_values) == 0):
        raise ValueError("load_ratings: a line has an empty user or item id.")
    users = _as_ids(users)  # (frees the strings when the ids are integers)
    user_ids, rows = np.unique(users, return_inverse=True)
    del users
    item_values = _as_ids(item_values)
    if items is None:
        warnings.warn(
            "load_ratings(items=None): the columns are the items rated in the file, which "
            "reveals which items at least one user rated (e.g. one that a single user "
            "rated) through a fitted model's shape. Pass items=<the public catalogue of item "
            "ids> to avoid this.", PrivacyLeakWarning, stacklevel=2)
        item_ids, cols = np.unique(item_values, return_inverse=True)
    else:
        item_ids = np.asarray(items)
        if item_ids.ndim != 1 or item_ids.size == 0:
            raise ValueError("items must be a non-empty 1-D list of item ids.")
        if item_ids.dtype.kind in "iu" and item_values.dtype.kind not in "iu":
            raise ValueError("items are integers but the file's item ids are not.")
        if item_ids.dtype.kind == "U" and item_values.dtype.kind == "U":  # the longer width
            item_values = item_values.astype(np.result_type(item_ids, item_values))
        try:
            catalogue = np.asarray(item_ids, dtype=item_values.dtype)
            exact = np.array_equal(catalogue.astype(item_ids.dtype), item_ids)
        except (ValueError, OverflowError):
            exact = False
        if not exact:  # e.g. 10.5 (or "010") against the file's integer ids
            raise ValueError(f"items: the catalogue's ids {item_ids[:5].tolist()}... are not "
                             f"ids of the file's kind ({item_values[:5].tolist()}...).")
        order = np.argsort(catalogue, kind="stable")
        if np.unique(catalogue).size != catalogue.size:
            raise ValueError("items has duplicate ids.")
        position = np.searchsorted(catalogue[order], item_values)
        position = np.minimum(position, catalogue.size - 1)
        unknown = catalogue[order][position] != item_values
        if unknown.any():
            raise ValueError(f"load_ratings: item {str(item_values[unknown][0])!r} of the file is "
                             f"not in items ({int(unknown.sum())} ratings are outside it).")
        cols = order[position]
    del item_values
    # The last rating of a (user, item) pair wins: keep its last occurrence. The
    # distinct keys come sorted, row by row and by column within a row: the CSR
    # order, built directly (no COO copy; intermediates freed as soon as used).
    key = rows.astype(np.int64) * item_ids.size + cols
    del rows, cols
    key, last_reversed = np.unique(key[::-1], return_index=True)
    data = ratings[ratings.size - 1 - last_reversed]
    del ratings, last_reversed
    small = max(key.size, user_ids.size, item_ids.size) < np.iinfo(np.int32).max
    index_dtype = np.int32 if small else np.int64
    indices = (key % item_ids.size).astype(index_dtype)
    indptr = np.zeros(user_ids.size + 1, dtype=index_dtype)
    np.cumsum(np.bincount(key // item_ids.size, minlength=user_ids.size), out=indptr[1:])
    del key
    ratings_matrix = sp.csr_matrix((data, indices, indptr),
                                   shape=(user_ids.size, item_ids.size))
    ratings_matrix.sort_indices()  # already sorted: this only checks and records it
    return Bunch(ratings=ratings_matrix, user_ids=user_ids, item_ids=item_ids)


def split_ratings(ratings, test_fraction=0.1, *, random_state=None):
    """Split the stored ratings at random into a training and a test matrix.

    Each stored entry goes to the test matrix independently with
    probability ``test_fraction`` (users keep their rows in both, as in the
    seed's experiments, Sec. 6.4), so a completer fitted on ``train`` can be
    scored on ``test``.

    Parameters
    ----------
    ratings : sparse matrix of shape (n_users, n_items)
        Stored entries are ratings.
    test_fraction : float, default=0.1
        In ``[0, 1)``.
    random_state : int, numpy.random.Generator or None, default=None
        Randomness of the split (not noise: a fixed seed is fine).

    Returns
    -------
    train, test : CSR matrices of shape (n_users, n_items)
        Together, exactly the stored entries of ``ratings``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from skdp.datasets import split_ratings
    >>> R = sp.random(100, 20, density=0.3, format="csr", random_state=0)
    >>> train, test = split_ratings(R, 0.25, random_state=0)
    >>> train.nnz + test.nnz == R.nnz
    True
    """
    if not sp.issparse(ratings):
        raise TypeError("split_ratings needs a sparse matrix whose stored entries are ratings.")
    test_fraction = check_real(test_fraction, "test_fraction", low=0.0, high=1.0,
                               high_inclusive=False)
    rng = check_random_state(random_state)
    coo = ratings.tocoo()
    held_out = rng.random(coo.nnz) < test_fraction

    def part(mask):
        return sp.csr_matrix((coo.data[mask], (coo.row[mask], coo.col[mask])), shape=coo.shape)

    return part(~held_out), part(held_out)
