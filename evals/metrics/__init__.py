"""Evaluation metrics as pure functions (each unit-tested on a hand-computed example)."""
