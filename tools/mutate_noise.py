"""Mutation audit of skdp's noise calibrations: does the test suite catch an under-noised release?

Each mutant is one textual patch of one calibration site: a noise draw or a
noise scale multiplied by 0.5, a sensitivity multiplied by 0.5, or the
per-part epsilon of a budget split doubled. The driver applies one mutant at a
time to the working tree, runs the test files that cover the module
(``-x -q -n 0``), records whether the run failed ("killed") or passed
("survived"), and restores the file with ``git checkout`` (also on Ctrl-C,
SIGTERM or SIGHUP; after a SIGKILL run ``git status`` and ``git checkout`` the
mutated file yourself). Never commit a mutant: run it on a clean tree only.

    python tools/mutate_noise.py --list
    python tools/mutate_noise.py [--only NAME ...] [--tests FILE ...] [--out results.jsonl]

``tests/test_noise_mutants.py`` (the tests written against this audit's
survivors) runs first for every mutant; ``--original`` leaves it out, to see
what the rest of the suite catches on its own.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Test files that cover each module (by path prefix; the first match wins).
COVERAGE = [
    ("skdp/mechanisms/_discrete.py", ["tests/mechanisms/test_discrete.py",
                                      "tests/mechanisms/test_discrete_sampler.py",
                                      "tests/mechanisms/test_discrete_sampler_exactness.py"]),
    ("skdp/mechanisms/", ["tests/mechanisms/test_mechanisms.py", "tests/testing/test_audit.py",
                          "tests/mechanisms/test_sparse_vector.py"]),
    ("skdp/accounting/", ["tests/accounting/test_accountant.py",
                          "tests/accounting/test_zcdp_conversion.py"]),
    ("skdp/linear_model/_amp.py", ["tests/linear_model/test_amp.py",
                                   "tests/linear_model/test_amp_discrete.py"]),
    ("skdp/linear_model/_multinomial.py", ["tests/linear_model/test_amp.py"]),
    ("skdp/linear_model/_losses.py", ["tests/linear_model/test_amp.py",
                                      "tests/linear_model/test_convex.py"]),
    ("skdp/linear_model/_perturbation.py", ["tests/linear_model/test_convex.py",
                                            "tests/linear_model/test_perturbation_discrete.py",
                                            "tests/linear_model/test_output_perturbation_multinomial.py"]),
    ("skdp/linear_model/_private_glm.py", ["tests/linear_model/test_convex.py",
                                           "tests/linear_model/test_perturbation_discrete.py",
                                           "tests/linear_model/test_amp_discrete.py",
                                           "tests/linear_model/test_output_perturbation_multinomial.py"]),
    ("skdp/linear_model/_permutation_sgd.py", ["tests/linear_model/test_convex.py",
                                               "tests/linear_model/test_permutation_sgd_discrete.py",
                                               "tests/linear_model/test_permutation_sgd_multinomial.py"]),
    ("skdp/linear_model/_dpsgd.py", ["tests/linear_model/test_convex.py",
                                     "tests/linear_model/test_dpsgd_multinomial.py"]),
    ("skdp/linear_model/", ["tests/linear_model/test_convex.py"]),
    ("skdp/svm/", ["tests/svm/test_classes.py", "tests/svm/test_classes_discrete.py"]),
    ("skdp/kernel_methods/", ["tests/kernel_methods/test_kernel_methods.py",
                              "tests/kernel_methods/test_kernel_methods_audit.py",
                              "tests/kernel_methods/test_classifiers_discrete.py"]),
    ("skdp/matrix_completion/", ["tests/matrix_completion/test_completer.py",
                                 "tests/matrix_completion/test_completer_discrete.py",
                                 "tests/matrix_completion/test_calibration_discrete.py"]),
    ("skdp/ensemble/", ["tests/ensemble/test_ensemble.py",
                        "tests/ensemble/test_ensemble_privacy.py",
                        "tests/ensemble/test_stability.py"]),
    ("skdp/preprocessing/", ["tests/preprocessing/test_dp_scaler.py",
                             "tests/preprocessing/test_dp_scaler_sample_weight.py"]),
    ("skdp/model_selection/", ["tests/model_selection/test_parameter_tuning.py"]),
    ("skdp/utils/_multiclass.py", ["tests/linear_model/test_private_glm_multiclass.py"]),
    ("skdp/utils/", ["tests/utils/test_utils.py", "tests/linear_model/test_convex.py"]),
]

# A fast first pass (a -k expression) per test file: formula and scale tests. A mutant
# that survives it is run again on the whole covering files, so the verdict is the same.
QUICK = {
    "tests/linear_model/test_amp.py":
        "calibration_matches or constants_enter or loss_constant or defaults_are "
        "or regularization_is or splits_the_budget or hand_computed",
    "tests/linear_model/test_convex.py":
        "formulas or thesis_scale or zcdp_halves or noise_reaches or l2_laplace "
        "or noise_is_calibrated or splits_the_budget_by or reviewers_case",
    "tests/linear_model/test_amp_discrete.py": "by_hand or certified_point_plus",
    "tests/linear_model/test_perturbation_discrete.py": "by_hand or spread or draws_its_parameter",
    "tests/linear_model/test_output_perturbation_multinomial.py":
        "hand_computed or k_d_coefficients",
    "tests/linear_model/test_permutation_sgd_discrete.py": "by_hand or spread",
    "tests/linear_model/test_permutation_sgd_multinomial.py":
        "hand_computed or k_d_coefficients or path_plus or refused",
    "tests/kernel_methods/test_classifiers_discrete.py":
        "by_hand or coarse or spread or grid_multiples or follows",
    "tests/kernel_methods/test_kernel_methods.py":
        "sensitivity or scale or hall or covariance or noise",
    "tests/matrix_completion/test_completer.py": "sensitivity or sigma or symmetric or calibration",
    "tests/matrix_completion/test_completer_discrete.py": "hand or budget or variance or grid",
    "tests/ensemble/test_ensemble.py": "calibration or hand or teachers or sensitivity",
    "tests/preprocessing/test_dp_scaler.py": "scales or spread or sensitivity",
    "tests/model_selection/test_parameter_tuning.py": "budget",
}

MECH, ACC, LM = "skdp/mechanisms/", "skdp/accounting/", "skdp/linear_model/"
KM, MC = "skdp/kernel_methods/", "skdp/matrix_completion/"
DOUBLE = "(lambda p: type(p)(2.0 * p.epsilon, p.delta))"  # a split part with epsilon doubled

# (name, file, exact old text (must occur once), new text)
MUTANTS = [
    # --- mechanisms ---------------------------------------------------------------
    ("laplace_scale", MECH + "_laplace.py",
     "    return check_noise_scale(sensitivity / epsilon)",
     "    return check_noise_scale(0.5 * sensitivity / epsilon)"),
    ("laplace_draw", MECH + "_laplace.py",
     "laplace(0.0, self.scale,", "laplace(0.0, 0.5 * self.scale,"),
    ("report_noisy_max_scale", MECH + "_exponential.py",
     "rng.laplace(0.0, 2.0 * sensitivity / epsilon", "rng.laplace(0.0, 1.0 * sensitivity / epsilon"),
    ("exp_mech_factor", MECH + "_exponential.py",
     "factor = epsilon / (", "factor = 2.0 * epsilon / ("),
    ("exp_mech_monotonic_sens", MECH + "_exponential.py",
     "(sensitivity if monotonic", "(0.5 * sensitivity if monotonic"),
    ("gauss_classic", MECH + "_gaussian.py",
     "return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon",
     "return 0.5 * math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon"),
    ("gauss_thesis", MECH + "_gaussian.py",
     "sigma = sensitivity * (1.0 + math.sqrt(", "sigma = 0.5 * sensitivity * (1.0 + math.sqrt("),
    ("gauss_analytic", MECH + "_gaussian.py",
     "    return _checked_sigma(s * sensitivity,", "    return _checked_sigma(0.5 * s * sensitivity,"),
    ("gauss_analytic_large_eps", MECH + "_gaussian.py",
     "return (t + math.sqrt(t * t + 0.5)) / root_eps", "return 0.5 * (t + math.sqrt(t * t + 0.5)) / root_eps"),
    ("gauss_log_delta_sens", MECH + "_gaussian.py",
     "scale = 1.0 / sigma_over_sens", "scale = 0.5 / sigma_over_sens"),
    ("gauss_draw", MECH + "_gaussian.py",
     "normal(0.0, self.sigma,", "normal(0.0, 0.5 * self.sigma,"),
    ("sv_thesis_lambda", MECH + "_sparse_vector.py",
     "lam = sensitivity * math.sqrt(", "lam = 0.5 * sensitivity * math.sqrt("),
    ("sv_thesis_query", MECH + "_sparse_vector.py",
     "return lam, 2.0 * lam, True", "return lam, 1.0 * lam, True"),
    ("sv_thesis_threshold", MECH + "_sparse_vector.py",
     "return lam, 2.0 * lam, True", "return 0.5 * lam, 2.0 * lam, True"),
    ("sv_lyu_threshold", MECH + "_sparse_vector.py",
     "return sensitivity / eps1, ", "return 0.5 * sensitivity / eps1, "),
    ("sv_lyu_query", MECH + "_sparse_vector.py",
     ", 2.0 * cutoff * sensitivity / eps2, False", ", 1.0 * cutoff * sensitivity / eps2, False"),
    ("sv_threshold_draw", MECH + "_sparse_vector.py",
     "laplace(0.0, self.threshold_scale)", "laplace(0.0, 0.5 * self.threshold_scale)"),
    ("sv_query_draw", MECH + "_sparse_vector.py",
     "laplace(0.0, self.query_scale)", "laplace(0.0, 0.5 * self.query_scale)"),
    ("sv_thesis_guard", MECH + "_sparse_vector.py",
     "    return bound <= epsilon", "    return bound <= 2.0 * epsilon"),
    # --- accounting ---------------------------------------------------------------
    ("budget_split", ACC + "_budget.py",
     "PrivacyBudget(self.epsilon / k,", "PrivacyBudget(2.0 * self.epsilon / k,"),
    ("budget_add", ACC + "_budget.py",
     "PrivacyBudget(self.epsilon + other.epsilon,",
     "PrivacyBudget(0.5 * (self.epsilon + other.epsilon),"),
    ("advanced_total", ACC + "_composition.py",
     "eps_total = min(", "eps_total = 0.5 * min("),
    ("advanced_drift", ACC + "_composition.py",
     "drift = float(", "drift = 0.5 * float("),
    ("dp_to_zcdp", ACC + "_composition.py",
     "    return 0.5 * epsilon**2", "    return 0.25 * epsilon**2"),
    ("zcdp_to_dp", ACC + "_composition.py",
     "return rho + 2.0 * math.sqrt(-rho", "return 0.5 * rho + 1.0 * math.sqrt(-rho"),
    ("zcdp_to_dp_cks", ACC + "_composition.py",
     "PrivacyBudget(min(_cks_epsilon(rho, delta),", "PrivacyBudget(0.5 * min(_cks_epsilon(rho, delta),"),
    ("zcdp_delta", ACC + "_composition.py",
     "    return _delta_from_log(_cks_log_delta(rho, epsilon)[0])",
     "    return 0.5 * _delta_from_log(_cks_log_delta(rho, epsilon)[0])"),
    ("zcdp_for_dp_cks", ACC + "_composition.py",
     "    return rho if rho > bun_steinke and", "    return 2.0 * rho if rho > bun_steinke and"),
    ("zcdp_for_dp", ACC + "_composition.py",
     "    return (epsilon / (math.sqrt(", "    return 2.0 * (epsilon / (math.sqrt("),
    ("gaussian_zcdp", ACC + "_composition.py",
     "return 0.5 * (sensitivity / sigma) ** 2", "return 0.25 * (sensitivity / sigma) ** 2"),
    ("subsampled_sigma", ACC + "_subsampled.py",
     "    return float(sigma)", "    return float(0.5 * sigma)"),
    ("subsampled_epsilon", ACC + "_subsampled.py",
     "    return float(acc.get_epsilon(delta))", "    return 0.5 * float(acc.get_epsilon(delta))"),
    ("accountant_fits", ACC + "_accountant.py",
     "eps + Fraction(budget.epsilon) <=", "eps + Fraction(budget.epsilon) / 2 <="),
    ("accountant_total", ACC + "_accountant.py",
     "eps = sum(s.budget.epsilon for s in spends)",
     "eps = 0.5 * sum(s.budget.epsilon for s in spends)"),
    # --- losses (sensitivities of everything built on them) ------------------------
    ("logistic_lipschitz", LM + "_losses.py",
     '"""L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""\n'
     "        return float(data_norm)\n\n    def smoothness(self, data_norm):\n"
     '        """Smoothness constant ``beta = data_norm^2 / 4``."""',
     '"""L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""\n'
     "        return 0.5 * float(data_norm)\n\n    def smoothness(self, data_norm):\n"
     '        """Smoothness constant ``beta = data_norm^2 / 4``."""'),
    ("logistic_smoothness", LM + "_losses.py",
     "return float(data_norm) ** 2 / 4.0", "return float(data_norm) ** 2 / 8.0"),
    ("huber_lipschitz", LM + "_losses.py",
     '"""L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""\n'
     "        return float(data_norm)\n\n    def smoothness(self, data_norm):\n"
     '        """Smoothness constant ``beta = data_norm^2 / (2 h)``."""',
     '"""L2-Lipschitz constant in ``theta`` for rows of norm <= ``data_norm``."""\n'
     "        return 0.5 * float(data_norm)\n\n    def smoothness(self, data_norm):\n"
     '        """Smoothness constant ``beta = data_norm^2 / (2 h)``."""'),
    ("huber_smoothness", LM + "_losses.py",
     "return float(data_norm) ** 2 / (2.0 * self.h)", "return float(data_norm) ** 2 / (4.0 * self.h)"),
    ("softmax_lipschitz", LM + "_multinomial.py",
     "return math.sqrt(2.0) * float(data_norm)", "return 0.5 * math.sqrt(2.0) * float(data_norm)"),
    ("softmax_smoothness", LM + "_multinomial.py",
     "return float(data_norm) ** 2 / 2.0", "return float(data_norm) ** 2 / 4.0"),
    # --- AMP ----------------------------------------------------------------------
    ("amp_eps2_part", LM + "_amp.py",
     "    eps1, delta1 = epsilon - eps2, delta - delta2\n",
     "    eps1, delta1 = epsilon - eps2, delta - delta2\n    eps2 = 2.0 * eps2\n"),
    ("amp_eps1_part", LM + "_amp.py",
     "    eps1, delta1 = epsilon - eps2, delta - delta2\n",
     "    eps1, delta1 = 2.0 * (epsilon - eps2), delta - delta2\n"),
    ("amp_eps3_sigma1", LM + "_amp.py",
     "objective_noise_sigma(2.0 * lipschitz / m, eps3,", "objective_noise_sigma(2.0 * lipschitz / m, 2.0 * eps3,"),
    ("amp_gap_reg", LM + "_amp.py",
     "regularization_for_gap(eps1 - eps3, curvature, row_rank)",
     "regularization_for_gap(2.0 * (eps1 - eps3), curvature, row_rank)"),
    ("amp_sigma1_sens", LM + "_amp.py",
     "objective_noise_sigma(2.0 * lipschitz / m,", "objective_noise_sigma(1.0 * lipschitz / m,"),
    ("amp_sigma1_draw", LM + "_amp.py",
     "normal(0.0, calibration.sigma1,", "normal(0.0, 0.5 * calibration.sigma1,"),
    ("amp_sens2", LM + "_amp.py",
     "sensitivity2 = 2.0 * m * gamma / reg_strength", "sensitivity2 = 1.0 * m * gamma / reg_strength"),
    ("amp_sigma2_draw", LM + "_amp.py",
     "normal(0.0, calibration.sigma2,", "normal(0.0, 0.5 * calibration.sigma2,"),
    ("amp_curvature", LM + "_amp.py",
     "    curvature = row_rank * smoothness\n", "    curvature = 0.5 * row_rank * smoothness\n"),
    ("amp_reg_for_gap", LM + "_amp.py",
     "return curvature / (row_rank * math.expm1(", "return 0.5 * curvature / (row_rank * math.expm1("),
    ("amp_union_bound", LM + "_amp.py",
     "union = math.log(2 * k) + log_gauss", "union = math.log(k) + log_gauss"),
    ("amp_ovr_split", LM + "_amp.py",
     "run_budget = budget.split(n_classes) if", f"run_budget = {DOUBLE}(budget.split(n_classes)) if"),
    ("amp_discrete_sens", LM + "_amp.py",
     'svm_discrete_noise("discrete_gaussian", cal.sensitivity2,',
     'svm_discrete_noise("discrete_gaussian", 0.5 * cal.sensitivity2,'),
    ("amp_discrete_eps2", LM + "_amp.py",
     "n_params, cal.eps2,", "n_params, 2.0 * cal.eps2,"),
    ("amp_discrete_draw", LM + "_amp.py",
     'release_on_grid(result.x, "discrete_gaussian", sigma2_steps,',
     'release_on_grid(result.x, "discrete_gaussian", sigma2_steps / 4,'),
    # --- output / objective perturbation -----------------------------------------
    ("outpert_sens", LM + "_perturbation.py",
     "return 2.0 * data_norm / (n_samples * alpha) + 2.0 * tol / alpha",
     "return 0.5 * (2.0 * data_norm / (n_samples * alpha) + 2.0 * tol / alpha)"),
    ("outpert_scale", LM + "_perturbation.py",
     "return sensitivity, sensitivity / budget.epsilon",
     "return sensitivity, 0.5 * sensitivity / budget.epsilon"),
    ("l2_laplace_draw", LM + "_perturbation.py",
     "rng.gamma(shape=n_features, scale=scale,", "rng.gamma(shape=n_features, scale=0.5 * scale,"),
    ("outpert_softmax_lipschitz", LM + "_perturbation.py",
     "lipschitz = MultinomialLoss(n_classes).lipschitz(data_norm)",
     "lipschitz = float(data_norm)"),
    ("glm_softmax_dim", LM + "_private_glm.py",
     '* (settings.get("n_classes") or 1)', "* 1"),
    ("outpert_softmax_draw", LM + "_perturbation.py",
     "w = result.x + sample_l2_laplace(result.x.size, scale, rng)",
     "w = result.x + sample_l2_laplace(1, scale, rng, size=result.x.size).ravel()"),
    ("outpert_discrete_sens", LM + "_perturbation.py",
     "sensitivity = self._noise_scale(settings, budget)[0]",
     "sensitivity = 0.5 * self._noise_scale(settings, budget)[0]"),
    ("outpert_discrete_param", LM + "_perturbation.py",
     "parameter = svm_discrete_noise(mechanism, sensitivity,",
     "parameter = svm_discrete_noise(mechanism, 0.5 * sensitivity,"),
    ("outpert_discrete_eps", LM + "_perturbation.py",
     "n_coef, epsilon, delta, granularity)", "n_coef, 2.0 * epsilon, delta, granularity)"),
    ("outpert_discrete_draw", LM + "_perturbation.py",
     'release_on_grid(result.x, settings["mechanism"], parameter,',
     'release_on_grid(result.x, settings["mechanism"], parameter / 4,'),
    ("glm_release_on_grid_draw", LM + "_private_glm.py",
     "    parameter = Fraction(parameter)\n", "    parameter = Fraction(parameter) / 4\n"),
    ("objpert_logterm", LM + "_perturbation.py",
     "log_term = math.log1p(", "log_term = 0.5 * math.log1p("),
    ("objpert_scale", LM + "_perturbation.py",
     "return epsilon_prime, extra_reg, 2.0 * data_norm / epsilon_prime",
     "return epsilon_prime, extra_reg, 1.0 * data_norm / epsilon_prime"),
    ("objpert_extra_reg", LM + "_perturbation.py",
     "extra_reg = smoothness / (n_samples", "extra_reg = 0.5 * smoothness / (n_samples"),
    ("objpert_extra_reg_exp", LM + "_perturbation.py",
     "math.expm1(epsilon / 4.0)", "math.expm1(epsilon / 2.0)"),
    ("objpert_eps_half", LM + "_perturbation.py",
     "        epsilon_prime = 0.75 * epsilon\n", "        epsilon_prime = epsilon\n"),
    ("objpert_cert_sens", LM + "_perturbation.py",
     'cert_sensitivity = 2.0 * settings["tol"]', 'cert_sensitivity = 1.0 * settings["tol"]'),
    ("objpert_eps2_part", LM + "_perturbation.py",
     "cert_sensitivity / epsilon_2", "cert_sensitivity / (2.0 * epsilon_2)"),
    ("objpert_eps1_part", LM + "_perturbation.py",
     "epsilon_1 = budget.epsilon - epsilon_2", "epsilon_1 = 2.0 * (budget.epsilon - epsilon_2)"),
    # --- one-vs-rest budgets (linear models and SVMs) ------------------------------
    ("ovr_joint_problems", "skdp/utils/_multiclass.py",
     "            return self.total.epsilon, self.total.delta, self.n_problems\n",
     "            return self.total.epsilon, self.total.delta, 1\n"),
    ("ovr_split_epsilon", "skdp/utils/_multiclass.py",
     "        return self.epsilon, self.delta, 1\n", "        return 2.0 * self.epsilon, self.delta, 1\n"),
    # --- private Frank-Wolfe -------------------------------------------------------
    ("fw_score_sens", LM + "_frank_wolfe.py",
     "return 2.0 * l1_radius * data_norm / n_samples", "return 1.0 * l1_radius * data_norm / n_samples"),
    ("fw_thesis_scale", LM + "_frank_wolfe.py",
     "return (math.sqrt(-32.0 * n_steps", "return 0.5 * (math.sqrt(-32.0 * n_steps"),
    ("fw_laplace_scale", LM + "_frank_wolfe.py",
     'return 2.0 * s / step_epsilon, step_epsilon, "laplace"',
     'return 1.0 * s / step_epsilon, step_epsilon, "laplace"'),
    ("fw_gumbel_scale", LM + "_frank_wolfe.py",
     'return 2.0 * s / step_epsilon, step_epsilon, "gumbel"',
     'return 1.0 * s / step_epsilon, step_epsilon, "gumbel"'),
    ("fw_step_eps_basic", LM + "_frank_wolfe.py",
     "        return epsilon / total_steps\n    advanced",
     "        return 2.0 * epsilon / total_steps\n    advanced"),
    ("fw_step_eps_advanced", LM + "_frank_wolfe.py",
     "        return advanced\n", "        return 2.0 * advanced\n"),
    ("fw_step_eps_zcdp", LM + "_frank_wolfe.py",
     "return max(math.sqrt(8.0 * rho / total_steps), advanced)",
     "return max(2.0 * math.sqrt(8.0 * rho / total_steps), advanced)"),
    ("fw_laplace_draw", LM + "_frank_wolfe.py",
     "rng.laplace(0.0, scale, size=scores.shape)", "rng.laplace(0.0, 0.5 * scale, size=scores.shape)"),
    ("fw_gumbel_draw", LM + "_frank_wolfe.py",
     "rng.gumbel(0.0, scale, size=scores.shape)", "rng.gumbel(0.0, 0.5 * scale, size=scores.shape)"),
    # --- DP-SGD and permutation SGD -------------------------------------------------
    ("dpsgd_draw", LM + "_dpsgd.py",
     "rng.normal(0.0, noise_std, size=w.shape)", "rng.normal(0.0, 0.5 * noise_std, size=w.shape)"),
    ("dpsgd_std", LM + "_dpsgd.py",
     'return settings["noise_multiplier"] * settings["data_norm"]',
     'return 0.5 * settings["noise_multiplier"] * settings["data_norm"]'),
    ("dpsgd_clip", LM + "_dpsgd.py",
     "scale = np.minimum(1.0, clip_norm / ", "scale = np.minimum(1.0, 2.0 * clip_norm / "),
    ("dpsgd_softmax_clip", LM + "_dpsgd.py",
     "residual *= np.minimum(1.0, clip_norm / ", "residual *= np.minimum(1.0, 2.0 * clip_norm / "),
    ("dpsgd_softmax_call_clip", LM + "_dpsgd.py",
     'settings["data_norm"], weights)', '2.0 * settings["data_norm"], weights)'),
    ("dpsgd_softmax_noise", LM + "_dpsgd.py",
     "settings, self._noise_std(settings), rng,\n                        sample_weight, n_classes",
     "settings, self._noise_std(settings) / math.sqrt(n_classes), rng,\n"
     "                        sample_weight, n_classes"),
    ("dpsgd_softmax_nonfinite", LM + "_dpsgd.py",
     "residual[~np.isfinite(residual).all(axis=1)] = 0.0",
     "residual[~np.isfinite(residual).all(axis=1)] *= 1.0"),
    ("dpsgd_neighbours", LM + "_dpsgd.py",
     'accountant="pld", neighbours="replace-one")', 'accountant="pld", neighbours="add-remove")'),
    ("psgd_sens_sc", LM + "_permutation_sgd.py",
     "return 2.0 * data_norm / (alpha * min_batch * n_batches)",
     "return 1.0 * data_norm / (alpha * min_batch * n_batches)"),
    ("psgd_sens_convex", LM + "_permutation_sgd.py",
     "return 2.0 * epochs * learning_rate * data_norm / min_batch",
     "return 1.0 * epochs * learning_rate * data_norm / min_batch"),
    ("psgd_thesis_sigma", LM + "_permutation_sgd.py",
     "thesis = math.sqrt(2.0 * math.log(2.0 / delta))", "thesis = 0.5 * math.sqrt(2.0 * math.log(2.0 / delta))"),
    ("psgd_analytic_sigma", LM + "_permutation_sgd.py",
     "analytic = gaussian_sigma_analytic(", "analytic = 0.5 * gaussian_sigma_analytic("),
    ("psgd_draw", LM + "_permutation_sgd.py",
     "rng.normal(0.0, sigma, size=w.shape)", "rng.normal(0.0, 0.5 * sigma, size=w.shape)"),
    ("psgd_discrete_sens", LM + "_permutation_sgd.py",
     '"discrete_gaussian", settings["sensitivity"], n_coef,',
     '"discrete_gaussian", 0.5 * settings["sensitivity"], n_coef,'),
    ("psgd_discrete_eps", LM + "_permutation_sgd.py",
     '"discrete_gaussian", settings["sensitivity"], n_coef, epsilon, delta,',
     '"discrete_gaussian", settings["sensitivity"], n_coef, 2.0 * epsilon, delta,'),
    ("psgd_softmax_lipschitz", LM + "_permutation_sgd.py",
     "lipschitz=softmax_loss.lipschitz(data_norm))",
     "lipschitz=0.5 * softmax_loss.lipschitz(data_norm))"),
    ("psgd_softmax_beta", LM + "_permutation_sgd.py",
     "beta = softmax_loss.smoothness(data_norm) + alpha",
     "beta = 0.5 * softmax_loss.smoothness(data_norm) + alpha"),
    ("psgd_softmax_draw", LM + "_permutation_sgd.py",
     "W + rng.normal(0.0, sigma, size=W.shape)", "W + rng.normal(0.0, 0.5 * sigma, size=W.shape)"),
    ("psgd_discrete_draw", LM + "_permutation_sgd.py",
     'release_on_grid(w, "discrete_gaussian", sigma2_steps,',
     'release_on_grid(w, "discrete_gaussian", sigma2_steps / 4,'),
    # --- SVM ------------------------------------------------------------------------
    ("svm_sens", "skdp/svm/_base.py",
     "return 2.0 * lipschitz * C * kappa / n_samples", "return 1.0 * lipschitz * C * kappa / n_samples"),
    ("svm_laplace_scale", "skdp/svm/_base.py",
     "laplace_scale(math.sqrt(n_coef) * sensitivity, epsilon)",
     "laplace_scale(0.5 * math.sqrt(n_coef) * sensitivity, epsilon)"),
    ("svm_gauss_scale", "skdp/svm/_base.py",
     "    return gaussian_sigma_analytic(sensitivity, epsilon, delta)",
     "    return 0.5 * gaussian_sigma_analytic(sensitivity, epsilon, delta)"),
    ("svm_cert_radius", "skdp/svm/_base.py",
     "sensitivity = exact + 2.0 * radius", "sensitivity = exact + 1.0 * radius"),
    ("svm_laplace_draw", "skdp/svm/_base.py",
     "child_rng.laplace(0.0, scale, size=n_coef)", "child_rng.laplace(0.0, 0.5 * scale, size=n_coef)"),
    ("svm_gauss_draw", "skdp/svm/_base.py",
     "child_rng.normal(0.0, scale, size=n_coef)", "child_rng.normal(0.0, 0.5 * scale, size=n_coef)"),
    ("svm_discrete_laplace", "skdp/svm/_base.py",
     "return discrete_laplace_scale(math.sqrt(n_coef) * sensitivity,",
     "return discrete_laplace_scale(0.5 * math.sqrt(n_coef) * sensitivity,"),
    ("svm_discrete_gauss", "skdp/svm/_base.py",
     "return discrete_gaussian_sigma2(sensitivity, epsilon,",
     "return discrete_gaussian_sigma2(0.5 * sensitivity, epsilon,"),
    ("svm_discrete_round_up", "skdp/svm/_base.py",
     "sensitivity *= 1.0 + 2.0**-40", "sensitivity *= 1.0"),
    ("svm_discrete_draw", "skdp/svm/_base.py",
     "multiplier = Fraction(self._noise_multiplier)",
     "multiplier = Fraction(0.5 * self._noise_multiplier)"),
    ("svm_rff_kappa", "skdp/svm/_classes.py",
     "return 2 * self.n_components, 1.0",
     "return 2 * self.n_components, 0.5"),
    ("svm_linear_kappa", "skdp/svm/_classes.py",
     "return X.shape[1] + bool(self.fit_intercept), float(self.data_norm)",
     "return X.shape[1] + bool(self.fit_intercept), 0.5 * float(self.data_norm)"),
    # --- kernel methods ----------------------------------------------------------------
    ("tddl_basic", KM + "_classifiers.py",
     "return sensitivity * n_queries / epsilon", "return 0.5 * sensitivity * n_queries / epsilon"),
    ("tddl_hi", KM + "_classifiers.py",
     "        return hi\n", "        return 2.0 * hi\n"),
    ("tddl_lo", KM + "_classifiers.py",
     "    return lo\n", "    return 2.0 * lo\n"),
    ("erm_sens", KM + "_erm.py",
     "return 2.0 * kappa / (alpha * n_samples) + 2.0 * tol / alpha",
     "return 0.5 * (2.0 * kappa / (alpha * n_samples) + 2.0 * tol / alpha)"),
    ("kernel_kappa", KM + "_classifiers.py",
     "        kappa = math.sqrt(kernel.bound)\n", "        kappa = 0.5 * math.sqrt(kernel.bound)\n"),
    ("tddl_release_scale", KM + "_classifiers.py",
     "tddl_laplace_scale(kappa * sensitivity, n_functions * n_points,",
     "tddl_laplace_scale(0.5 * kappa * sensitivity, n_functions * n_points,"),
    ("tddl_draw", KM + "_classifiers.py",
     "values + rng.laplace(0.0, scale, size=values.shape)",
     "values + rng.laplace(0.0, 0.5 * scale, size=values.shape)"),
    ("tddl_discrete_steps", KM + "_classifiers.py",
     "steps = math.ceil(Fraction(sensitivity * (1.0 + 2.0**-40))",
     "steps = math.ceil(Fraction(0.5 * sensitivity * (1.0 + 2.0**-40))"),
    ("tddl_discrete_basic", KM + "_classifiers.py",
     "t = _round_up(Fraction(n_queries * steps) / Fraction(epsilon))",
     "t = _round_up(Fraction(n_queries * steps) / Fraction(2.0 * epsilon))"),
    ("tddl_discrete_advanced", KM + "_classifiers.py",
     "t = _round_up(Fraction(steps) / Fraction(tddl_query_epsilon(",
     "t = _round_up(Fraction(steps, 2) / Fraction(tddl_query_epsilon("),
    ("tddl_discrete_value_sens", KM + "_classifiers.py",
     "return tddl_discrete_laplace(scale, kappa * sensitivity,",
     "return tddl_discrete_laplace(scale, 0.5 * kappa * sensitivity,"),
    ("tddl_discrete_draw", KM + "_classifiers.py",
     'noisy = release_on_grid(values, "discrete_laplace", t_steps,',
     'noisy = release_on_grid(values, "discrete_laplace", t_steps / 4,'),
    ("ksvc_sigma", KM + "_classifiers.py",
     "return functional_noise_sigma(math.sqrt(n_functions) * sensitivity,",
     "return functional_noise_sigma(0.5 * math.sqrt(n_functions) * sensitivity,"),
    ("functional_analytic", KM + "_functional.py",
     "        return gaussian_sigma_analytic(sensitivity, epsilon, delta)\n",
     "        return 0.5 * gaussian_sigma_analytic(sensitivity, epsilon, delta)\n"),
    ("functional_hall", KM + "_functional.py",
     "sigma = sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon",
     "sigma = 0.5 * sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon"),
    ("gp_release_draw", KM + "_functional.py",
     "noisy = values + sigma * (", "noisy = values + 0.5 * sigma * ("),
    ("gp_mean_sens", KM + "_gp.py",
     "return label_range * float(", "return 0.5 * label_range * float("),
    ("kde_sens", KM + "_density.py",
     "return math.sqrt(2.0) / (n_samples *", "return 0.5 * math.sqrt(2.0) / (n_samples *"),
    ("hist_sens", KM + "_density.py",
     "return math.sqrt(2.0) / n_samples", "return 0.5 * math.sqrt(2.0) / n_samples"),
    ("hist_draw", KM + "_density.py",
     "counts / n + self.noise_scale_ * rng", "counts / n + 0.5 * self.noise_scale_ * rng"),
    ("idc_release_scale", KM + "_idc.py",
     "tddl_laplace_scale(kappa * sensitivity, 2 * self.n_rounds",
     "tddl_laplace_scale(0.5 * kappa * sensitivity, 2 * self.n_rounds"),
    ("idc_eps0", KM + "_idc.py",
     "eps0 = value_sensitivity / scale", "eps0 = 2.0 * value_sensitivity / scale"),
    ("idc_laplace_draw", KM + "_idc.py",
     "values[j] + rng.laplace(0.0, scale)", "values[j] + rng.laplace(0.0, 0.5 * scale)"),
    ("idc_discrete_draw", KM + "_idc.py",
     'noisy = release_on_grid(values[j:j + 1], "discrete_laplace", t_steps,',
     'noisy = release_on_grid(values[j:j + 1], "discrete_laplace", t_steps / 4,'),
    ("idc_discrete_queries", KM + "_idc.py",
     "return 2 * self.n_rounds * n_functions  # as _release_scale",
     "return self.n_rounds * n_functions  # as _release_scale"),
    ("online_discrete_sens", KM + "_idc.py",
     "sensitivity, max_updates, half.epsilon, half.delta, limit)",
     "0.5 * sensitivity, max_updates, half.epsilon, half.delta, limit)"),
    ("online_discrete_draw", KM + "_idc.py",
     'noisy = release_on_grid(private[t:t + 1], "discrete_laplace", t_steps,',
     'noisy = release_on_grid(private[t:t + 1], "discrete_laplace", t_steps / 4,'),
    ("online_sens", KM + "_idc.py",
     "sensitivity = kappa * erm_sensitivity(", "sensitivity = 0.5 * kappa * erm_sensitivity("),
    ("online_split", KM + "_idc.py",
     "half = budget.split(2)", f"half = {DOUBLE}(budget.split(2))"),
    ("online_scale", KM + "_idc.py",
     "noise_scale = tddl_laplace_scale(sensitivity, max_updates,",
     "noise_scale = 0.5 * tddl_laplace_scale(sensitivity, max_updates,"),
    ("online_draw", KM + "_idc.py",
     "laplace(0.0, self.noise_scale_)", "laplace(0.0, 0.5 * self.noise_scale_)"),
    # --- matrix completion --------------------------------------------------------------
    ("mc_sigma", MC + "_calibration.py",
     "    return gaussian_sigma_analytic(sensitivity, epsilon, delta)",
     "    return 0.5 * gaussian_sigma_analytic(sensitivity, epsilon, delta)"),
    ("mc_sens_svd", MC + "_calibration.py",
     "            return math.sqrt(2.0) * delta2", "            return 0.5 * math.sqrt(2.0) * delta2"),
    ("mc_sens_svd_oja", MC + "_calibration.py",
     "return math.sqrt(oja_iter) * min(", "return 0.5 * math.sqrt(oja_iter) * min("),
    ("mc_sens_exact", MC + "_calibration.py",
     "return math.sqrt(2.0 * rho4_sum)", "return 0.5 * math.sqrt(2.0 * rho4_sum)"),
    ("mc_sens_oja", MC + "_calibration.py",
     "return math.sqrt(releases_per_iter * rho4_sum)", "return 0.5 * math.sqrt(releases_per_iter * rho4_sum)"),
    ("mc_fw_rho", MC + "_calibration.py",
     "(1.0 + 16.0 * (n_iter - 1))", "(1.0 + 1.0 * (n_iter - 1))"),
    ("mc_symmetric_noise", MC + "_solvers.py",
     "return sigma * (g + g.T) / 2.0", "return sigma * (g + g.T) / 4.0"),
    ("mc_oja_draw", MC + "_solvers.py",
     "A.T @ (A @ V) + sigma * rng", "A.T @ (A @ V) + 0.5 * sigma * rng"),
    ("mc_eigenvalue_draw", MC + "_solvers.py",
     "float(Av @ Av) + sigma * rng", "float(Av @ Av) + 0.5 * sigma * rng"),
    ("mc_discrete_rho", MC + "_calibration.py",
     "rho = Fraction(zcdp_for_dp(epsilon, delta))", "rho = Fraction(zcdp_for_dp(2.0 * epsilon, delta))"),
    ("mc_discrete_sens", MC + "_calibration.py",
     "Fraction(s * _SENSITIVITY_MARGIN)", "Fraction(0.5 * s * _SENSITIVITY_MARGIN)"),
    ("mc_discrete_sigma2", MC + "_calibration.py",
     "_round_up(total / (2 * rho))", "_round_up(total / (8 * rho))"),
    ("mc_discrete_sched_svd", MC + "_calibration.py",
     "return [(math.sqrt(2.0) * delta2, n * n)]", "return [(0.5 * math.sqrt(2.0) * delta2, n * n)]"),
    ("mc_discrete_sched_svd_oja", MC + "_calibration.py",
     "return [(min(math.sqrt(2.0), math.sqrt(rank)) * delta2,",
     "return [(0.5 * min(math.sqrt(2.0), math.sqrt(rank)) * delta2,"),
    ("mc_discrete_sched_fw", MC + "_calibration.py",
     "[4.0 * delta2] * (n_iter - 1)", "[1.0 * delta2] * (n_iter - 1)"),
    ("mc_discrete_sched_exact", MC + "_calibration.py",
     "return [(math.sqrt(2.0) * r2, n * n) for r2", "return [(0.5 * math.sqrt(2.0) * r2, n * n) for r2"),
    ("mc_discrete_sched_oja", MC + "_calibration.py",
     "return [(r2, d) for r2", "return [(0.5 * r2, d) for r2"),
    ("mc_discrete_vector_draw", MC + "_solvers.py",
     "sample_discrete_gaussian(grid.sigma2, indices.size, rng)",
     "sample_discrete_gaussian(grid.sigma2 / 4, indices.size, rng)"),
    ("mc_discrete_diag_draw", MC + "_solvers.py",
     "noise[diagonal] = sample_discrete_gaussian(grid.sigma2, n, rng)",
     "noise[diagonal] = sample_discrete_gaussian(grid.sigma2 / 4, n, rng)"),
    ("mc_discrete_offdiag_draw", MC + "_solvers.py",
     "sample_discrete_gaussian(grid.sigma2 / 2, indices.size - n, rng)",
     "sample_discrete_gaussian(grid.sigma2 / 8, indices.size - n, rng)"),
    # --- ensemble --------------------------------------------------------------------------
    ("ens_sv_delta", "skdp/ensemble/_stability.py",
     "sv_delta = delta / 2.0", "sv_delta = delta"),
    ("ens_thesis_threshold", "skdp/ensemble/_stability.py",
     "threshold = 2.0 * thr_scale * (math.log(", "threshold = 1.0 * thr_scale * (math.log("),
    ("ens_lyu_threshold", "skdp/ensemble/_stability.py",
     "threshold = _laplace_difference_isf(delta / max_queries,",
     "threshold = 0.5 * _laplace_difference_isf(delta / max_queries,"),
    ("ens_sv_epsilon", "skdp/ensemble/_stability.py",
     "epsilon=epsilon, delta=sv_delta,", "epsilon=2.0 * epsilon, delta=sv_delta,"),
    ("ens_distance_sens", "skdp/ensemble/_stability.py",
     "self.sparse_vector.query(float(d))", "self.sparse_vector.query(2.0 * float(d))"),
    # --- preprocessing ---------------------------------------------------------------------
    ("scaler_laplace_sens", "skdp/preprocessing/_dp_scaler.py",
     "laplace_scale(2.0 * n_features, epsilon)", "laplace_scale(1.0 * n_features, epsilon)"),
    ("scaler_laplace_sq", "skdp/preprocessing/_dp_scaler.py",
     'return "laplace", scale, 2.0 * scale', 'return "laplace", scale, 1.0 * scale'),
    ("scaler_gauss_sens", "skdp/preprocessing/_dp_scaler.py",
     "gaussian_sigma_analytic(2.0 * math.sqrt(n_features),", "gaussian_sigma_analytic(1.0 * math.sqrt(n_features),"),
    ("scaler_gauss_sq", "skdp/preprocessing/_dp_scaler.py",
     'return "gaussian", sigma, sigma / math.sqrt(', 'return "gaussian", sigma, 0.5 * sigma / math.sqrt('),
    ("scaler_sum_draw", "skdp/preprocessing/_dp_scaler.py",
     "noisy_sum = sums + draw(0.0, sum_scale,", "noisy_sum = sums + draw(0.0, 0.5 * sum_scale,"),
    ("scaler_sq_draw", "skdp/preprocessing/_dp_scaler.py",
     "draw(0.0, square_sum_scale,", "draw(0.0, 0.5 * square_sum_scale,"),
    ("scaler_discrete_gauss", "skdp/preprocessing/_dp_scaler.py",
     "sigma2 = 4 * d * (m * grid) ** 2 * unit", "sigma2 = d * (m * grid) ** 2 * unit"),
    ("scaler_discrete_gauss_sq", "skdp/preprocessing/_dp_scaler.py",
     "sigma2 * grid**2 / _SQUARE_WEIGHT_RATIONAL",
     "sigma2 * grid**2 / (4 * _SQUARE_WEIGHT_RATIONAL)"),
    ("scaler_discrete_laplace", "skdp/preprocessing/_dp_scaler.py",
     "t1 = 2 * d * m * grid * unit", "t1 = d * m * grid * unit"),
    ("scaler_discrete_laplace_sq", "skdp/preprocessing/_dp_scaler.py",
     "return mechanism, grid, m, t1, 2 * grid * t1", "return mechanism, grid, m, t1, grid * t1"),
    # --- exact discrete mechanisms (skdp/mechanisms/_discrete.py) ---------------------------
    ("discrete_laplace_scale", "skdp/mechanisms/_discrete.py",
     "    return _round_up(_grid_l1_sensitivity(sensitivity, granularity, dimension) / epsilon)",
     "    return _round_up(_grid_l1_sensitivity(sensitivity, granularity, dimension) / (2 * epsilon))"),
    ("discrete_grid_l1", "skdp/mechanisms/_discrete.py",
     "math.ceil(sensitivity / granularity) + dimension - 1)",
     "math.ceil(sensitivity / granularity))"),
    ("discrete_grid_l2", "skdp/mechanisms/_discrete.py",
     "    return Fraction(q + 2 * min(q, math.isqrt(dimension * q)) + dimension)",
     "    return Fraction(q + dimension)"),
    ("discrete_gaussian_sigma2", "skdp/mechanisms/_discrete.py",
     "                     / (2 * rho))", "                     / (8 * rho))"),
    # The vectorized sampler's acceptance exp(-c (|y| - mu)^2), c = 1 / (2 sigma^2): c
    # doubled (sigma^2 halved), and c 1% too large (the denominator 2 p q t^2 off by 1.01).
    ("discrete_sampler_c", "skdp/mechanisms/_discrete.py",
     "    return p / (q * t), q / (2 * p)", "    return p / (q * t), q / p"),
    ("discrete_sampler_c_1pct", "skdp/mechanisms/_discrete.py",
     "    return p / (q * t), q / (2 * p)", "    return p / (q * t), q / (2 * p) * 1.01"),
    # --- clipping (the bound every sensitivity above rests on, doubled) ----------------------
    ("clip_rows_l2", "skdp/utils/_clipping.py",
     "scale[big] = max_norm / norms[big]", "scale[big] = 2.0 * max_norm / norms[big]"),
    ("clip_entries", "skdp/utils/_clipping.py",
     "return np.clip(X, -bound, bound)", "return np.clip(X, -2.0 * bound, 2.0 * bound)"),
    ("amp_clip", LM + "_amp.py",
     "scale = np.divide(data_norm, norms,", "scale = np.divide(2.0 * data_norm, norms,"),
    ("mc_clip_scale", MC + "_ratings.py",
     "scale[big] = bound / norms[big]", "scale[big] = 2.0 * bound / norms[big]"),
    # --- model selection ---------------------------------------------------------------------
    ("select_epsilon", "skdp/model_selection/_parameter_tuning.py",
     "exponential_mechanism(correct, epsilon=selection.epsilon,",
     "exponential_mechanism(correct, epsilon=2.0 * selection.epsilon,"),
    ("select_sens", "skdp/model_selection/_parameter_tuning.py",
     "sensitivity=1.0, random_state=rng)", "sensitivity=0.5, random_state=rng)"),
    ("select_charge", "skdp/model_selection/_parameter_tuning.py",
     "return PrivacyBudget(max(selection.epsilon,", "return PrivacyBudget(0.5 * max(selection.epsilon,"),
]


