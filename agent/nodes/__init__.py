"""The consult graph's nodes, one module per step of the design (see agent/graph.py)."""
