"""User-facing text cites papers by authors and year, never by the project's internal labels."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The project's internal names of the papers it implements: their file names and labels.
INTERNAL = re.compile(r"\bseeds? 00[0-4]\b|\b00[0-4]_[0-9a-f]{16}\b|\bthe thesis\b", re.IGNORECASE)


def _user_facing_files():
    for folder in ("skdp", "docs", "examples"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".rst", ".md", ".txt"} and "_build" not in path.parts:
                yield path
    yield ROOT / "README.md"


def test_no_internal_paper_labels_in_user_facing_text():
    hits = []
    for path in _user_facing_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if INTERNAL.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not hits, "cite authors and year instead:\n" + "\n".join(hits[:20])


def test_the_pattern_catches_the_internal_labels():
    for text in ("as in seed 004, Alg. 1", "Seed 001's Thm. 10", "004_84313b2beb0548a9.txt",
                 "the thesis' constant"):
        assert INTERNAL.search(text), text
    assert not INTERNAL.search("Thakkar (2019), Alg. 1 with random_state seed 0")
