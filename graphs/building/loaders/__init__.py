"""Source-format loaders for the knowledge-base builder.

One module per format, each registering itself in :mod:`graphs.building.loaders.base`; importing this package
registers them all. Adding a format means adding a module here and one import line below — the other
loaders are not touched.
"""

from graphs.building.loaders import (  # noqa: F401 - imported for their registration side effect
    dailymed_spl,
    disease_ontology,
    generic_docs,
    hetionet,
    medquad,
    openfda_labels,
    pubmed_passages,
    pubmed_xml,
    text_folder,
    unified,
)
from graphs.building.loaders.base import (
    CORPUS_LOADERS,
    KG_LOADERS,
    CorpusLoader,
    KGLoader,
    LoadError,
    LoadReport,
    SourceDocument,
    detect_corpus_loader,
    detect_kg_loader,
)

__all__ = [
    "CORPUS_LOADERS",
    "KG_LOADERS",
    "CorpusLoader",
    "KGLoader",
    "LoadError",
    "LoadReport",
    "SourceDocument",
    "detect_corpus_loader",
    "detect_kg_loader",
]
