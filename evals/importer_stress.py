"""Synthetic stress files for the real-format importers (issue 21), and the probe that reads one in a fresh
process. Shared by tests/test_importers_stress.py (the streaming claim) and evals/bench_importers.py
(throughput and memory), so both read the same files and measure them the same way.

Two sizes of record. ``full=False`` is the tests' small record (a one-sentence abstract; a label with two
short sections): many records in a file that a test writes in seconds. ``full=True`` is shaped like a real
record, for the benchmark: a PubMed article with journal, six authors, a four-part abstract of ~200 words,
DOI and six MeSH headings (4.6 kB of XML, about a real article's size); a drug label with eight sections a
question asks about plus sections that are not imported (description, how supplied, package label), 3.5 kB
as openFDA JSON and 5.8 kB as SPL — real labels are often tens of kB, so compare formats by MB/s. The text
names common diseases and their drugs, so a ``kb add`` of these records links and re-summarises real topics
of the default KB, as a user's import would.

Why peak memory is read from ``VmHWM`` and not ``ru_maxrss``: on Linux a child's ``ru_maxrss`` starts at
its parent's peak (the kernel keeps the high-water mark of the memory it had before ``exec``; measured here,
a child of a 600 MB parent reported 613 MB ``ru_maxrss`` and 13 MB ``VmHWM``), so a probe started from a
large pytest process would see no growth at all. ``VmHWM`` is the peak resident set of the process's own
memory since ``exec``; ``ru_maxrss`` is only the fallback where there is no /proc.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphs.building.loaders.label_sections import BY_FIELD

REPO = Path(__file__).resolve().parent.parent
PAIRS = (
    ("type 2 diabetes", "metformin"),
    ("hypertension", "lisinopril"),
    ("asthma", "budesonide"),
    ("gout", "colchicine"),
    ("rheumatoid arthritis", "methotrexate"),
    ("atrial fibrillation", "warfarin"),
    ("major depressive disorder", "sertraline"),
    ("hyperlipidemia", "atorvastatin"),
    ("epilepsy", "levetiracetam"),
    ("migraine", "sumatriptan"),
    ("osteoporosis", "alendronate"),
    ("heart failure", "carvedilol"),
)
PROBE = """
import json, resource, sys, time
from pathlib import Path
def hwm():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
from graphs.building.loaders import LoadReport, detect_corpus_loader
path, report = Path(sys.argv[1]), LoadReport()
started = time.perf_counter()
loader = detect_corpus_loader(path, sys.argv[2] if len(sys.argv) > 2 else None)
detected = time.perf_counter()
before = hwm()
documents = chars = 0
for doc in loader.load(path, report):
    documents += 1
    chars += len(doc.text)
finished = time.perf_counter()
print(json.dumps({
    "format": loader.format, "documents": documents, "chars": chars, "issues": len(report.issues),
    "reasons": [i.reason[:200] for i in report.issues[:5]], "detect_seconds": detected - started,
    "seconds": finished - detected, "rss_before": before, "rss_peak": hwm(),
}))
"""


def probe(path: Path, fmt: str | None = None, timeout: float = 1800) -> dict[str, Any]:
    """Read ``path`` through its detected (or ``fmt``) loader in a fresh Python process: documents, text
    characters, report lines, seconds to detect and to read, and peak resident memory (bytes) before the
    read and at its end — ``rss_peak - rss_before`` is what reading the file added."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), *([fmt] if fmt else [])],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        timeout=timeout,
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


# ----- PubMed XML -----


