"""A published KB build on disk: the ``builds/`` directories and ``current`` pointer, the manifest and build
lock (``layout``), the per-file hashes checked at every open (``integrity``), and the SQLite tables that
are the single source of truth for records (``tables``).

Owns the on-disk format, so both the builders (``graphs.building``) and the readers (``graphs.stores``,
``graphs.neo4j``, ``graphs.kb``) go through it. May import ``graphs.model`` only.
"""