NEW_TESTS = "tests/test_noise_mutants.py"
# Fails whenever a mutant is applied (the mutant's old text is gone from the tree): left out
# of mutant runs, or it would "kill" every mutant the real tests miss.
APPLIES_CHECK = f"{NEW_TESTS}::test_every_mutant_of_the_audit_still_applies_to_the_code"


def coverage(path, original=False):
    for prefix, files in COVERAGE:
        if path.startswith(prefix):
            return files if original else [NEW_TESTS, *files]
    raise KeyError(path)


def apply(path, old, new):
    full = os.path.join(ROOT, path)
    with open(full) as f:
        text = f.read()
    count = text.count(old)
    assert count == 1, f"{path}: the old text occurs {count} times: {old!r}"
    with open(full, "w") as f:
        f.write(text.replace(old, new))


def restore(path):
    subprocess.run(["git", "checkout", "--", path], cwd=ROOT, check=True)


def _pytest(tests, timeout, keyword=None):
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider",
               "--deselect", APPLIES_CHECK, *tests] + (["-k", keyword] if keyword else [])
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def _exit(signum, frame):
    raise SystemExit(128 + signum)


def run_mutant(name, path, old, new, tests, timeout, quick_only=False):
    dirty = subprocess.run(["git", "status", "--porcelain", "--", path], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    assert not dirty, f"{path} has local changes; refusing to mutate it"
    # SIGTERM and SIGHUP would end the process without running the finally below (Ctrl-C
    # raises KeyboardInterrupt, which does): make them raise too, so the file is restored.
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, _exit)
    start = time.time()
    try:
        apply(path, old, new)
        quick = [f for f in tests if f in QUICK]
        rest = [f for f in tests if f != NEW_TESTS]
        rc, out = None, ""
        if NEW_TESTS in tests:  # fast, and written against these mutants: always first
            rc, out = _pytest([NEW_TESTS], timeout)
        if rc != 1 and quick:
            rc, out = _pytest(quick, timeout, " or ".join(f"({QUICK[f]})" for f in quick))
        if rc != 1 and not quick_only:
            if rest:
                rc, out = _pytest(rest, timeout)
        elif rc != 1:
            rc = "quick-pass-only"
    finally:
        restore(path)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, flags=re.M)
    status = {0: "survived", 1: "killed", "quick-pass-only": "not killed by the quick pass"}.get(
        rc, f"error({rc})")
    return {"name": name, "file": path, "status": status, "killed_by": failed[:1],
            "tests": tests, "seconds": round(time.time() - start, 1),
            "tail": out.strip().splitlines()[-1:] if out else []}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--tests", nargs="*", help="override the covering test files")
    parser.add_argument("--out", default="/tmp/noise_mutants.jsonl")
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--original", action="store_true",
                        help=f"leave {NEW_TESTS} out of the covering files")
    parser.add_argument("--quick-only", action="store_true",
                        help=f"run only {NEW_TESTS} and the fast -k pass (a mutant they "
                             "miss is not a verdict)")
    args = parser.parse_args(argv)
    names = [m[0] for m in MUTANTS]
    assert len(set(names)) == len(names), "duplicate mutant names"
    selected = [m for m in MUTANTS if not args.only or m[0] in args.only]
    if args.list:
        for name, path, _, _ in selected:
            print(f"{name:28s} {path}")
        return 0
    with open(args.out, "a") as out:
        for name, path, old, new in selected:
            tests = args.tests or coverage(path, args.original)
            result = run_mutant(name, path, old, new, tests, args.timeout, args.quick_only)
            print(json.dumps(result), flush=True)
            out.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