def abstract_parts(n: int) -> list[tuple[str, str]]:
    """A four-part structured abstract (~200 words) of a trial of one of ``PAIRS``, numbered ``n``."""
    disease, drug = PAIRS[n % len(PAIRS)]
    patients, weeks, effect = 120 + n % 500, 12 + n % 40, 5 + n % 30
    return [
        (
            "BACKGROUND",
            f"{disease.capitalize()} affects millions of adults, and {drug} is widely prescribed for it, but "
            "its long-term benefit in older patients with several chronic conditions remains uncertain. We "
            f"compared {drug} with placebo in cohort {n}.",
        ),
        (
            "METHODS",
            f"In this double-blind trial at {3 + n % 40} centres, {patients} adults with {disease} were "
            f"randomly assigned to {drug} or placebo for {weeks} weeks. The primary outcome was a composite "
            "of symptom control and hospital admission; secondary outcomes included adverse events, quality "
            "of life and adherence.",
        ),
        (
            "RESULTS",
            f"Of {patients} randomised patients, {patients - n % 17} completed the study. "
            f"{drug.capitalize()} reduced the primary outcome by {effect}% compared with placebo (95% CI "
            f"{effect - 4} to {effect + 4}; P=0.0{1 + n % 9}). Adverse events were more common with {drug} "
            f"({10 + n % 20}% vs {6 + n % 9}%), mostly nausea, dizziness and headache; {n % 11} patients "
            "stopped treatment because of them.",
        ),
        (
            "CONCLUSIONS",
            f"In adults with {disease}, {drug} improved symptom control at the cost of more mild adverse "
            "events. Longer trials are needed to establish its effect on mortality.",
        ),
    ]


def pubmed_article(n: int, full: bool = False, abstract: str | None = None) -> str:
    """One ``<PubmedArticle>`` with PMID ``n``; ``abstract`` replaces the generated abstract text."""
    if not full:
        return (
            f"<PubmedArticle><MedlineCitation><PMID>{n}</PMID><Article><ArticleTitle>Trial {n} of drug X"
            '</ArticleTitle><Abstract><AbstractText Label="RESULTS">'
            + (
                abstract
                or f"Drug X lowered blood pressure by {n % 20} mmHg in {n} adults over 12 weeks; headache "
                "was the most common adverse event."
            )
            + "</AbstractText></Abstract></Article><MeshHeadingList><MeshHeading><DescriptorName "
            'MajorTopicYN="Y">Hypertension</DescriptorName></MeshHeading></MeshHeadingList>'
            "</MedlineCitation></PubmedArticle>\n"
        )
    disease, drug = PAIRS[n % len(PAIRS)]
    parts = abstract_parts(n) if abstract is None else [("RESULTS", abstract)]
    blocks = "".join(
        f'\n        <AbstractText Label="{label}" NlmCategory="{label}">{text}</AbstractText>'
        for label, text in parts
    )
    authors = "".join(
        f'\n        <Author ValidYN="Y"><LastName>Author{k}</LastName><ForeName>Name {n}</ForeName>'
        f"<Initials>N</Initials><AffiliationInfo><Affiliation>Department {k}, University Hospital {n % 97}, "
        "City, Country.</Affiliation></AffiliationInfo></Author>"
        for k in range(6)
    )
    mesh = "".join(
        f'\n      <MeshHeading><DescriptorName UI="D{k:06d}" MajorTopicYN="{"Y" if k == 0 else "N"}">{name}'
        "</DescriptorName></MeshHeading>"
        for k, name in enumerate(
            (
                disease.title(),
                drug.capitalize(),
                "Humans",
                "Adult",
                "Double-Blind Method",
                "Treatment Outcome",
            )
        )
    )
    return f"""<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">{n}</PMID>
    <Article PubModel="Print-Electronic">
      <Journal><ISSN IssnType="Electronic">1234-5678</ISSN><JournalIssue CitedMedium="Internet">
        <Volume>{n % 60}</Volume><Issue>{n % 12 + 1}</Issue><PubDate><Year>{2000 + n % 25}</Year>
        <Month>Mar</Month></PubDate></JournalIssue><Title>Journal of Clinical Trials</Title></Journal>
      <ArticleTitle>Efficacy and safety of {drug} in adults with {disease}: a randomised trial (cohort {n}).
      </ArticleTitle>
      <Pagination><MedlinePgn>{n % 900}-{n % 900 + 9}</MedlinePgn></Pagination>
      <Abstract>{blocks}
        <CopyrightInformation>Copyright {2000 + n % 25} The Authors.</CopyrightInformation>
      </Abstract>
      <AuthorList CompleteYN="Y">{authors}
      </AuthorList>
      <Language>eng</Language>
      <PublicationTypeList><PublicationType UI="D016449">Randomized Controlled Trial</PublicationType>
      </PublicationTypeList>
    </Article>
    <MeshHeadingList>{mesh}
    </MeshHeadingList>
  </MedlineCitation>
  <PubmedData><ArticleIdList><ArticleId IdType="pubmed">{n}</ArticleId>
    <ArticleId IdType="doi">10.1000/jct.{n}</ArticleId></ArticleIdList></PubmedData>
</PubmedArticle>
"""


