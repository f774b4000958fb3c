"""Turn result rows into a printed table, CSV, Markdown and an accuracy-vs-epsilon plot."""

import csv
import math
from pathlib import Path

from skdp.benchmarks._harness import ROW_FIELDS

__all__ = ["format_table", "write_report"]


def _fmt_eps(eps):
    return "non-private" if math.isinf(eps) else f"{eps:g}"


def _fmt_num(x, digits=4):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _table_rows(rows):
    header = ["dataset", "method", "epsilon", "metric", "mean +- std", "draws",
              "fit s", "time ratio", "note"]
    body = [[r["dataset"], r["method"], _fmt_eps(r["epsilon"]), r["metric"],
             f"{r['mean']:.4f} +- {r['std']:.4f}", str(r["n_draws"]),
             _fmt_num(r["fit_seconds"], 3), _fmt_num(r["time_ratio"], 3), r["note"]]
            for r in rows]
    return header, body


WIDTH = 100  # the terminal table's widest line


def _clip(text, width):
    return text if len(text) <= width else text[:max(width - 1, 0)] + "~"


def format_table(rows, markdown=False):
    """Format rows as an aligned text table (or a Markdown table).

    The text table has one block per dataset and metric, and no line wider than
    ``WIDTH`` (100) characters: long method names and notes are cut (the CSV and
    Markdown files keep them whole).

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
                            f"{r['mean']:.4f} +- {r['std']:.4f}", str(r["n_draws"]),
                            _fmt_num(r["fit_seconds"], 3), _fmt_num(r["time_ratio"], 3),
                            r["note"]])
    body = [b for key in order for b in blocks[key]]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(header)]
    fixed = sum(widths[1:6]) + 2 * 6
    widths[0] = min(widths[0], 36)
    widths[6] = max(4, min(widths[6], WIDTH - fixed - widths[0]))

    def line(cells):
        return "  ".join(_clip(c, w).ljust(w) for c, w in zip(cells, widths)).rstrip()

    def row_lines(cells):
        # A note too long for its column goes on the next line, under the method.
        if len(cells[6]) <= widths[6]:
            return [line(cells)]
        return [line(cells[:6] + [""]), _clip("    " + cells[6], WIDTH)]

    lines = []
    for dataset, metric in order:
        lines += ["", _clip(f"{dataset} ({metric})", WIDTH), line(header),
                  line(["-" * w for w in widths])]
        for cells in blocks[(dataset, metric)]:
            lines += row_lines(cells)
    return "\n".join(lines[1:])


def _plot(rows, path, title):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = sorted({(r["dataset"], r["metric"]) for r in rows})
    n = len(panels)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.5 * cols, 4 * nrows), squeeze=False)
    for ax, (dataset, metric) in zip(axes.ravel(), panels):
        sub = [r for r in rows if r["dataset"] == dataset and r["metric"] == metric]
        methods = sorted({r["method"] for r in sub})
        for method in methods:
            pts = sorted((r["epsilon"], r["mean"], r["std"]) for r in sub if r["method"] == method)
            finite = [p for p in pts if not math.isinf(p[0])]
            if finite:
                xs, ys, es = zip(*finite)
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=method)
            else:
                ax.axhline(pts[0][1], linestyle="--", color="black", alpha=0.6,
                           label=f"{method} (non-private)")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(metric)
        ax.set_title(dataset, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(scenario, rows, output_dir, plot=True):
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
        png = _plot(rows, out / f"{scenario}.png", f"skdp: {scenario}")
        if png is not None:
            paths.append(png)
    return paths
