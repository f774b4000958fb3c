"""Turn result rows into a printed table, CSV, Markdown and an accuracy-vs-epsilon plot."""

import csv
import math
import textwrap
from pathlib import Path

from skdp.benchmarks._harness import ROW_FIELDS

__all__ = ["format_table", "write_report"]


def _fmt_eps(eps):
    if math.isnan(eps):
        return "-"  # the row does not depend on a budget (e.g. a training time)
    return "non-private" if math.isinf(eps) else f"{eps:g}"


def _fmt_value(x):
    if math.isnan(x):
        return "-"
    if abs(x) < 10:
        return f"{x:.4f}"
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:.0f}" if x == round(x) else f"{x:.1f}"  # counts print as integers


def _fmt_mean(row):
    """``mean +- std``; a single draw has no spread and shows its value alone."""
    if row["n_draws"] <= 1 or math.isnan(row["mean"]):
        return _fmt_value(row["mean"])
    return f"{_fmt_value(row['mean'])} +- {_fmt_value(row['std'])}"


def _fmt_num(x, digits=4):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _table_rows(rows):
    header = ["dataset", "method", "epsilon", "metric", "mean +- std", "draws",
              "fit s", "time ratio", "note"]
    body = [[r["dataset"], r["method"], _fmt_eps(r["epsilon"]), r["metric"],
             _fmt_mean(r), str(r["n_draws"]),
             _fmt_num(r["fit_seconds"], 3), _fmt_num(r["time_ratio"], 3), r["note"]]
            for r in rows]
    return header, body


WIDTH = 100  # the terminal table's widest line


def _clip(text, width):
    return text if len(text) <= width else text[:max(width - 1, 0)] + "~"


def format_table(rows, markdown=False):
    """Format rows as an aligned text table (or a Markdown table).

    The text table has one block per dataset and metric, and no line wider than
    ``WIDTH`` (100) characters: a long note is wrapped onto the lines under its
    row, a long method name gets a line of its own above it.

    Parameters
    ----------
    rows : list of dict
        Result rows.
    markdown : bool, default=False
        Emit GitHub-flavoured Markdown instead of aligned text.

    Returns
    -------
    table : str
    """
    if markdown:
        header, body = _table_rows(rows)
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    header = ["method", "epsilon", "mean +- std", "draws", "fit s", "ratio", "note"]
    blocks, order = {}, []
    for r in rows:
        key = (r["dataset"], r["metric"])
        if key not in blocks:
            blocks[key] = []
            order.append(key)
        blocks[key].append([r["method"], _fmt_eps(r["epsilon"]),
                            _fmt_mean(r), str(r["n_draws"]),
                            _fmt_num(r["fit_seconds"], 3), _fmt_num(r["time_ratio"], 3),
                            # the epsilon column already says "non-private"
                            "" if r["note"] == "non-private" and math.isinf(r["epsilon"])
                            else r["note"]])
    body = [b for key in order for b in blocks[key]]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(header)]
    fixed = sum(widths[1:6]) + 2 * 6
    widths[0] = min(widths[0], max(20, WIDTH - fixed - 6))
    widths[6] = max(4, min(widths[6], WIDTH - fixed - widths[0]))

    def line(cells):
        return "  ".join(_clip(c, w).ljust(w) for c, w in zip(cells, widths)).rstrip()

    def row_lines(cells):
        # A note too long for its column goes on the next lines, under the method,
        # wrapped (never cut) at WIDTH.
        # A method name too long for its column gets a line of its own above the row.
        head = []
        if len(cells[0]) > widths[0]:
            head, cells = textwrap.wrap(cells[0], WIDTH), [""] + cells[1:]
        if len(cells[6]) <= widths[6]:
            return head + [line(cells)]
        return head + [line(cells[:6] + [""])] + textwrap.wrap(
            cells[6], WIDTH, initial_indent="    ", subsequent_indent="    ",
            break_on_hyphens=False)

    lines = []
    for dataset, metric in order:
        lines += ["", _clip(f"{dataset} ({metric})", WIDTH), line(header),
                  line(["-" * w for w in widths])]
        for cells in blocks[(dataset, metric)]:
            lines += row_lines(cells)
    return "\n".join(lines[1:])


# Series styles. Private series: colour, marker and line style all vary, and no two of
# the first 90 share both colour and marker. Non-private baselines are flat lines, each
# with its own colour and dash pattern, drawn apart from the private colours.
_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
           "tab:pink", "tab:olive", "tab:cyan")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", ":", "-.")
