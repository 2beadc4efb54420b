"""The knowledge layer: schema, knowledge-base builder, graph stores, vector index, graph algorithms."""
