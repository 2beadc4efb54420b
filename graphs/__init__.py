"""The knowledge layer: what a knowledge base holds, how it is built and stored, and the graph algorithms.

Sub-packages, from the bottom up (each may import only the ones listed before it; the import contract in
``pyproject.toml`` ``[tool.importlinter]`` checks this, and ``tests/test_layout.py`` runs it):

* ``model``      — the data model (stable ids), settings and evidence labels;
* ``disk``       — a published build on disk: directories and ``current`` pointer, manifest, lock,
  integrity hashes, the SQLite tables;
* ``text``       — dictionary NER, negation, term variants, BM25;
* ``vectors``    — the embedding model and its cache, vector indexes, the question index;
* ``stores``     — the ``GraphStore`` interface and the embedded store (SQLite + CSR adjacency), KG facts;
* ``neo4j``      — the Neo4j ``GraphStore``, its connection, the bulk loader and the test server;
* ``algorithms`` — personalised PageRank, chain search, and the views that feed them from a store;
* ``building``   — source loaders, the KB builder, incremental add/remove, the default KB.

``graphs.kb`` sits on top: ``KnowledgeBase`` opens a published build with the configured stores and is the
one thing the tools take.
"""
