"""Command line: ``python -m skdp.benchmarks [--quick] [--scenario NAME ...] [--output DIR]``."""

import argparse
import sys
import time
import warnings

from skdp.benchmarks._registry import get_scenarios
from skdp.benchmarks._report import format_table, write_report


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m skdp.benchmarks",
        description="skdp privacy-utility report: private estimators against scikit-learn.",
    )
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few draws (about 1 minute on an idle 2-core "
                             "machine, up to 8 on a busy one)")
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
            print(f"{s.name:20s} {s.description}")
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
    print(f"skdp benchmarks ({mode} mode): {', '.join(s.name for s in chosen)}")
    began, summary = time.perf_counter(), []
    for scenario in chosen:
        start = time.perf_counter()
        print(f"\n== {scenario.name}: {scenario.description}", flush=True)
        rows = scenario.run(quick=args.quick, random_state=args.seed)
        print(format_table(rows))
        paths = write_report(scenario.name, rows, args.output, plot=not args.no_plot)
        seconds = time.perf_counter() - start
        print(f"({seconds:.1f} s) wrote {', '.join(str(p) for p in paths)}", flush=True)
        summary.append(f"  {scenario.name:<28} {len(rows):>4} rows  {seconds:7.1f} s")
    print(f"\nDone: {len(chosen)} scenario(s) in {time.perf_counter() - began:.0f} s; "
          f"CSV, Markdown and PNG files are in {args.output}/")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
