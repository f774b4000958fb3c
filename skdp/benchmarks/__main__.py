"""Command line: ``python -m skdp.benchmarks [--quick] [--scenario NAME ...] [--output DIR]``."""

import argparse
import sys
import textwrap
import time
import warnings
from pathlib import Path

from skdp.benchmarks._registry import get_scenarios
from skdp.benchmarks._report import WIDTH, format_table, write_report


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m skdp.benchmarks",
        description="skdp privacy-utility report: private estimators against scikit-learn.",
    )
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few draws (a few minutes on an idle 2-core "
                             "machine, up to 10 on a busy one)")
    parser.add_argument("--scenario", nargs="+", metavar="NAME",
                        help="scenarios to run (default: all; see --list)")
    parser.add_argument("--output", default="skdp-report",
                        help="folder for the CSV, Markdown and PNG files (default: ./skdp-report)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the benchmark's noise draws (reproducible runs)")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    # The benchmark's data are generated or bundled with scikit-learn: their
    # label sets are public, so reading them from y (classes=None) leaks nothing.
    warnings.filterwarnings("ignore", message="classes=None")
    scenarios = get_scenarios()
    if args.list:
        for s in scenarios.values():
            print(_wrap(f"{s.name:<27}{s.description}", indent=27))
        return 0
    if args.scenario:
        unknown = sorted(set(args.scenario) - set(scenarios))
        if unknown:
            print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(scenarios)}",
                  file=sys.stderr)
            return 2
        chosen = [scenarios[n] for n in args.scenario]
    else:
        chosen = [s for s in scenarios.values() if s.in_quick or not args.quick]
    mode = "quick" if args.quick else "full"
    print(_wrap(f"skdp benchmarks ({mode} mode, seed {args.seed}): "
                f"{', '.join(s.name for s in chosen)}", indent=4))
    out = Path(args.output).resolve()
    began, summary = time.perf_counter(), []
    for scenario in chosen:
        start = time.perf_counter()
        print("\n" + _wrap(f"== {scenario.name}: {scenario.description}", indent=3), flush=True)
        rows = scenario.run(quick=args.quick, random_state=args.seed)
        print(format_table(rows))
        paths = write_report(scenario.name, rows, out, plot=not args.no_plot,
                             plotter=scenario.plot)
        seconds = time.perf_counter() - start
        names = ", ".join(p.name for p in paths)
        print(_wrap(f"({seconds:.1f} s) wrote {names} to {out}", indent=4), flush=True)
        summary.append((scenario.name, len(rows), seconds, names))
    total = time.perf_counter() - began
    print("\n" + "=" * WIDTH)
    print(_wrap(f"Summary: {len(chosen)} scenario(s), {mode} mode, seed {args.seed}, "
                f"{total:.0f} s in all.", indent=4))
    kinds = "a CSV and a Markdown table" if args.no_plot else (
        "a CSV, a Markdown table and a PNG figure")
    print(_wrap(f"Files are in {out} ({kinds} per scenario):", indent=4))
    print(f"  {'scenario':<27}{'rows':>5}{'seconds':>9}  files")
    for name, n_rows, seconds, names in summary:
        print(_wrap(f"  {name:<27}{n_rows:>5}{seconds:>9.1f}  {names}", indent=45))
    return 0


def _wrap(text, indent=0):
    """Wrap ``text`` at the report's width, continuation lines indented by ``indent``."""
    return "\n".join(textwrap.wrap(text, WIDTH, subsequent_indent=" " * indent,
                                   break_on_hyphens=False, drop_whitespace=True)) or text

if __name__ == "__main__":
    sys.exit(main())
