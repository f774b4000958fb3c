import csv

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp.benchmarks import _harness, format_table, make_row, register_scenario
from skdp.benchmarks.__main__ import build_parser, main
from skdp.benchmarks._harness import Dataset, evaluate_private
from skdp.benchmarks.scenarios import amp
from skdp.linear_model import DPLogisticRegressionAMP


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


@pytest.mark.filterwarnings("ignore::skdp.exceptions.PrivacyLeakWarning")
def test_amp_oracle_row_reports_the_best_fraction_of_its_grid(monkeypatch):
    # The information row "eps3_fraction tuned on the test set" must be the grid's best mean,
    # scored with the verdict's own seeds, and name the fraction it found.
    X, y = make_classification(600, 5, random_state=0)
    data = Dataset("toy", X[:400], y[:400], X[400:], y[400:])
    grid = (0.55, 0.75, 0.95)
    monkeypatch.setattr(amp, "ORACLE_FRACTIONS", grid)
    row = amp._oracle_fraction_row(data, 7, None)
    means = [evaluate_private("amp", data, "m", DPLogisticRegressionAMP(
        loss="huber", eps3_fraction=f), [0.1], 10, seed=7)[0]["mean"] for f in grid]
    assert row["mean"] == max(means)
    assert f": {grid[int(np.argmax(means))]};" in row["note"]
    assert row["epsilon"] == 0.1 and row["n_draws"] == 10


def test_progress_bar_disabled_when_not_a_terminal():
    pytest.importorskip("tqdm")
    bar = _harness.progress(range(3), desc="x")
    # Under pytest stderr is captured (not a terminal): tqdm(disable=None) turns itself off.
    assert getattr(bar, "disable", True) is True
    assert list(bar) == [0, 1, 2]


def test_quick_help_does_not_promise_two_minutes():
    help_text = " ".join(build_parser().format_help().split())
    assert "two minutes" not in help_text


def test_the_terminal_table_fits_in_100_columns():
    long_name = "ObjectivePerturbationClassifier with a very long descriptive name"
    rows = [make_row("s", "a data set with a long name", long_name, float("inf"), "accuracy",
                     [0.5], note="non-private, scikit-learn defaults, and a long remark"),
            make_row("s", "d", "m", 1.0, "accuracy", [0.5, 0.6], fit_seconds=12.5,
                     baseline_seconds=0.5, note="x")]
    table = format_table(rows)
    assert max(len(line) for line in table.splitlines()) <= 100
    assert "d (accuracy)" in table and "25" in table          # one block per data set; the ratio
