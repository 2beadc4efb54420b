"""Does a Disease Ontology "material basis" name an organism? Only then is it shown as a pathogen.

Why: the unified KG types every target of ``has_material_basis_in`` as a Pathogen, and the answer's fact line
said so: "Genes and causes the KG links to gout: uric acid crystal deposits (pathogen; Disease Ontology)".
Of the 422 distinct targets, about half are organisms ("Borrelia burgdorferi", "Chapare virus",
"Trichophyton"); the rest are cells, tissues, deposits, deficiencies and mutations ("mast cells",
"mutation in the FGFR3 gene"), which a clinician would rightly read as wrong under "pathogen".
The test is on the name alone, because the KG carries nothing better: a word of a microbial kind
(virus, bacterium, fungus, parasite …), a Latin binomial ("Bacillus anthracis", "Treponema pallidum subsp
pallidum"), or a single capitalised genus name. A miss only loses the word "pathogen" (the fact is still
shown, as the disease's basis); a false hit would call a cell a pathogen, so the patterns stay narrow.
"""

from __future__ import annotations

import re

MICROBIAL_WORD = re.compile(
    r"(virus|viridae|virinae|phage|bacteri|bacill|coccus|cocci\b|fung|parasit|prion|myces|protozo|helminth|"
    r"worms?\b|nematod|amoeb|spirochet|rickettsi|chlamydi|mycoplasma|plasmodium|trypanosom|leishmania)",
    re.IGNORECASE,
)
BINOMIAL = re.compile(
    r"^[A-Z][a-z]{2,} (?!(?:cells?|tissues?|deficienc\w*|mutations?|inheritance|genes?|disease)\b)"
    r"(?:[a-z]{3,}|spp?\.?)\b"
)
"""Genus and species, perhaps with a strain ("Bacillus anthracis", "Clostridium botulinum A", "Salmonella
enterica subsp enterica"); the species word is lower case, unlike "Factor IX deficiency"."""
GENUS = re.compile(r"^[A-Z][a-z]{5,}$")
"""A single capitalised word of six letters or more ("Trichophyton", "Exserohilum"): in the Disease Ontology's
material-basis targets every such name is a genus; cells and tissues are written in lower case."""


def looks_like_organism(name: str) -> bool:
    """Whether a material-basis name reads as an organism (a pathogen), not a cell, tissue or defect."""
    name = " ".join(name.split())
    return bool(MICROBIAL_WORD.search(name) or BINOMIAL.match(name) or GENUS.match(name))