def write_pubmed(path: Path, count: int, full: bool = False, big_abstract_chars: int = 0) -> Path:
    """A ``<PubmedArticleSet>`` of ``count`` articles (PMIDs 1…count); with ``big_abstract_chars`` the first
    article's abstract is that long instead (one record of that size, the others as usual)."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" ?>\n<PubmedArticleSet>\n')
        for n in range(1, count + 1):
            big = big_text(big_abstract_chars) if n == 1 and big_abstract_chars else None
            fh.write(pubmed_article(n, full, big))
        fh.write("</PubmedArticleSet>\n")
    return path


def big_text(chars: int) -> str:
    """``chars`` characters of distinct numbered sentences (one record of many MB)."""
    out: list[str] = []
    size = k = 0
    while size < chars:
        k += 1
        out.append(f"Observation {k}: the patient tolerated the dose without new adverse events. ")
        size += len(out[-1])
    return "".join(out)[:chars]


# ----- drug labels: openFDA JSON and DailyMed SPL -----


def label_texts(n: int) -> dict[str, str]:
    """openFDA field → text of label ``n``: eight imported sections and three that are not."""
    disease, drug = PAIRS[n % len(PAIRS)]
    dose = 5 * (1 + n % 20)
    return {
        "indications_and_usage": f"1 INDICATIONS AND USAGE {drug.upper()} tablets are indicated for the "
        f"treatment of {disease} in adults. Limitations of use: not studied under 18 years (label {n}).",
        "dosage_and_administration": "2 DOSAGE AND ADMINISTRATION The recommended starting dose is "
        f"{dose} mg once daily, increased after two weeks to {2 * dose} mg if needed. Take with food. "
        "Reduce the dose in moderate renal impairment and do not use in severe renal impairment.",
        "contraindications": f"4 CONTRAINDICATIONS Hypersensitivity to {drug} or any component of the "
        "formulation; severe hepatic impairment; concomitant use with strong CYP3A4 inhibitors.",
        "warnings_and_cautions": "5 WARNINGS AND PRECAUTIONS Hepatotoxicity: measure liver enzymes before "
        "starting and periodically. Hypotension: may occur in volume-depleted patients. Hypoglycemia with "
        "insulin or sulfonylureas: a lower dose of these may be needed.",
        "adverse_reactions": "6 ADVERSE REACTIONS The most common adverse reactions (incidence at least 5% "
        f"and greater than placebo) were nausea ({8 + n % 9}%), diarrhea, headache, dizziness and fatigue. "
        "Clinical trials experience: because clinical trials are conducted under widely varying conditions, "
        "adverse reaction rates cannot be directly compared with rates in other trials." * 2,
        "drug_interactions": "7 DRUG INTERACTIONS Strong CYP3A4 inhibitors increase exposure: avoid. "
        "Warfarin: monitor INR. Digoxin: monitor levels when starting or stopping treatment.",
        "pregnancy": "8.1 Pregnancy Risk summary: limited data in pregnant women are insufficient to show a "
        "drug-associated risk of major birth defects or miscarriage. Animal studies showed no harm at doses "
        "up to 10 times the human dose.",
        "mechanism_of_action": f"12.1 Mechanism of Action {drug.capitalize()} is a selective inhibitor of "
        "its target enzyme, lowering downstream signalling in a dose-dependent manner.",
        "description": f"11 DESCRIPTION {drug.upper()} is a white to off-white crystalline powder. " * 4,
        "how_supplied": f"16 HOW SUPPLIED Tablets {dose} mg: bottles of 30 and 90. Store at 20-25 C. " * 3,
        "package_label_principal_display_panel": f"PRINCIPAL DISPLAY PANEL NDC 0000-{n % 10000:04d}-30 "
        f"{drug.upper()} tablets {dose} mg Rx only 30 tablets",
    }


def openfda_record(n: int, full: bool = False, big_chars: int = 0) -> dict[str, Any]:
    """openFDA label record ``n``: the tests' two-section record, or a full one (``label_texts``); with
    ``big_chars`` its adverse reactions are one text of that many characters."""
    drug = PAIRS[n % len(PAIRS)][1]
    if not full:
        record: dict[str, Any] = {
            "set_id": f"set-{n}",
            "effective_time": "20240101",
            "openfda": {"brand_name": [f"Brand{n}"], "generic_name": ["METFORMIN HYDROCHLORIDE"]},
            "adverse_reactions": [f"6 ADVERSE REACTIONS Nausea, diarrhea and lactic acidosis ({n})." * 4],
            "pregnancy": ["8.1 Pregnancy Limited data with metformin in pregnant women."],
        }
    else:
        record = {
            "set_id": f"00000000-0000-4000-8000-{n:012d}",
            "id": f"10000000-0000-4000-8000-{n:012d}",
            "version": "3",
            "effective_time": f"20{10 + n % 15}0101",
            "openfda": {
                "brand_name": [f"{drug.capitalize()}{n}"],
                "generic_name": [drug.upper()],
                "manufacturer_name": [f"Maker {n % 300} Inc."],
                "route": ["ORAL"],
                "product_type": ["HUMAN PRESCRIPTION DRUG"],
                "spl_set_id": [f"00000000-0000-4000-8000-{n:012d}"],
            },
            "spl_product_data_elements": [f"{drug.capitalize()} {drug} tablet"],
            **{key: [text] for key, text in label_texts(n).items()},
        }
    if big_chars:
        record["adverse_reactions"] = [big_text(big_chars)]
    return record


def write_openfda(
    path: Path, count: int, full: bool = False, lines: bool = False, big_chars: int = 0
) -> Path:
    """``count`` labels as an openFDA download (``{"meta", "results": [...]}``, pretty-printed) or, with
    ``lines``, one label per line; ``big_chars`` makes the first label's adverse reactions that long."""
    with path.open("w", encoding="utf-8") as fh:
        if not lines:
            fh.write(json.dumps({"meta": {"results": {"total": count}}})[:-1] + ',\n "results": [\n')
        for n in range(count):
            record = openfda_record(n, full, big_chars if n == 0 else 0)
            if lines:
                fh.write(json.dumps(record) + "\n")
            else:
                fh.write(("," if n else "") + json.dumps(record, indent=1) + "\n")
        if not lines:
            fh.write("]}\n")
    return path


