"""Building and publishing a knowledge base: source loaders, one module per format (``loaders/``),
chunking into evidence units (``chunking``), topics and eq. 6 weights of the hypergraph (``hypergraph``),
the crash-safe builder (``builder``), incremental ``kb add``/``kb remove`` (``incremental``) and the
default KB built from ``data/`` on first use (``default_kb``).

May import every other ``graphs`` sub-package except ``graphs.neo4j`` and ``graphs.kb``.
"""
