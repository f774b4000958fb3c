import math

import pytest

from skdp.benchmarks import format_table, make_row
from skdp.benchmarks._report import WIDTH, report_figure, series_style

pytest.importorskip("matplotlib")


def _style_key(style):
    return style["color"], style.get("marker"), str(style["linestyle"])


def test_series_styles_differ_in_colour_marker_or_line():
    private = [_style_key(series_style(i)) for i in range(40)]
    assert len(set(private)) == 40
    # Colour and marker alone already tell the first 40 apart (not only the line style).
    assert len({key[:2] for key in private}) == 40
    baselines = [_style_key(series_style(i, baseline=True)) for i in range(6)]
    assert len(set(baselines)) == 6
    # Baselines never take a private series' colour.
    assert not {key[0] for key in baselines} & {key[0] for key in private}


def _rows(n_private=12, n_baselines=3, epsilons=(0.1, 1.0, 10.0), dataset="d"):
    rows = [make_row("s", dataset, f"baseline {j}", math.inf, "accuracy", [0.9 + j / 100],
                     note="non-private") for j in range(n_baselines)]
    for i in range(n_private):
        rows += [make_row("s", dataset, f"method {i}", eps, "accuracy", [0.5 + i / 50, 0.6])
                 for eps in epsilons]
    return rows


def _drawn_lines(ax):
    """(label, colour, line style, marker) of each labelled series of a panel."""
    # Flat lines carry their label; an error-bar series, its container.
    pairs = [(line.get_label(), line) for line in ax.get_lines()]
    pairs += [(c.get_label(), c.lines[0]) for c in ax.containers]
    return [(label, str(line.get_color()), str(line.get_linestyle()), str(line.get_marker()))
            for label, line in pairs if not label.startswith("_")]


def test_every_series_and_baseline_is_drawn_in_its_own_style():
    fig = report_figure(_rows(n_private=10), "t")
    (ax,) = fig.axes
    lines = _drawn_lines(ax)
    assert len(lines) == 13  # 10 curves and 3 flat baselines
    assert len({line[1:] for line in lines}) == 13
    assert {label for label, *_ in lines} >= {"baseline 0 (non-private)", "method 9"}
    # One legend below the panels names every series.
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 13


def test_a_method_keeps_its_style_across_panels_and_no_panel_is_empty():
    rows = _rows(4, 1, dataset="a") + _rows(4, 1, dataset="b") + _rows(2, 1, dataset="c")
    rows += _rows(2, 0, dataset="e")
    fig = report_figure(rows, "t")
    assert len(fig.axes) == 4  # a 2 x 3 grid with its two unused axes removed
    styles = [dict((label, rest) for label, *rest in _drawn_lines(ax)) for ax in fig.axes]
    assert styles[0]["method 3"] == styles[1]["method 3"]
    assert styles[0]["method 1"] == styles[2]["method 1"]


def test_one_epsilon_gives_a_row_per_method_not_dots_on_one_vertical():
    fig = report_figure(_rows(5, 2, epsilons=(1.0,)), "t")
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:2] == ["baseline 0 (non-private)", "baseline 1 (non-private)"]
    assert labels[2:] == [f"method {i}" for i in range(5)]
    assert "epsilon = 1" in ax.get_title()
    assert ax.get_xscale() == "linear"


def test_audit_figure_draws_the_claimed_epsilon():
    from skdp.benchmarks.scenarios import mechanisms

    rows = [make_row("mechanisms", "worst-case pair", name, eps, mechanisms.METRIC, [value])
            for name, eps, value in (("laplace", 1.0, 0.9), ("laplace (noise x1/4)", 1.0, 3.7),
                                     ("classic", 0.5, 0.1), ("classic (noise x1/4)", 0.5, 0.9))]
    fig = mechanisms.audit_figure(mechanisms._parse(rows), "t")
    (ax,) = fig.axes
    vertical = {line.get_xdata()[0] for line in ax.get_lines()
                if line.get_label().startswith("claimed epsilon")}
    assert vertical == {0.5, 1.0}
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "laplace  (copy: noise x1/4)", "classic  (copy: noise x1/4)"]


def test_the_table_wraps_long_notes_whole_within_100_columns():
    note = ("vs published 87.8 (Thakkar (2019), Fig. 4.10): +1.1; best of eps3_fraction in "
            "(0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95): 0.8; not private, information only")
    rows = [make_row("s", "Synthetic-L", "RFF + ObjectivePerturbationClassifier (huber)", 0.1,
                     "accuracy", [0.889], fit_seconds=1.5, baseline_seconds=0.5, note=note),
            make_row("s", "Synthetic-L", "LogisticRegression", math.inf, "accuracy", [0.955],
                     note="non-private")]
    table = format_table(rows)
    assert max(len(line) for line in table.splitlines()) <= WIDTH
    assert "~" not in table  # nothing cut
    assert " ".join(table.split()).count(note) == 1
    assert "RFF + ObjectivePerturbationClassifier (huber)" in table


def test_a_crowded_panel_is_split_and_each_twin_stays_with_its_method():
    from skdp.benchmarks._report import MAX_CURVES

    n = MAX_CURVES + 2
    rows = [make_row("s", "d", "majority class", math.inf, "accuracy", [0.5])]
    for i in range(n):
        rows += [make_row("s", "d", f"M{i:02d}", eps, "accuracy", [0.6]) for eps in (1.0, 1e6)]
        rows.append(make_row("s", "d", f"M{i:02d} twin", math.inf, "accuracy", [0.7]))
    fig = report_figure(rows, "the title")
    assert fig.get_suptitle() == "the title"
    assert [ax.get_title() for ax in fig.axes] == ["d (1 of 2)", "d (2 of 2)"]
    for ax in fig.axes:
        labels = {label for label, *_ in _drawn_lines(ax)}
        private = {label for label in labels if not label.endswith("(non-private)")}
        assert len(private) == n // 2
        assert labels == private | {f"{m} twin (non-private)" for m in private} | {
            "majority class (non-private)"}
