"""Derive the default knowledge base's source data in ``data/`` from the shared data snapshot.

Why a script instead of committing hand-made files: the shipped data must be traceable to
``shared/data`` (see ``data/PROVENANCE.md``) and reproducible bit for bit. The files are copied
unchanged (the only change is gzip -9 compression), and every gzip stream is written with
``mtime=0`` and no file name in its header, so re-running the script gives identical bytes and
identical ``SHA256SUMS``.

Usage (stdlib only)::

    python data/derive_default_data.py                  # reads ../shared/data next to the repo
    python data/derive_default_data.py --shared /work/shared/data
    python data/derive_default_data.py --check          # verify data/ against SHA256SUMS, write nothing
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "data"
DEFAULT_SHARED = REPO_ROOT.parent / "shared" / "data"
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class ShippedFile:
    """One file of shared/data that ships in data/, and whether it is gzip-compressed on the way."""

    source: str
    target: str
    expected_rows: int | None = None
    """Data rows (lines minus a TSV header); checked so a changed snapshot is noticed, not shipped."""

    @property
    def compress(self) -> bool:
        return self.target.endswith(".gz")


SHIPPED_FILES: tuple[ShippedFile, ...] = (
    ShippedFile("corpus/medquad_answered.jsonl", "corpus/medquad_answered.jsonl.gz", 16_418),
    ShippedFile("corpus/bioasq_snippets.jsonl", "corpus/bioasq_snippets.jsonl.gz", 20_585),
    ShippedFile("corpus/pubmedqa_contexts.jsonl", "corpus/pubmedqa_contexts.jsonl.gz", 3_358),
    ShippedFile("kg/unified/nodes.tsv", "kg/unified/nodes.tsv.gz", 31_036),
    ShippedFile("kg/unified/edges.tsv", "kg/unified/edges.tsv.gz", 151_652),
    ShippedFile("kg/unified/relation_types.tsv", "kg/unified/relation_types.tsv", 24),
    ShippedFile("kg/disease_ontology/do_terms.jsonl", "kg/disease_ontology/do_terms.jsonl.gz", 8_948),
    ShippedFile("PROVENANCE.md", "PROVENANCE.md"),
)

LICENSE_FILES: tuple[str, ...] = (
    # Licenses of the files shipped in data/.
    "MedQuAD_LICENSE.txt",
    "KG_license_statements.md",
    "Hetionet_source_license_table.md",
    "LabeledIn_public_domain_notice.txt",
    # The other sources of shared/data (evaluation sets, and PubMedQA used by tests/fixtures/slice).
    "PubMedQA_LICENSE.txt",
    "MedQA_LICENSE.txt",
    "MedMCQA_LICENSE.md",
    "MIRAGE_LICENSE.txt",
    "ExpertQA_LICENSE.txt",
)


def count_data_rows(path: Path) -> int:
    """Lines of a JSONL file, or lines minus the header row of a TSV file."""
    with path.open("rb") as handle:
        lines = sum(1 for _ in handle)
    return lines - 1 if path.suffix == ".tsv" else lines


def write_deterministic_gzip(source: Path, target: Path) -> None:
    """gzip -9 with a zero mtime and an empty file name, so the output depends on content only."""
    with (
        source.open("rb") as raw,
        target.open("wb") as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as packed,
    ):
        shutil.copyfileobj(raw, packed, CHUNK_BYTES)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def copy_shipped_file(shared: Path, out: Path, item: ShippedFile) -> Path:
    """Copy (or compress) one file via a temporary name, so an interrupted run leaves no half file."""
    source = shared / item.source
    if item.expected_rows is not None:
        rows = count_data_rows(source)
        if rows != item.expected_rows:
            raise SystemExit(f"{source}: {rows} rows, expected {item.expected_rows}; check PROVENANCE.md")
    target = out / item.target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    if item.compress:
        write_deterministic_gzip(source, partial)
    else:
        shutil.copyfile(source, partial)
    partial.replace(target)
    return target


def checksum_lines(out: Path) -> list[str]:
    """``sha256sum``-compatible lines for every .gz file under out, sorted by path."""
    paths = sorted(out.rglob("*.gz"))
    return [f"{sha256_of(path)}  {path.relative_to(out).as_posix()}" for path in paths]


def derive(shared: Path, out: Path) -> list[Path]:
    written = [copy_shipped_file(shared, out, item) for item in SHIPPED_FILES]
    licenses = out / "licenses"
    licenses.mkdir(parents=True, exist_ok=True)
    for name in LICENSE_FILES:
        shutil.copyfile(shared / "licenses" / name, licenses / name)
        written.append(licenses / name)
    sums = out / "SHA256SUMS"
    sums.write_text("\n".join(checksum_lines(out)) + "\n", encoding="utf-8")
    written.append(sums)
    return written


def check(out: Path) -> bool:
    """True when the .gz files under out match the SHA256SUMS file written by the last derive."""
    recorded = (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return recorded == checksum_lines(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared/data directory")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output directory (default: data/)")
    parser.add_argument("--check", action="store_true", help="only verify the .gz files against SHA256SUMS")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    if args.check:
        ok = check(out)
        sys.stdout.write(("OK" if ok else "MISMATCH") + f": {out / 'SHA256SUMS'}\n")
        return 0 if ok else 1
    shared = args.shared.resolve()
    if not (shared / "PROVENANCE.md").is_file():
        raise SystemExit(f"{shared} does not look like shared/data (no PROVENANCE.md); pass --shared")
    for path in derive(shared, out):
        sys.stdout.write(f"{path.stat().st_size:>12,}  {path.relative_to(out).as_posix()}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
