"""The scalers of skdp.preprocessing."""

from skdp.preprocessing import DPStandardScaler, PublicBoundsScaler

# Scalar bounds: the checks use data of several widths. Values outside are clipped.
INSTANCES = [
    PublicBoundsScaler(bounds=(-5.0, 5.0)),
    PublicBoundsScaler(bounds=(0.0, 10.0), feature_range=(0.0, 1.0), clip=False),
    DPStandardScaler(epsilon=1.0, bounds=(-5.0, 5.0), random_state=0),
    DPStandardScaler(epsilon=1.0, delta=0.0, bounds=(-5.0, 5.0), random_state=0),
    # Sparse input (with_mean=False), so the checks also run on CSR/CSC/COO data.
    DPStandardScaler(epsilon=1.0, bounds=(-5.0, 5.0), with_mean=False, random_state=0),
    # Exact integer noise on a public grid, on dense and sparse input.
    DPStandardScaler(epsilon=1.0, bounds=(-5.0, 5.0), with_mean=False, noise="discrete",
                     random_state=0),
]

# Weighted fits whose weights are clipped to [0, 1] and divided by the public n (shared with
# common_instances.kernel_methods).
BOUNDED_WEIGHT_CHECKS = {}
BOUNDED_WEIGHT_CHECKS.update({
    check: ("weights are bounded by 1 and the sums are divided by the public n, not by the "
            "private weight sum, so repeating a row is not weighting it by 2 (DP)")
    for check in ("check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")
})
BOUNDED_WEIGHT_CHECKS["check_all_zero_sample_weights_error"] = (
    "weights are protected like the rows: an error only for all-zero weights would tell that "
    "data set from its neighbours, so the fit releases noise only")

EXPECTED_FAILED_CHECKS = {"DPStandardScaler": BOUNDED_WEIGHT_CHECKS}

# Private bounds as pipeline steps (skdp.preprocessing._private_bounds).
from skdp.preprocessing import DPFeatureClipper, DPNormClipper  # noqa: E402

INSTANCES += [
    DPNormClipper(epsilon=1.0, random_state=0),
    DPNormClipper(epsilon=1.0, rescale=False, random_state=0),
    DPFeatureClipper(epsilon=1.0, random_state=0),
]
