"""Loader for DailyMed drug labels: HL7 v3 Structured Product Labeling XML (``<document
xmlns="urn:hl7-org:v3">``, one label per file; ``.xml.gz`` too). Each section becomes its own document.

Why one document per section: a clinician asks "what are the side effects of haloperidol?", and the answer
is the label's Adverse Reactions section — so that section must be an evidence unit labelled ``side
effects``, not one paragraph among forty of a whole label. The section's LOINC code picks its kind, title
and evidence label from the shared table (label_sections.py). A sub-section travels with its parent
("Cardiovascular Effects" inside Adverse Reactions) unless it is itself a kind of its own: Pregnancy inside
Use in Specific Populations, or an old label's unclassified "Usage in Pregnancy" inside Warnings, becomes a
``pregnancy`` document. Sections of kinds no question asks for (package label, how supplied, description)
are not imported.

The drug is named from the label's product data (product name, generic name, active moieties): the title is
"<Drug> — <Section>", the focus the active moiety (what the knowledge graph calls the drug), the link the
label's DailyMed page (by set id), the date the label's effective time. Document ids are
``label:<set id>:<section>``, the same as the openFDA importer's, so a newer version of a label replaces the
older one's sections.

Streaming: top-level sections are processed and cleared as they end; a file that breaks off keeps the
sections read before the break (and says where it broke). A label with no section of a known kind (an
indexing or listing SPL) is skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

from graphs.building.loaders.base import CorpusLoader, LoadReport, SourceDocument, register_corpus_loader
from graphs.building.loaders.label_sections import (
    BY_CODE,
    NO_SECTIONS,
    UNCLASSIFIED_CODE,
    LabelDocuments,
    LabelSection,
    drug_identity,
    section_for_title,
)
from graphs.building.loaders.xml_stream import events, head, inline, local, root_tag

HL7 = "urn:hl7-org:v3"
NS = "{" + HL7 + "}"
SOURCE = "DailyMed"
LICENSE = "FDA drug label (Structured Product Labeling) from DailyMed, U.S. National Library of Medicine"

Unit = tuple[LabelSection, str, list[str]]
"""A section being collected: its kind, its own title when the kind came from the title, its text lines."""


def text_lines(text: ET.Element) -> list[str]:
    """Plain lines of an SPL ``<text>`` block: paragraphs, ``- `` list items, table rows with `` | ``."""
    lines = [" ".join((text.text or "").split())]
    for child in text:
        name = local(child.tag)
        if name == "list":
            lines += ["- " + inline(item) for item in child.iterfind(f"{NS}item")]
        elif name == "table":
            for row in child.iter(f"{NS}tr"):
                cells = [inline(cell) for cell in row if local(cell.tag) in ("td", "th")]
                lines.append(" | ".join(c for c in cells if c))
        else:
            lines.append(inline(child))
        lines.append(" ".join((child.tail or "").split()))
    return [line for line in lines if line.strip("- |")]


def collect(section: ET.Element, current: list[str] | None, units: list[Unit]) -> None:
    """Add ``section``'s text to the unit it belongs to, opening a new unit for a section of a known kind."""
    code_element = section.find(f"{NS}code")
    code = code_element.get("code", "") if code_element is not None else ""
    title = inline(section.find(f"{NS}title"))
    kind = BY_CODE.get(code)
    own_title = ""
    if kind is None and code == UNCLASSIFIED_CODE:
        kind = section_for_title(title)
        own_title = title if kind else ""
    target = current
    if kind is not None:
        target = []
        units.append((kind, own_title, target))
    elif target is not None and title:
        target.append(title)  # a sub-section's heading stays with its text
    text = section.find(f"{NS}text")
    if target is not None and text is not None:
        target.extend(text_lines(text))
    for child in section.iterfind(f"{NS}component/{NS}section"):
        collect(child, target, units)


def product_names(section: ET.Element) -> tuple[str, str, tuple[str, ...]] | None:
    """(product name, generic name, active moieties) of the first product a listing section describes."""
    product = section.find(f".//{NS}manufacturedProduct/{NS}manufacturedProduct")
    if product is None:
        return None
    moieties = (
        inline(m)
        for m in product.iterfind(
            f"{NS}ingredient/{NS}ingredientSubstance/{NS}activeMoiety/{NS}activeMoiety/{NS}name"
        )
    )
    return (
        inline(product.find(f"{NS}name")),
        inline(product.find(f"{NS}asEntityWithGeneric/{NS}genericMedicine/{NS}name")),
        tuple(dict.fromkeys(m for m in moieties if m)),
    )


@register_corpus_loader
class DailyMedSPLLoader(CorpusLoader):
    format = "dailymed"
    description = "DailyMed drug label: SPL XML (<document xmlns='urn:hl7-org:v3'>), one section per document"

    @classmethod
    def detect(cls, path: Path) -> bool:
        data = head(path)
        return path.is_file() and root_tag(data) == "document" and HL7.encode() in data

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        header: dict[str, str] = {}
        names: tuple[str, str, tuple[str, ...]] | None = None
        units: list[Unit] = []
        depth = open_sections = 0
        for event, element in events(path, report, "sections"):
            name = local(element.tag)
            if event == "start":
                depth += 1
                if name == "section":
                    open_sections += 1
                continue
            depth -= 1
            if depth == 1 and name in ("id", "setId", "effectiveTime", "title"):
                header[name] = element.get("root") or element.get("value") or inline(element)
            elif name == "section":
                open_sections -= 1
                if open_sections == 0:  # a top-level section is complete: read it, then drop it
                    names = names or product_names(element)
                    collect(element, None, units)
                    element.clear()
        yield from self._documents(path, header, names, units, report)

    def _documents(
        self,
        path: Path,
        header: dict[str, str],
        names: tuple[str, str, tuple[str, ...]] | None,
        units: list[Unit],
        report: LoadReport,
    ) -> Iterator[SourceDocument]:
        set_id = header.get("setId") or header.get("id") or ""
        if not set_id:
            report.skip(path, 0, "not a drug label: no <setId> in this SPL document")
            return
        texts = [(kind, own, "\n".join(lines).strip()) for kind, own, lines in units]
        texts = [t for t in texts if t[2]]
        if not texts:
            report.skip(
                path,
                0,
                f"label {set_id} {NO_SECTIONS}: an indexing or listing SPL? skipped",
            )
            return
        title = header.get("title", "")
        brand, generic, moieties = names or ((title if len(title) <= 60 else ""), "", ())
        label = LabelDocuments(
            ident=set_id,
            set_id=set_id,
            drug=drug_identity(brand, generic, moieties),
            date=header.get("effectiveTime", ""),
            source=SOURCE,
            license=LICENSE,
        )
        for kind, own_title, text in texts:
            report.rows_ok += 1
            yield label.document(kind, text, own_title)
