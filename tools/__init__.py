"""The four retrieval tools (ner_link, hypergraph_walk, reasoning_chain, evidence_rank)."""
