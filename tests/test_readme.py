"""The README's Python examples run as written (they are the first code a user copies)."""

import pathlib
import re
import warnings

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a README example must not warn either
        exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {})
    assert capsys.readouterr().out.strip()  # each example prints its result