def _spl_section(key: str, text: str, extra: str = "") -> str:
    code = BY_FIELD[key].codes[0] if key in BY_FIELD else "34089-3"  # 34089-3: description
    return (
        f'<component><section><id root="s-{key}"/><code code="{code}" codeSystem="2.16.840.1.113883.6.1"/>'
        f"<title>{key.replace('_', ' ').upper()}</title><text><paragraph>{text}</paragraph>{extra}</text>"
        "</section></component>\n"
    )


def spl_label(n: int) -> str:
    """DailyMed SPL of label ``n`` (same texts as ``openfda_record(n, full=True)``): product data, a table
    in adverse reactions, pregnancy inside Use in Specific Populations as in a PLLR label."""
    drug = PAIRS[n % len(PAIRS)][1]
    texts = label_texts(n)
    pregnancy = texts.pop("pregnancy")
    texts.pop("package_label_principal_display_panel")
    rows = "".join(
        f"<tr><td>{reaction}</td><td>{k + 3}%</td><td>{k + 1}%</td></tr>"
        for k, reaction in enumerate(("Nausea", "Diarrhea", "Headache"))
    )
    table = f"<table><tbody><tr><th>Reaction</th><th>{drug}</th><th>Placebo</th></tr>{rows}</tbody></table>"
    sections = "".join(
        _spl_section(key, text, table if key == "adverse_reactions" else "") for key, text in texts.items()
    )
    set_id = f"00000000-0000-4000-8000-{n:012d}"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="urn:hl7-org:v3"><id root="10000000-0000-4000-8000-{n:012d}"/>
