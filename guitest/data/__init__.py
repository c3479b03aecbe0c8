"""Benchmark data made or fetched: ``guitest data fetch``, the embedded demo benchmark, placeholder screenshots."""
