"""Text processing over the KB's vocabulary: dictionary NER with exact offsets (``ner``), NegEx-style
negation scopes (``negation``), plural/possessive term variants (``term_variants``) and BM25 over evidence
and document questions (``lexical_index``).
Reply claims <-> yes/no questions: ``claims``, ``claim_questions``, ``claim_statements``, ``claim_words``.

Used by the builder (``f(e)`` of every passage) and by the question-side tools. May import
``graphs.model`` only.
"""
