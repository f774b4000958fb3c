import csv

import pytest

from skdp.benchmarks import format_table, make_row, register_scenario
from skdp.benchmarks.__main__ import main


@register_scenario("_test_scenario", "a tiny scenario used by the test-suite", in_quick=False)
def _tiny(quick, random_state):
    return [
        make_row("_test_scenario", "toy", "private", 1.0, "accuracy", [0.8, 0.9],
                 fit_seconds=0.2, baseline_seconds=0.1),
        make_row("_test_scenario", "toy", "private", 10.0, "accuracy", [0.95],
                 fit_seconds=0.2, baseline_seconds=0.1),
        make_row("_test_scenario", "toy", "sklearn", float("inf"), "accuracy", [0.97]),
    ]


def test_make_row_statistics():
    row = make_row("s", "d", "m", 1.0, "acc", [0.8, 0.9], fit_seconds=0.3, baseline_seconds=0.1)
    assert row["mean"] == pytest.approx(0.85)
    assert row["std"] == pytest.approx(0.05)
    assert row["time_ratio"] == pytest.approx(3.0)
    assert "non-private" in format_table([make_row("s", "d", "m", float("inf"), "acc", [1.0])])


def test_cli_writes_csv_markdown_and_png(tmp_path, capsys):
    assert main(["--scenario", "_test_scenario", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0.8500 +- 0.0500" in out
    with open(tmp_path / "_test_scenario.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 and rows[0]["method"] == "private"
    assert (tmp_path / "_test_scenario.md").read_text().startswith("# skdp benchmark")
    png = (tmp_path / "_test_scenario.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_lists_and_rejects_unknown(capsys):
    assert main(["--list"]) == 0
    assert "mechanisms" in capsys.readouterr().out
    assert main(["--scenario", "nope"]) == 2
