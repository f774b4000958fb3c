"""Per-family lists of estimator instances for tests/test_common.py."""
