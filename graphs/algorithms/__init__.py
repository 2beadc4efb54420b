"""Graph algorithms over integer node ids, pure numpy/scipy: seeded walks and personalised PageRank by local
push on the entity↔topic graph (``ppr``), reasoning chains and shortest paths by meet-in-the-middle on the
typed graph (``paths``), and the views that feed both from a ``GraphStore`` — CSR arrays in memory for the
embedded store, batched fetches for any other (``views``).

May import ``graphs.model``, ``graphs.disk`` and ``graphs.stores``.
"""
