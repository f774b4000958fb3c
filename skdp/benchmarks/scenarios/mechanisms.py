"""Scenario ``mechanisms``: claimed vs empirically audited epsilon of each basic mechanism."""

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._registry import register_scenario
from skdp.benchmarks._report import pyplot, save_figure
from skdp.testing import audit_epsilon, mechanism_audit_cases

SCENARIO = "mechanisms"
METRIC = "audited epsilon (95% lower bound)"


def audit_figure(rows, title):
    """One line per mechanism: its audited epsilon, its under-noised copy's, and the claim.

    The audited value of the mechanism itself (filled circle) must lie left of
    its claimed epsilon (a black bar on its line, and a vertical line across the
    plot per claimed value); the under-noised copy (cross) should lie right of it.

    Parameters
    ----------
    rows : list of dict
        The scenario's rows, with ``case`` (mechanism name), ``under_noised``
        (bool) and ``catch_factor`` (str) added.
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
    names = list(dict.fromkeys(r["case"] for r in rows))
    fig, ax = plt.subplots(figsize=(8.5, 0.45 * len(names) + 2.2))
    styles = {
        False: dict(marker="o", color="tab:blue", markersize=8, linestyle="none",
                    label="the mechanism (should be <= its claim)"),
        True: dict(marker="X", color="tab:red", markersize=9, linestyle="none",
                   label="under-noised copy (should exceed the claim)"),
    }
    seen = set()
    for i, name in enumerate(names):
        for r in rows:
            if r["case"] != name:
                continue
            style = dict(styles[r["under_noised"]])
            if r["under_noised"] in seen:
                style.pop("label")
            seen.add(r["under_noised"])
            ax.plot([max(r["mean"], 0.0)], [i], zorder=3, **style)
        claim = next(r["epsilon"] for r in rows if r["case"] == name)
        ax.plot([claim, claim], [i - 0.38, i + 0.38], color="black", linewidth=3, zorder=1,
                solid_capstyle="butt", label=None if i else "its claimed epsilon")
    claims = sorted({r["epsilon"] for r in rows})
    for claim, dash in zip(claims, ("--", ":", "-.", (0, (5, 1, 1, 1)))):
        ax.axvline(claim, color="dimgray", linestyle=dash, linewidth=1, zorder=0,
                   label=f"claimed epsilon = {claim:g}")
    factors = {r["case"]: r["catch_factor"] for r in rows if r["under_noised"]}
    ax.set_yticks(range(len(names)),
                  [f"{n}  (copy: noise x{factors[n]})" if n in factors else n for n in names],
                  fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel(f"{METRIC}; a value of 0 means no leak detected")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.6 / (0.45 * len(names) + 0.5)),
              ncol=2, fontsize=8, frameon=False)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _parse(rows):
    """Add the case name and the copy's noise factor, read from the method column."""
    parsed = []
    for r in rows:
        name, _, rest = r["method"].partition(" (noise x")
        parsed.append(dict(r, case=name, under_noised=bool(rest), catch_factor=rest[:-1]))
    return parsed


def _plot(rows, path, title):
    fig = audit_figure(_parse(rows), title)
    return None if fig is None else save_figure(fig, path)


def _fraction(factor):
    """``0.25`` -> ``"1/4"``; other factors as ``%g``."""
    inverse = 1.0 / factor
    return f"1/{inverse:.0f}" if factor < 1 and inverse == round(inverse) else f"{factor:g}"


@register_scenario(SCENARIO, "claimed vs audited epsilon of each basic mechanism, "
                   "and of an under-noised copy", plot=_plot)
def run(quick, random_state):
    rows = []
    scale = 0.15 if quick else 1.0
    for case in progress(mechanism_audit_cases(), desc="audits"):
        n_runs = max(2000, int(case.n_runs * scale))
        copy = f" (noise x{_fraction(case.catch_factor)})"
        for label, factor in (("", 1.0), (copy, case.catch_factor)):
            res = audit_epsilon(case.make(factor), case.dataset_0, case.dataset_1,
                                n_runs=n_runs, delta=case.delta, vectorized=case.vectorized,
                                random_state=random_state)
            above = res.epsilon_lower_bound > case.epsilon
            if label:  # the under-noised copy: the audit should catch it
                verdict = "caught" if above else "not caught"
            else:
                verdict = "VIOLATION" if above else "within claim"
            rows.append(make_row(SCENARIO, "worst-case pair", case.name + label,
                                 case.epsilon, METRIC, [res.epsilon_lower_bound], note=verdict))
    return rows
