"""Loader for PubMed / MEDLINE XML (``<PubmedArticleSet>`` from PubMed or E-utilities,
``<MedlineCitationSet>`` from older MEDLINE files; ``.xml.gz`` baseline files too): one document per article.

What a document holds: the article title; the abstract with its section labels kept ("BACKGROUND: …",
"RESULTS: …", one paragraph each, so passages cut at section borders); id ``pmid:<PMID>`` and the PubMed
link; the more precise of the journal issue date and the electronic article date; the abstract's copyright
line as its licence. MeSH descriptors are kept twice, for two reasons: all of them end the text
("MeSH terms: …"), so lexical search and the entity dictionary see an article's indexing even when the
abstract words it differently; the first *major-topic* descriptor is the focus, so the article's evidence
hangs on the concept the NLM indexers judged it to be about rather than on whatever entity it mentions most.
The source is pubmed_passages.SOURCE, "PubMed abstract (research literature)", as for the literature
profile's passages: every citation tells a clinician that this is a study abstract, not consumer-health
advice. The evidence label is ``general``, not ``research``: the key sentences show a ``research``
passage's sentences only when the question asks about research (agent/nodes/key_sentences.py
``UNLESS_ASKED``), so an imported abstract labelled so could never be shown as answering a treatment
question; what an abstract says (treatment, cause…) is read from its sentences, as for those passages.

Streaming: ``iterparse`` and the root cleared after each article, so a 30 000-article baseline file is read
in constant memory (tests/test_importers_stress.py checks it; evals/reports/bench_importers.md measures it
and the throughput). An article without a PMID or without an abstract (title-only records: letters,
comments) is skipped and reported; ``<DeleteCitation>`` lists of update files are reported, not applied
(``evigraph kb remove pmid:N`` removes one). Of two records with one PMID, in one file or across files, the
last wins — the incremental updater's and the builder's rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

from graphs.building.loaders.base import CorpusLoader, LoadReport, SourceDocument, register_corpus_loader
from graphs.building.loaders.pubmed_passages import SOURCE
from graphs.building.loaders.xml_stream import events, head, inline, local, root_tag

ROOTS = frozenset({"PubmedArticleSet", "MedlineCitationSet"})
RECORDS = frozenset({"PubmedArticle", "PubmedBookArticle"})
LABEL = "general"
MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
    )
}


def _date(element: ET.Element | None) -> str:
    """``YYYY[-MM[-DD]]`` of a PubDate/ArticleDate; a ``MedlineDate`` ("1998 Dec-1999 Jan") gives its year."""
    if element is None:
        return ""
    year = (element.findtext("Year") or "").strip()
    if not year:
        found = re.match(r"\s*(\d{4})", element.findtext("MedlineDate") or "")
        return found.group(1) if found else ""
    month_text = (element.findtext("Month") or "").strip()
    month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text[:3].lower(), 0)
    day = (element.findtext("Day") or "").strip()
    if not month:
        return year
    return f"{year}-{month:02d}" + (f"-{int(day):02d}" if day.isdigit() else "")


def _focus(citation: ET.Element) -> str:
    """The first MeSH descriptor marked as a major topic (on itself or on one of its qualifiers)."""
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        marks = [descriptor, *heading.iterfind("QualifierName")] if descriptor is not None else []
        if any(m is not None and m.get("MajorTopicYN") == "Y" for m in marks):
            return inline(descriptor)
    return ""


def article_document(
    record: ET.Element, ordinal: int, path: Path, report: LoadReport
) -> SourceDocument | None:
    """The document of one ``PubmedArticle`` / ``PubmedBookArticle`` / ``MedlineCitation`` element."""
    citation = record if record.tag == "MedlineCitation" else record.find("MedlineCitation")
    if citation is None:
        citation = record.find("BookDocument")
    pmid = (citation.findtext("PMID") or "").strip() if citation is not None else ""
    if citation is None or not pmid.isdigit():
        report.skip(path, 0, f"article {ordinal} has no PMID: skipped")
        return None
    article = citation.find("Article")
    holder = article if article is not None else citation
    title = inline(holder.find("ArticleTitle")) or inline(holder.find("VernacularTitle"))
    title = title or inline(holder.find("Book/BookTitle"))
    parts = []
    for block in holder.iterfind("Abstract/AbstractText"):
        text = inline(block)
        label = (block.get("Label") or "").strip()
        if text:
            parts.append(f"{label}: {text}" if label else text)
    if not parts:
        report.skip(path, 0, f"PMID {pmid} has no abstract (a title-only record): too little text to cite")
        return None
    mesh = [inline(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")]
    if mesh:
        parts.append("MeSH terms: " + "; ".join(m for m in mesh if m) + ".")
    issue = _date(holder.find("Journal/JournalIssue/PubDate")) or _date(holder.find("Book/PubDate"))
    online = _date(holder.find("ArticleDate"))
    return SourceDocument(
        id=f"pmid:{pmid}",
        title=title or f"PubMed {pmid}",
        text="\n\n".join(parts),
        source=SOURCE,
        label=LABEL,
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        date=online if len(online) > len(issue) else issue,
        license=inline(holder.find("Abstract/CopyrightInformation")),
        focus=_focus(citation),
    )


@register_corpus_loader
class PubMedXMLLoader(CorpusLoader):
    format = "pubmed"
    description = "PubMed/MEDLINE XML (<PubmedArticleSet> or <MedlineCitationSet>, .xml or .xml.gz)"

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_file() and root_tag(head(path)) in ROOTS

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        root: ET.Element | None = None
        ordinal = deleted = 0
        for event, element in events(path, report, "articles"):
            if root is None:
                root = element
            if event != "end":
                continue
            citation_set = root.tag == "MedlineCitationSet"
            if element.tag in RECORDS or (element.tag == "MedlineCitation" and citation_set):
                ordinal += 1
                doc = article_document(element, ordinal, path, report)
                root.clear()  # constant memory: the article is done with
                if doc is not None:
                    report.rows_ok += 1
                    yield doc
            elif element.tag == "DeleteCitation":
                deleted += len(element.findall("PMID"))
                root.clear()
        if deleted:
            report.skip(
                path,
                0,
                f"{deleted} PMID(s) listed under <DeleteCitation> were not removed from the KB; remove one "
                "with `evigraph kb remove pmid:<PMID>`",
            )
        if root is not None and root.tag not in ROOTS and not ordinal:
            report.skip(path, 0, f"no PubMed article in this file (its root element is <{local(root.tag)}>)")
