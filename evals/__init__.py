"""Datasets, metrics, baselines, benchmarks and reports. Nothing imports this package."""
