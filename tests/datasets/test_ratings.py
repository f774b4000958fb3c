"""Loading ratings files a user already has (MovieLens formats) and splitting them."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import skdp.datasets._ratings as ratings_module
from skdp import PrivacyLeakWarning
from skdp.datasets import load_ratings, split_ratings
from skdp.datasets import _ratings
from skdp.matrix_completion import DPMatrixCompleter

# user, item, rating: user 2 rates item 30 twice (the later 1.0 counts); item 20 is never rated.
TRIPLES = [(1, 10, 4.0), (2, 10, 3.0), (2, 30, 5.0), (7, 40, 0.0), (2, 30, 1.0)]
EXPECTED = np.array([[4.0, 0.0, 0.0, 0.0],   # users 1, 2, 7; items 10, 20, 30, 40
                     [3.0, 0.0, 1.0, 0.0],
                     [0.0, 0.0, 0.0, 0.0]])
FORMATS = {
    "ml-100k u.data": lambda u, i, r: f"{u}\t{i}\t{r:g}\t881250949",
    "ml-1m ratings.dat": lambda u, i, r: f"{u}::{i}::{r:g}::978300760",
    "whitespace": lambda u, i, r: f"{u}  {i} {r:g}",
    "semicolon": lambda u, i, r: f"{u};{i};{r:g}",
}


def _write(tmp_path, lines, name="ratings.txt"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("fmt", list(FORMATS), ids=list(FORMATS))
def test_movielens_formats_give_the_same_matrix(tmp_path, fmt):
    path = _write(tmp_path, [FORMATS[fmt](*t) for t in TRIPLES])
    data = load_ratings(path, items=[10, 20, 30, 40])
    np.testing.assert_array_equal(data.ratings.toarray(), EXPECTED)
    # The rating 0 of user 7 is stored (an observed rating), the unrated pairs are not.
    assert data.ratings.nnz == 4 and data.ratings[2, 3] == 0.0 and data.ratings[2].nnz == 1
    assert data.user_ids.tolist() == [1, 2, 7] and data.item_ids.tolist() == [10, 20, 30, 40]


def test_csv_with_a_header_line(tmp_path):
    path = _write(tmp_path, ["userId,movieId,rating,timestamp"]
                  + [f"{u},{i},{r:g},1" for u, i, r in TRIPLES])
    np.testing.assert_array_equal(
        load_ratings(path, items=[10, 20, 30, 40]).ratings.toarray(), EXPECTED)


def test_plain_parser_matches_pandas(tmp_path):
    text = "\n".join(FORMATS["ml-100k u.data"](*t) for t in TRIPLES).encode()
    for sep in ("\t", None):
        source = text if sep else text.replace(b"\t", b" ")
        lines = _ratings._data_lines(source, False)
        a, b = _ratings._parse_pandas(lines, sep), _ratings._parse_plain(lines, sep)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_catalogue_order_gives_the_column_order(tmp_path):
    path = _write(tmp_path, [FORMATS["ml-100k u.data"](*t) for t in TRIPLES])
    data = load_ratings(path, items=[40, 30, 20, 10])
    np.testing.assert_array_equal(data.ratings.toarray(), EXPECTED[:, ::-1])
    assert data.item_ids.tolist() == [40, 30, 20, 10]


def test_items_read_from_the_file_warn_and_leave_out_unrated_items(tmp_path):
    path = _write(tmp_path, [FORMATS["ml-100k u.data"](*t) for t in TRIPLES])
    with pytest.warns(PrivacyLeakWarning, match="items=None"):
        data = load_ratings(path)
    assert data.item_ids.tolist() == [10, 30, 40]
    np.testing.assert_array_equal(data.ratings.toarray(), EXPECTED[:, [0, 2, 3]])


def test_string_ids(tmp_path):
    path = _write(tmp_path, ["alice,tt01,4", "bob,tt02,2", "alice,tt02,5"])
    data = load_ratings(path, items=["tt02", "tt01", "tt03"])
    assert data.user_ids.tolist() == ["alice", "bob"]
    np.testing.assert_array_equal(data.ratings.toarray(), [[5.0, 4.0, 0.0], [2.0, 0.0, 0.0]])


@pytest.mark.parametrize("lines, items, match", [
    (["1\t10\t4", "2\t99\t3"], [10, 20], "item '99' .* not in items"),
    (["1\t10\tnan"], [10], "NaN or infinite"),
    (["1\t10"], [10], "three fields"),
    (["user\titem\trating"], [10], "no ratings"),
    (["1\t10\t4"], [10, 10], "duplicate"),
    (["1\tx\t4"], [10], "integers"),
])
def test_bad_files_and_catalogues_are_clear_errors(tmp_path, lines, items, match):
    with pytest.raises(ValueError, match=match):
        load_ratings(_write(tmp_path, lines), items=items)


def test_split_partitions_the_stored_ratings():
    R = sp.random(400, 50, density=0.2, format="csr", random_state=0)
    train, test = split_ratings(R, 0.25, random_state=1)
    np.testing.assert_array_equal((train + test).toarray(), R.toarray())
    assert train.multiply(test).nnz == 0
    assert abs(test.nnz / R.nnz - 0.25) < 0.03
    again, _ = split_ratings(R, 0.25, random_state=1)
    np.testing.assert_array_equal(again.toarray(), train.toarray())
    with pytest.raises(TypeError, match="sparse"):
        split_ratings(R.toarray())
    with pytest.raises(ValueError, match="test_fraction"):
        split_ratings(R, 1.0)


def test_loaded_ratings_fit_the_completer(tmp_path):
    rng = np.random.default_rng(0)
    users, items = rng.integers(0, 300, 3000), rng.integers(0, 20, 3000)
    path = _write(tmp_path, [f"{u}::{i}::{(u % 5) / 4 - (i % 3) / 4:.2f}::0"
                             for u, i in zip(users, items)], "ratings.dat")
    data = load_ratings(path, items=np.arange(20))
    train, test = split_ratings(data.ratings, 0.1, random_state=0)
    completer = DPMatrixCompleter(epsilon=5.0, method="svd", rank=2, random_state=0).fit(train)
    completed = completer.transform(train)
    assert completed.shape == (data.user_ids.size, 20) and np.all(np.isfinite(completed))


@pytest.fixture(params=["pandas", "plain"])
def parser(request, monkeypatch):
    if request.param == "plain":  # as without pandas installed (an optional dependency)
        monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    return request.param


@pytest.mark.parametrize("content", [
    b'"1","10","4"\n"2","10","3"\n"2","30","5"\n',                  # quoted CSV fields
    b'\xef\xbb\xbf1,10,4\n2,10,3\n2,30,5\n',                         # UTF-8 byte order mark
    b'\xef\xbb\xbfuserId,movieId,rating\n1,10,4\n2,10,3\n2,30,5\n',  # BOM and header
    b'1,10,4\r2,10,3\r2,30,5\r',                                     # old Mac line ends
    b'1,10,4\r\n2,10,3\r\n2,30,5\r\n',                               # Windows line ends
], ids=["quoted", "bom", "bom-header", "cr", "crlf"])
def test_first_rating_is_kept_and_ids_are_parsed_by_both_parsers(tmp_path, parser, content):
    # A quoted (or CR-only) first line was taken for a header and its rating dropped
    # silently; the plain parser kept the BOM and quotes in the ids (strings, not 1 and 2).
    path = tmp_path / "ratings.csv"
    path.write_bytes(content)
    data = load_ratings(path, items=[10, 30])
    assert data.user_ids.tolist() == [1, 2]
    np.testing.assert_array_equal(data.ratings.toarray(), [[4.0, 0.0], [3.0, 5.0]])


@pytest.mark.parametrize("items", [[10.5, 30], ["tt1000", "tt3"], ["tt1", "tt3", "tt100"]])
def test_catalogue_ids_are_not_cut_to_the_file_ids_type(tmp_path, items):
    # The catalogue was cast to the file's id type: 10.5 became 10, and "tt1000" became "tt1"
    # (strings cut to the file's longest id), so ratings of one item went to another.
    path = _write(tmp_path, ["1,tt1,4", "2,tt3,5"] if isinstance(items[0], str)
                  else ["1,10,4", "2,30,5"])
    try:
        data = load_ratings(path, items=items)
    except ValueError:
        return  # refusing is fine; misplacing is not
    for j, item in enumerate(data.item_ids.tolist()):
        column = data.ratings[:, j].toarray().ravel()
        assert str(item) in ("10", "30", "tt1", "tt3") or not column.any(), (item, column)


def test_ids_too_large_for_int64_stay_strings(tmp_path, parser):
    data = load_ratings(_write(tmp_path, ["99999999999999999999,10,4", "2,10,3"]), items=[10])
    assert data.user_ids.tolist() == ["2", "99999999999999999999"]


def test_empty_or_na_ids_are_refused_or_kept_as_written(tmp_path, parser):
    # pandas read an empty id as NaN, and the id "NA" too: both became an item "nan".
    with pytest.raises(ValueError, match="empty"):
        load_ratings(_write(tmp_path, ["1,,4", "2,30,5"]), items=["30"])
    data = load_ratings(_write(tmp_path, ["NA,30,4", "2,NA,5"]), items=["30", "NA"])
    assert data.user_ids.tolist() == ["2", "NA"]
    np.testing.assert_array_equal(data.ratings.toarray(), [[0.0, 5.0], [4.0, 0.0]])


def test_any_multi_character_separator(tmp_path, parser):
    # Only "::" was rewritten to one byte; pandas' C parser refused other separators longer
    # than one character (the plain parser took them).
    path = _write(tmp_path, ["1||10||4", "2||30||5"])
    data = load_ratings(path, sep="||", items=[10, 30])
    np.testing.assert_array_equal(data.ratings.toarray(), [[4.0, 0.0], [0.0, 5.0]])


def test_load_ratings_short_line_at_a_block_start_is_the_clear_error(tmp_path, monkeypatch):
    # A line with two fields is refused with load_ratings' message whichever block it
    # starts (pandas raised its own "Usecols do not match columns" for a block's first line).
    path = tmp_path / "ratings.csv"
    path.write_bytes(b"1,10,4\n2,20\n3,30,5\n")
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", 7)  # "2,20" starts the second block
    with pytest.raises(ValueError, match="fewer than three fields"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ratings_module.load_ratings(path)


# load_ratings streams the file instead of holding several copies of it
def _ratings_file(path, n_lines, seed=0):
    rng = np.random.default_rng(seed)
    u, i, r = rng.integers(1, 6041, n_lines), rng.integers(1, 3953, n_lines), rng.integers(
        1, 6, n_lines)
    path.write_text("".join(f"{a}::{b}::{c}::978300760\n" for a, b, c in zip(u, i, r)))
    return path


def test_load_ratings_peak_memory_is_a_small_multiple_of_the_file(tmp_path, monkeypatch):
    import tracemalloc
    import warnings

    import skdp.datasets._ratings as ratings_module
    from skdp.datasets import load_ratings

    path = _ratings_file(tmp_path / "ratings.dat", 100_000)
    # Blocks of a tenth of this (small, fast) file, as 4 MiB blocks are of a large one.
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", 1 << 18, raising=False)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = load_ratings(path, items=np.arange(1, 3953))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data.ratings.shape[1] == 3952 and data.ratings.nnz > 90_000
    # Whole-file parsing peaked at 8.4 times the file (the bytes, a copy with '::'
    # rewritten, a list of lines, their join, pandas' object columns).
    assert peak < 4.0 * size, peak / size


@pytest.mark.parametrize("block_size", [1, 7, 64])
def test_load_ratings_blocks_give_the_same_matrix(tmp_path, monkeypatch, block_size):
    import skdp.datasets._ratings as ratings_module

    path = tmp_path / "ratings.csv"
    path.write_bytes(b"\xef\xbb\xbfuserId,movieId,rating,timestamp\r\n1,10,4,1\r\n\r\n"
                     b"2,10,3,1\n2,30,5,1\r7,40,0,1\r\n2,30,1,1\n\n  \n9,20,2.5,1")
    expected = ratings_module.load_ratings(path, items=[10, 20, 30, 40])
    monkeypatch.setattr(ratings_module, "_BLOCK_SIZE", block_size)
    got = ratings_module.load_ratings(path, items=[10, 20, 30, 40])
    np.testing.assert_array_equal(got.ratings.toarray(), expected.ratings.toarray())
    np.testing.assert_array_equal(got.user_ids, expected.user_ids)
    assert got.ratings.nnz == 5 and got.user_ids.tolist() == [1, 2, 7, 9]
