"""Everything about vectors: the MiniLM embedder and its two backends (``embedding``, config files in
``assets/``), the content-addressed embedding cache that makes the default build fast
(``embedding_cache``), remembered query vectors (``query_vectors``), the vector indexes — memory-mapped
matrix or Qdrant (``vector_index``) — the dense question index (``question_index``), and the evidence reader,
the same MiniLM fine-tuned as a cross-encoder that scores whether a passage answers a question (``reader``).

May import ``graphs.model`` only.
"""