_BASELINE_COLORS = ("black", "dimgray", "darkgoldenrod", "darkslateblue", "darkred", "teal")
_BASELINE_DASHES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 3)),
                    (0, (3, 1, 1, 1)))
MAX_CURVES = 10  # private curves per panel; a panel with more is split


def series_style(index, baseline=False):
    """Matplotlib keyword arguments of the ``index``-th series of a figure.

    Parameters
    ----------
    index : int
        Position of the series among the figure's private series (or among its
        baselines when ``baseline`` is true).
    baseline : bool, default=False
        A non-private reference, drawn as a flat line.

    Returns
    -------
    style : dict
        ``color``, ``linestyle`` and (private series) ``marker``.
    """
    if baseline:  # 6 colours x 7 dash patterns: the first 42 differ
        return {"color": _BASELINE_COLORS[index % len(_BASELINE_COLORS)],
                "linestyle": _BASELINE_DASHES[index % len(_BASELINE_DASHES)],
                "linewidth": 1.6}
    return {"color": _COLORS[index % len(_COLORS)],
            "marker": _MARKERS[index % len(_MARKERS)],
            "linestyle": _LINESTYLES[(index // len(_COLORS)) % len(_LINESTYLES)]}


def _is_baseline(row):
    return math.isinf(row["epsilon"])


def _finite_eps(row):
    return not (math.isinf(row["epsilon"]) or math.isnan(row["epsilon"]))


def _wrap(text, width):
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def _styles(rows, curve_rows):
    """One style per (method, baseline?) across the whole figure, in order of appearance.

    Series drawn as curves come first, so that they get the plainest styles. A
    private series that only appears in one-epsilon panels (where its name is on
    the axis) is drawn in dark grey, so that no curve's colour is reused for it.
    """
    styles, counts = {}, [0, 0]
    for r in curve_rows:
        key = (r["method"], _is_baseline(r))
        if key not in styles:
            styles[key] = series_style(counts[key[1]], baseline=key[1])
            counts[key[1]] += 1
    n_points = 0
    for r in rows:
        key = (r["method"], _is_baseline(r))
        if key in styles:
            continue
        if key[1]:
            styles[key] = series_style(counts[1], baseline=True)
            counts[1] += 1
        else:
            styles[key] = dict(series_style(n_points), color="0.25")
            n_points += 1
    return styles


def _curve_panel(ax, sub, styles, handles):
    """Metric against epsilon (log scale); baselines as flat lines."""
    for method in dict.fromkeys(r["method"] for r in sub):
        pts = sorted((r["epsilon"], r["mean"], r["std"]) for r in sub
                     if r["method"] == method and _finite_eps(r))
        if pts:
            xs, ys, es = zip(*pts)
            style = styles[(method, False)]
            h = ax.errorbar(xs, ys, yerr=es, capsize=3, markersize=5, label=method, **style)
            handles.setdefault(method, h)
        for r in sub:
            if r["method"] == method and _is_baseline(r):
                label = _baseline_label(method)
                h = ax.axhline(r["mean"], label=label, **styles[(method, True)])
                handles.setdefault(label, h)
    ax.set_xscale("log")
    ticks = sorted({r["epsilon"] for r in sub if _finite_eps(r)})
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("epsilon")


def _baseline_label(method):
    return method if "non-private" in method else f"{method} (non-private)"


def _point_panel(ax, sub, styles):
    """One epsilon (or none): one row per series, its value with its spread."""
    labels = []
    for i, r in enumerate(sub):
        style = dict(styles[(r["method"], _is_baseline(r))])
        style.pop("linestyle")
        style.pop("linewidth", None)
        style.setdefault("marker", "D")
        ax.errorbar([r["mean"]], [i], xerr=[r["std"]], capsize=3, markersize=7,
                    linestyle="none", **style)
        # The panel's title gives its one epsilon.
        labels.append(_wrap(_baseline_label(r["method"]) if _is_baseline(r) else r["method"],
                            32))
    ax.set_yticks(range(len(sub)), labels, fontsize=7)
    ax.set_ylim(len(sub) - 0.5, -0.5)
    ax.grid(True, axis="x", alpha=0.3)


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # plots are an optional extra
        return None
    return plt


def save_figure(fig, path):
    """Save ``fig`` as a PNG (its legends included) and close it; return ``path``."""
    fig.savefig(path, dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path


def _split_crowded(sub):
    """Split a panel's rows into groups of at most ``MAX_CURVES`` private methods.

    A baseline whose name starts with a private method's name (``"X twin"``)
    goes with that method; any other baseline is drawn in every group.
    """
    methods = list(dict.fromkeys(r["method"] for r in sub if not _is_baseline(r)))
    if len(methods) <= MAX_CURVES:
        return [sub]
    n_groups = math.ceil(len(methods) / MAX_CURVES)
    size = math.ceil(len(methods) / n_groups)
    groups = []
    for k in range(n_groups):
        group = set(methods[k * size:(k + 1) * size])

        def belongs(r):
            if not _is_baseline(r):
                return r["method"] in group
            owners = [m for m in methods if r["method"].startswith(m)]
            return not owners or any(m in group for m in owners)

        groups.append([r for r in sub if belongs(r)])
    return groups


def report_figure(rows, title):
    """The default figure: one panel per data set and metric.

    A panel with two epsilons or more plots the metric against epsilon (log
    scale), one curve per method and a flat line per non-private baseline; a
    panel with one epsilon (or none) shows one row per method, its mean and
    spread. Every method keeps one style (colour, marker and line style) across
    the figure, and one legend below the panels names the curves. A panel with
    more than ``MAX_CURVES`` methods is split in several.

    Parameters
    ----------
    rows : list of dict
        Result rows.
    title : str
        Figure title.

    Returns
    -------
    fig : matplotlib Figure or None
        ``None`` when matplotlib is missing.
    """
    plt = pyplot()
    if plt is None:
        return None
    panels = []  # (title, metric, rows, curve?)
    for dataset, metric in dict.fromkeys((r["dataset"], r["metric"]) for r in rows):
        sub = [r for r in rows if (r["dataset"], r["metric"]) == (dataset, metric)]
        curve = len({r["epsilon"] for r in sub if _finite_eps(r)}) >= 2
        parts = _split_crowded(sub) if curve else [sub]
        for k, part in enumerate(parts):
            name = dataset + (f" ({k + 1} of {len(parts)})" if len(parts) > 1 else "")
            panels.append((name, metric, part, curve))
    n = len(panels)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 4.4 * nrows), squeeze=False,
                             layout="constrained")
    styles = _styles(rows, [r for *_, part, curve in panels if curve for r in part])
    handles = {}
    for ax, (dataset, metric, sub, curve) in zip(axes.ravel(), panels):
        epsilons = {r["epsilon"] for r in sub if _finite_eps(r)}
        if curve:
            _curve_panel(ax, sub, styles, handles)
            ax.set_ylabel(_wrap(metric, 30))
            ax.grid(True, alpha=0.3)
            panel_title = dataset
        else:
            _point_panel(ax, sub, styles)
            ax.set_xlabel(_wrap(metric, 40))
            panel_title = dataset + (f", epsilon = {epsilons.pop():g}" if epsilons else "")
        ax.set_title(_wrap(panel_title, 64), fontsize=9)
    for ax in axes.ravel()[n:]:
        fig.delaxes(ax)  # no empty panels
    fig.suptitle(title)
    if handles:
        labels = list(handles)
        # About 4.5 points per character at font size 8, plus the line sample.
        entry = 4.5 * max(map(len, labels)) + 45
        ncol = max(1, min(len(labels), int(6.2 * cols * 72 // entry)))
        fig.legend(list(handles.values()), labels, loc="upper center", ncol=ncol, fontsize=8,
                   bbox_to_anchor=(0.5, 0.0), frameon=False)
    return fig


def _plot(rows, path, title):
    fig = report_figure(rows, title)
    return None if fig is None else save_figure(fig, path)


def write_report(scenario, rows, output_dir, plot=True, plotter=None):
    """Write ``<scenario>.csv``, ``<scenario>.md`` and ``<scenario>.png`` into ``output_dir``.

    Parameters
    ----------
    scenario : str
        Scenario name (file stem).
    rows : list of dict
        Result rows.
    output_dir : str or Path
        Folder, created if needed.
    plot : bool, default=True
        Whether to draw the PNG (needs matplotlib).
    plotter : callable or None, default=None
        ``plotter(rows, path, title) -> path or None``, a scenario's own figure;
        ``None`` draws the metric against epsilon, one panel per data set and metric.

    Returns
    -------
    paths : list of Path
        The files written.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    csv_path = out / f"{scenario}.csv"
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=ROW_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    paths.append(csv_path)
    md_path = out / f"{scenario}.md"
    md_path.write_text(f"# skdp benchmark: {scenario}\n\n{format_table(rows, markdown=True)}\n")
    paths.append(md_path)
    if plot and rows:
        png = (plotter or _plot)(rows, out / f"{scenario}.png", f"skdp: {scenario}")
        if png is not None:
            paths.append(png)
    return paths
