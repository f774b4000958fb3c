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
]

EXPECTED_FAILED_CHECKS = {}