<code code="34391-3" codeSystem="2.16.840.1.113883.6.1" displayName="HUMAN PRESCRIPTION DRUG LABEL"/>
<title>{drug.upper()} tablets, for oral use</title><effectiveTime value="20{10 + n % 15}0101"/>
<setId root="{set_id}"/><versionNumber value="3"/>
<component><structuredBody>
<component><section><code code="48780-1" codeSystem="2.16.840.1.113883.6.1"/><subject><manufacturedProduct>
<manufacturedProduct><name>{drug.capitalize()}{n}</name><asEntityWithGeneric><genericMedicine>
<name>{drug}</name></genericMedicine></asEntityWithGeneric><ingredient classCode="ACTIB"><ingredientSubstance>
<name>{drug.upper()}</name><activeMoiety><activeMoiety><name>{drug.upper()}</name></activeMoiety></activeMoiety></ingredientSubstance>
</ingredient></manufacturedProduct></manufacturedProduct></subject></section></component>
{sections}<component><section><code code="43684-0" codeSystem="2.16.840.1.113883.6.1"/>
<title>8 USE IN SPECIFIC POPULATIONS</title>
<component><section><code code="42228-7" codeSystem="2.16.840.1.113883.6.1"/><title>8.1 Pregnancy</title>
<text><paragraph>{pregnancy}</paragraph></text></section></component></section></component>
</structuredBody></component></document>
"""


def write_spl_folder(folder: Path, count: int) -> Path:
    """A folder of ``count`` SPL files, one label each (as DailyMed ships them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"label_{n:06d}.xml").write_text(spl_label(n), encoding="utf-8")
    return folder


# ----- a folder of notes -----


def write_text_folder(folder: Path, count: int) -> Path:
    """``count`` notes, Markdown and HTML in turn (1.2 kB each), in sub-folders of 500."""
    for n in range(count):
        disease, drug = PAIRS[n % len(PAIRS)]
        body = [f"{label}: {text}" for label, text in abstract_parts(n)]
        sub = folder / f"part_{n // 500:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        if n % 2 == 0:
            text = f"# {disease.capitalize()}: notes on {drug} ({n})\n\n" + "\n\n".join(body) + "\n"
            (sub / f"note_{n:06d}.md").write_text(text, encoding="utf-8")
        else:
            paragraphs = "".join(f"<p>{b}</p>" for b in body)
            html = (
                f"<html><head><title>{drug.capitalize()} in {disease} ({n})</title>"
                f"<style>p{{margin:0}}</style><script>console.log({n})</script></head><body><h1>{drug}</h1>{paragraphs}"
                f"<ul><li>dose {n % 40} mg</li><li>review in {n % 12} weeks</li></ul></body></html>\n"
            )
            (sub / f"note_{n:06d}.html").write_text(html, encoding="utf-8")
    return folder
