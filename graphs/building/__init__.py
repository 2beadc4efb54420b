"""Building and publishing a knowledge base: source loaders, one module per format (``loaders/``),
chunking into evidence units (``chunking``), linking each document's focus and passages to KG entities
(``linking``), topics and eq. 6 weights of the hypergraph (``hypergraph``), embedding entities, evidence and
topics (``embed_stage``), the crash-safe builder that runs these stages and publishes (``builder``),
incremental ``kb add``/``kb remove`` (``incremental``) and the default KB built from ``data/`` on first use
(``default_kb``).

May import every other ``graphs`` sub-package except ``graphs.neo4j`` and ``graphs.kb``.
"""
