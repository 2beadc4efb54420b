"""Retrieval systems compared in the evaluation, all over the same KB and embedding model."""
