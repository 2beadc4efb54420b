"""Graph stores: the ``GraphStore`` interface every graph read goes through (``base``), the embedded store
— SQLite records plus CSR adjacency arrays, no server (``embedded``, ``adjacency``) — and KG facts for an
asked relation, read through the interface (``kg_facts``).

The Neo4j implementation of the same interface is its own package, ``graphs.neo4j``. May import
``graphs.model`` and ``graphs.disk``.
"""
