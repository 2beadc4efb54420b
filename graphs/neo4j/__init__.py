"""Neo4j as a ``GraphStore`` backend: the driver behind bounded retries and plain error messages
(``connection``), the resumable bulk load of a published build (``loader``), the store that answers the
interface's calls with parameterised Cypher (``store``), and the Maven-Central Neo4j 5.26 server used by
the tests and for development (``server/``).

May import ``graphs.model``, ``graphs.disk`` and ``graphs.stores``. (Inside this package ``import neo4j``
still means the driver: imports are absolute.)
"""
