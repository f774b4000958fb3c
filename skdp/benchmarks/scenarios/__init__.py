"""Benchmark scenarios; every module here registers itself on import."""
