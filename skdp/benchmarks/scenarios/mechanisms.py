"""Scenario ``mechanisms``: claimed vs empirically audited epsilon of each basic mechanism."""

from skdp.benchmarks._harness import make_row, progress
from skdp.benchmarks._registry import register_scenario
from skdp.testing import audit_epsilon, mechanism_audit_cases


@register_scenario("mechanisms", "claimed vs audited epsilon of each basic mechanism, "
                   "and of an under-noised copy")
def run(quick, random_state):
    rows = []
    scale = 0.15 if quick else 1.0
    for case in progress(mechanism_audit_cases(), desc="audits"):
        n_runs = max(2000, int(case.n_runs * scale))
        for label, factor in (("", 1.0), (f" (noise x{case.catch_factor:g})", case.catch_factor)):
            res = audit_epsilon(case.make(factor), case.dataset_0, case.dataset_1,
                                n_runs=n_runs, delta=case.delta, vectorized=case.vectorized,
                                random_state=random_state)
            verdict = ("within claim" if res.epsilon_lower_bound <= case.epsilon
                       else "VIOLATION caught")
            rows.append(make_row("mechanisms", "worst-case pair", case.name + label,
                                 case.epsilon, "audited epsilon (95% lower bound)",
                                 [res.epsilon_lower_bound], note=verdict))
    return rows
