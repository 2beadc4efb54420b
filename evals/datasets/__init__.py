"""Evaluation datasets: loaders, the shipped dev/CI slices, and the registry the runner reads."""
