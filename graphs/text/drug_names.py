"""Other names a drug goes by than the one the KG gives it: what a clinician types for a Hetionet compound.

Why: Hetionet names compounds by their DrugBank title, which is sometimes neither the international (INN)
nor the British or American approved name a clinician uses. "What are the side effects of levodopa?" linked
nothing (DrugBank DB01235 is "L-DOPA"), so the turn warned that the question "refers back" and said its
entities named no medical subject; "paracetamol", "adrenaline", "frusemide" and "glyceryl trinitrate"
linked nothing either. The KG nodes exist; only these names were missing.

The pairs are the standard INN / British Approved Name / USAN equivalences (the UK's 2003 change of British
Approved Names to the INN is the usual source of such pairs), each checked against the unified KG's node
names on 2026-11-27: the left name is absent from the KG, the right one is a compound node's name. Only
names of one active substance are listed; a brand name never is.
"""

from __future__ import annotations

OTHER_NAMES: dict[str, tuple[str, ...]] = {
    "l-dopa": ("levodopa",),
    "acetaminophen": ("paracetamol",),
    "epinephrine": ("adrenaline",),
    "norepinephrine": ("noradrenaline",),
    "furosemide": ("frusemide",),
    "lidocaine": ("lignocaine",),
    "glyburide": ("glibenclamide",),
    "cyclosporine": ("ciclosporin",),
    "isoprenaline": ("isoproterenol",),
    "cephalexin": ("cefalexin",),
    "phenobarbital": ("phenobarbitone",),
    "hydroxyurea": ("hydroxycarbamide",),
    "beclomethasone": ("beclometasone",),
    "estradiol": ("oestradiol",),
    "cholecalciferol": ("colecalciferol",),
    "torasemide": ("torsemide",),
    "guaifenesin": ("guaiphenesin",),
    "succinylcholine": ("suxamethonium",),
    "dicyclomine": ("dicycloverine",),
    "trihexyphenidyl": ("benzhexol",),
    "nitroglycerin": ("glyceryl trinitrate",),
    "methotrimeprazine": ("levomepromazine",),
    "benzylpenicillin": ("penicillin g",),
    "cromolyn": ("sodium cromoglicate", "cromoglicate"),
}
"""KG compound name (lower case) → the other names it goes by."""
DRUG_TYPES = frozenset({"Compound", "Drug"})


def other_names(name: str, entity_type: str) -> tuple[str, ...]:
    """The names a drug entity goes by besides ``name`` (empty for anything but a compound or drug)."""
    return OTHER_NAMES.get(name.lower(), ()) if entity_type in DRUG_TYPES else ()
