"""Every example script runs offline, builds its figure and writes no file.

The examples are sphinx-gallery scripts: the documentation build runs them and
captures their figures, so they call ``plt.show()`` instead of saving anything.
"""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


def test_examples_are_found():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_and_writes_nothing(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    plt.close("all")
    shown = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shown.append(plt.get_fignums()))
    runpy.run_path(str(path), run_name="__main__")
    try:
        assert shown and shown[-1], f"{path.name} showed no figure"
        assert not list(tmp_path.iterdir()), f"{path.name} wrote {list(tmp_path.iterdir())}"
        # A gallery script starts with a docstring whose first line is its title.
        lines = path.read_text().splitlines()
        assert lines[0] == '"""' and set(lines[2]) == {"="} and len(lines[2]) >= len(lines[1])
    finally:
        plt.close("all")
