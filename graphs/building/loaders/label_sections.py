"""Drug-label sections → evidence labels: the one table both drug-label importers read.

Why one table: a DailyMed SPL names a section by its LOINC code, an openFDA record by a field name, and the
two describe the same label. Keeping code, field, title and evidence label on one row means an SPL and the
openFDA record of the same set id give the same document ids and the same labels, so adding both keeps the
last (``kb add``'s rule) instead of doubling every section. Codes are those of FDA's SPL section list
(``FDA/openfda`` ``openfda/spl/data/sections.csv``) plus the 2015 pregnancy-and-lactation codes
(77290-5 lactation).

Why these labels: a section becomes the aspect a clinician asks about — adverse reactions, warnings and
the boxed warning answer "side effects"/"is it safe"; indications, dosage and an OTC "purpose" answer
"treatment" (the treatment cues include dose and dosage); pregnancy, lactation, nursing mothers and labor
answer "pregnancy". Sections no question asks for (how supplied, package label, description, storage,
inactive ingredients) are left out: their text would only crowd the passages a question retrieves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphs.building.loaders.base import SourceDocument
from graphs.model.labels import mentions_label

UNCLASSIFIED_CODE = "42229-5"
"""SPL "unclassified section": old labels put e.g. "Usage in Pregnancy" under Warnings with this code."""

DAILYMED_URL = "https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid={}"


@dataclass(frozen=True)
class LabelSection:
    """One kind of label section: its openFDA field (also the document-id suffix), LOINC codes, title and
    the evidence label it answers."""

    key: str
    codes: tuple[str, ...]
    title: str
    label: str


SECTIONS: tuple[LabelSection, ...] = (
    LabelSection("boxed_warning", ("34066-1",), "Boxed warning", "side effects"),
    LabelSection("indications_and_usage", ("34067-9",), "Indications and usage", "treatment"),
    LabelSection("dosage_and_administration", ("34068-7",), "Dosage and administration", "treatment"),
    LabelSection("contraindications", ("34070-3",), "Contraindications", "contraindications"),
    LabelSection("warnings_and_cautions", ("43685-7",), "Warnings and precautions", "side effects"),
    LabelSection("warnings", ("34071-1",), "Warnings", "side effects"),
    LabelSection("precautions", ("42232-9",), "Precautions", "side effects"),
    LabelSection("adverse_reactions", ("34084-4",), "Adverse reactions", "side effects"),
    LabelSection("overdosage", ("34088-5",), "Overdosage", "side effects"),
    LabelSection("drug_interactions", ("34073-7",), "Drug interactions", "interactions"),
    LabelSection(
        "drug_and_or_laboratory_test_interactions",
        ("34074-5",),
        "Drug and laboratory test interactions",
        "interactions",
    ),
    LabelSection("pregnancy", ("42228-7",), "Pregnancy", "pregnancy"),
    LabelSection("teratogenic_effects", ("34077-8",), "Teratogenic effects", "pregnancy"),
    LabelSection("nonteratogenic_effects", ("34078-6",), "Nonteratogenic effects", "pregnancy"),
    LabelSection("labor_and_delivery", ("34079-4",), "Labor and delivery", "pregnancy"),
    LabelSection("nursing_mothers", ("34080-2",), "Nursing mothers", "pregnancy"),
    LabelSection("lactation", ("77290-5",), "Lactation", "pregnancy"),
    LabelSection("pregnancy_or_breast_feeding", ("53414-9",), "Pregnancy or breast-feeding", "pregnancy"),
    LabelSection("mechanism_of_action", ("43679-0",), "Mechanism of action", "mechanism"),
    LabelSection("pharmacodynamics", ("43681-6",), "Pharmacodynamics", "mechanism"),
    LabelSection("clinical_pharmacology", ("34090-1",), "Clinical pharmacology", "mechanism"),
    LabelSection("information_for_patients", ("34076-0",), "Information for patients", "overview"),
    LabelSection("use_in_specific_populations", ("43684-0",), "Use in specific populations", "overview"),
    # Efficacy results answer "does it work for X?": labelled "research", its sentences were hidden unless
    # research was asked (agent/nodes/key_sentences.py UNLESS_ASKED is for "what research is being done").
    LabelSection("clinical_studies", ("34092-7",), "Clinical studies", "treatment"),
    # OTC "Drug Facts" sections
    LabelSection("purpose", ("55105-1",), "Purpose", "treatment"),
    LabelSection("do_not_use", ("50570-1",), "Do not use", "contraindications"),
    LabelSection("ask_doctor", ("50569-3",), "Ask a doctor before use", "contraindications"),
    LabelSection(
        "ask_doctor_or_pharmacist", ("50568-5",), "Ask a doctor or pharmacist before use", "interactions"
    ),
    LabelSection("when_using", ("50567-7",), "When using this product", "side effects"),
    LabelSection("stop_use", ("50566-9",), "Stop use and ask a doctor", "side effects"),
)

BY_CODE: dict[str, LabelSection] = {code: s for s in SECTIONS for code in s.codes}
BY_FIELD: dict[str, LabelSection] = {s.key: s for s in SECTIONS}

TITLE_LABELS = {"pregnancy": BY_FIELD["pregnancy"], "interactions": BY_FIELD["drug_interactions"]}
"""Unclassified SPL sections recognised by their title (only kinds whose title is unambiguous)."""


def section_for_title(title: str) -> LabelSection | None:
    """The section kind an *unclassified* SPL section's title names ("Usage in Pregnancy"), if any."""
    for label, section in TITLE_LABELS.items():
        if mentions_label(title, label):
            return section
    return None


SALT_WORDS = frozenset(
    {
        *("hydrochloride", "hcl", "hydrobromide", "sodium", "disodium", "potassium", "calcium", "magnesium"),
        *("sulfate", "sulphate", "mesylate", "dimesylate", "maleate", "tartrate", "bitartrate", "besylate"),
        *("citrate", "acetate", "phosphate", "succinate", "fumarate", "hemifumarate", "bromide", "chloride"),
        *("nitrate", "mononitrate", "hyclate", "monohydrate", "dihydrate", "trihydrate", "sesquihydrate"),
        *("hemihydrate", "anhydrous", "propionate", "dipropionate", "valerate", "lactate", "gluconate"),
        *("carbonate", "xinafoate", "pamoate", "decanoate", "tromethamine"),
    }
)
"""Salt and hydrate words dropped to get the active moiety a knowledge graph names ("atorvastatin")."""


def strip_salt(name: str) -> str:
    """``"LISDEXAMFETAMINE DIMESYLATE"`` → ``"lisdexamfetamine"``; a name that is only salt words
    ("potassium chloride") is kept whole."""
    words = name.lower().split()
    kept = [w for w in words if w.strip(",.") not in SALT_WORDS]
    return " ".join(kept or words)


def _display_case(name: str) -> str:
    """Brand names come in capitals from openFDA ("LIPITOR"); show them as a word."""
    return name.title() if name.isupper() else name


@dataclass(frozen=True)
class DrugIdentity:
    """How a label's drug is shown (``display``) and linked (``focus`` + ``synonyms`` → keyword entity)."""

    display: str
    focus: str
    synonyms: tuple[str, ...]


def drug_identity(brand: str, generic: str, moieties: tuple[str, ...] = ()) -> DrugIdentity:
    """The display name and the linking names of a labelled drug.

    The focus is the active moiety (or the generic name without its salt), which is what a KG node is
    called ("Haloperidol", "Atorvastatin"); brand, full generic and each ingredient of a combination are
    synonyms, so the linker can still find the node when the moiety is unknown to it."""
    brand = " ".join(brand.split())
    generic = " ".join(generic.split())
    parts = [p for p in re.split(r",|\band\b|/", generic.lower()) if p.strip()]
    components = [strip_salt(p) for p in parts]
    moiety_names = [m.lower() for m in moieties if m.strip()]
    focus = (moiety_names[0] if len(moiety_names) == 1 else "") or (
        components[0] if len(components) == 1 else generic.lower()
    )
    focus = focus or brand.lower()
    seen = {focus}
    synonyms = []
    for name in (generic.lower(), *components, *moiety_names, brand):
        if name and name.lower() not in seen:
            seen.add(name.lower())
            synonyms.append(name)
    shown_generic = generic.lower() or focus
    shown_brand = _display_case(brand)
    if shown_brand and shown_brand.lower() != shown_generic:
        display = f"{shown_brand} ({shown_generic})" if shown_generic else shown_brand
    else:
        display = shown_generic[:1].upper() + shown_generic[1:]
    return DrugIdentity(display=display or "Unnamed drug", focus=focus, synonyms=tuple(synonyms))


def label_date(value: str) -> str:
    """SPL/openFDA ``effective_time`` (``20150401``) as an ISO date; anything else unchanged."""
    value = value.strip()
    if re.fullmatch(r"\d{8}", value):
        return f"{value[:4]}-{value[4:6]}-{value[6:]}"
    return value


@dataclass
class LabelDocuments:
    """Makes the documents of one label's sections.

    Ids are ``label:<set id>:<section key>``, with ``-2``, ``-3`` … when a label has the same kind of
    section twice (two "Warnings" sections stay two documents). ``ident`` is the set id, or the label's
    version id when a record has no set id (then there is no DailyMed link either)."""

    ident: str
    set_id: str
    drug: DrugIdentity
    date: str
    source: str
    license: str
    seen: dict[str, int] = field(default_factory=dict)

    def document(self, kind: LabelSection, text: str, own_title: str = "") -> SourceDocument:
        n = self.seen.get(kind.key, 0) + 1
        self.seen[kind.key] = n
        return SourceDocument(
            id=f"label:{self.ident}:{kind.key}" + (f"-{n}" if n > 1 else ""),
            title=f"{self.drug.display} — {own_title or kind.title}",
            text=text,
            source=self.source,
            label=kind.label,
            url=DAILYMED_URL.format(self.set_id) if self.set_id else "",
            date=label_date(self.date),
            license=self.license,
            focus=self.drug.focus,
            focus_synonyms=self.drug.synonyms,
            focus_type="Drug",
        )


NO_SECTIONS = (
    "has no section EviGraph reads (indications, dosage, contraindications, warnings, adverse reactions, "
    "interactions, pregnancy …)"
)
