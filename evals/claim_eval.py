"""Reply-check benchmark and the claim checker's calibration (issue 22).

Each item (:mod:`evals.claim_sets`) is asked as a real offline consult with ``task="check_reply"``, and the
verdict of its claim is scored: precision of each called class (supported, contradicted), coverage (the
share called at all) and accuracy. Literature claims are checked against the literature profile KB (it holds
the BioASQ snippets and PubMedQA abstracts), the hand-written clinical claims against the default KB.

``--part calibration --calibrate`` chooses the two thresholds on the calibration claims — the pair that calls
the most claims while each called class keeps precision ≥ ``--target`` (with at least ``MIN_CALLS`` calls;
a class that never gets there is never called) — and writes them into ``data/claims/claims.json``.
``--part benchmark`` then measures held-out claims with the shipped thresholds.

Usage: python -m evals.claim_eval --part calibration --lit-kb KB --calibrate
       python -m evals.claim_eval --part benchmark --lit-kb KB --default-kb KB [--report evals/reports/…]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from agent.nodes.claim_check import RESTATED, judge, verdict_word
from evals.bench_common import publish
from evals.claim_sets import claim_set
from graphs.model.settings import Settings, load_settings
from graphs.vectors.claim_checker import SHIPPED_CLAIMS_DIR, ClaimThresholds

CALLED = ("supported", "contradicted")
MIN_CALLS = 8
GRID = np.round(np.arange(0.40, 0.995, 0.01), 2)


def deciding_claim(claims: list[Any]) -> dict[str, Any]:
    """The claim whose verdict is the reply's (``agent.nodes.claim_check.reply_status``): the first
    contradicted one, else the first one not supported, else the first; ``{}`` for none.

    Why not the first claim: an item is one labelled statement, and the splitter may cut it into two claims
    ("Some people are born with weak abdominal muscles and may be less likely to get a hernia" — the page
    says *more* likely): the label is the whole statement's, as the reply's status is."""
    if not claims:
        return {}
    contradicted = [c for c in claims if c.get("verdict") == "contradicted"]
    unsupported = [c for c in claims if c.get("verdict") != "supported"]
    return dict((contradicted or unsupported or claims)[0])


def run_items(items: list[dict[str, Any]], kb_dirs: dict[str, Path]) -> list[dict[str, Any]]:
    """Each item as a new offline consult; the scores and verdict of the claim that decides it."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        consultants = {
            name: Consultant(
                Settings(kb_dir=kb_dir, data_dir=Path(tmp), llm_enabled=False),
                checkpointer=InMemorySaver(),
                use_llm=False,
            )
            for name, kb_dir in kb_dirs.items()
        }
        for n, item in enumerate(items, 1):
            consultant = consultants.get(item["kb"])
            if consultant is None:
                continue
            started = time.perf_counter()
            result = consultant.ask(item["reply"], task="check_reply")
            table = result.answer.get("reply_check", {})
            claims = table.get("claims", [])
            first = deciding_claim(claims)
            rows.append(
                {
                    **item,
                    "claims_found": len(claims),
                    "checked_as": first.get("question", ""),
                    "negated": bool(first.get("negated")),
                    "support": float(first.get("support", 0.0)),
                    "contradiction": float(first.get("contradiction", 0.0)),
                    "verdict": first.get("verdict", "no evidence found"),
                    "decided_by": first.get("decided_by", "checker"),
                    "quote": (first.get("quotes") or [""])[0],
                    "opposite": first.get("opposite"),
                    "status": result.answer.get("status"),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
            if n % 25 == 0:
                print(f"{n}/{len(items)} items", flush=True)
    return rows


def call(row: dict[str, Any], t_support: float, t_contra: float) -> str:
    """The verdict the node would give at these thresholds (``agent.nodes.claim_check``'s own rule)."""
    limits = ClaimThresholds(supported=t_support, contradicted=t_contra)
    return verdict_word(judge(row["support"], row["contradiction"], limits), bool(row.get("negated")))


def score(rows: list[dict[str, Any]], verdicts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for name in CALLED:
        called = [r for r, v in zip(rows, verdicts, strict=True) if v == name]
        right = sum(r["expected"] == name for r in called)
        out[name] = {
            "calls": len(called),
            "right": right,
            "precision": right / len(called) if called else None,
        }
    decided = sum(v in CALLED for v in verdicts)
    out["coverage"] = decided / len(rows) if rows else 0.0
    out["accuracy"] = sum(r["expected"] == v for r, v in zip(rows, verdicts, strict=True)) / max(1, len(rows))
    out["wrong_calls"] = sum(v in CALLED and r["expected"] != v for r, v in zip(rows, verdicts, strict=True))
    return out


def _precise(rows: list[dict[str, Any]], verdicts: list[str], target: float, min_calls: int) -> bool:
    """Each called class: no calls, or at least ``min_calls`` with precision ≥ ``target``."""
    result = score(rows, verdicts)
    return all(
        result[name]["calls"] == 0
        or (result[name]["calls"] >= min_calls and result[name]["precision"] >= target)
        for name in CALLED
    )


def calibrate(rows: list[dict[str, Any]], target: float) -> dict[str, float]:
    """The threshold pair with the most calls whose called classes keep precision ≥ ``target`` overall and
    in each source (literature abstracts, consumer pages): one pair serves both kinds of evidence, so
    neither may pay for the other's coverage. A source's few calls must all be right (fewer than 3)."""
    best: tuple[int, float, float] = (-1, 1.01, 1.01)
    options = [*GRID.tolist(), 1.01]
    sources = sorted({r["source"] for r in rows})
    for ts in options:
        for tc in options:
            verdicts = [call(r, ts, tc) for r in rows]
            if not _precise(rows, verdicts, target, MIN_CALLS):
                continue
            per_source = all(
                _precise(
                    [r for r in rows if r["source"] == src],
                    [v for r, v in zip(rows, verdicts, strict=True) if r["source"] == src],
                    target,
                    1,
                )
                for src in sources
            )
            calls = sum(v in CALLED for v in verdicts)
            if per_source and calls > best[0]:
                best = (calls, ts, tc)
    calls, ts, tc = best
    verdicts = [call(r, ts, tc) for r in rows]
    # A class never called on calibration has no measured precision: it stays never called anywhere.
    return {
        "supported": ts if "supported" in verdicts else 1.01,
        "contradicted": tc if "contradicted" in verdicts else 1.01,
    }


def precision_curve(rows: list[dict[str, Any]]) -> list[str]:
    """Calls and precision of each class at a few single thresholds (the other class never called): what
    the calibration could have had."""
    out = []
    for name, key, other in (
        ("supported", "support", "contradiction"),
        ("contradicted", "contradiction", "support"),
    ):
        cells = []
        for t in (0.5, 0.6, 0.7, 0.8, 0.9):
            called = [r for r in rows if r[key] >= t and r[key] >= r[other]]
            right = sum((r["expected"] == name) != bool(r.get("negated")) for r in called)
            cells.append(f"≥ {t}: {right}/{len(called)}")
        out.append(f"- {name}: " + "; ".join(cells))
    return out


def write_thresholds(thresholds: dict[str, float], target: float, n: int) -> None:
    """Into ``claims.json``; 1.01 means no threshold reached ``target`` there: that class is never called."""
    manifest = SHIPPED_CLAIMS_DIR / "claims.json"
    raw = json.loads(manifest.read_text(encoding="utf-8"))
    raw["thresholds"] = {**thresholds, "precision_target": target, "calibration_claims": n}
    manifest.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


def report(rows: list[dict[str, Any]], thresholds: dict[str, float], part: str, skipped: int) -> str:
    verdicts = [r["verdict"] for r in rows]
    by_source: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_source[r["source"]].append(i)
    lines = [
        f"# Reply check, claim by claim — {part}",
        "",
        f"`python -m evals.claim_eval --part {part}`; thresholds supported ≥ {thresholds['supported']}, "
        f"contradicted ≥ {thresholds['contradicted']} (calibrated for precision on the calibration claims). "
        f"{skipped} questions could not be rewritten as a claim and are left out.",
        "",
        "| set | claims | supported: right / calls (precision) | contradicted: right / calls (precision) "
        "| coverage | accuracy | median s |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    groups = [*sorted(by_source.items()), ("all", list(range(len(rows))))]
    for name, idx in groups:
        part_rows = [rows[i] for i in idx]
        result = score(part_rows, [verdicts[i] for i in idx])
        cells = []
        for cls in CALLED:
            got = result[cls]
            precision = "—" if got["precision"] is None else f"{got['precision']:.3f}"
            cells.append(f"{got['right']} / {got['calls']} ({precision})")
        seconds = float(np.median([r["seconds"] for r in part_rows])) if part_rows else 0.0
        lines.append(
            f"| {name} | {len(part_rows)} | {cells[0]} | {cells[1]} | {result['coverage']:.3f} | "
            f"{result['accuracy']:.3f} | {seconds:.2f} |"
        )
    by_kg = [
        r
        for r, v in zip(rows, verdicts, strict=True)
        if r.get("decided_by") == "knowledge graph" and v in CALLED
    ]
    if by_kg:
        right = sum(r["expected"] == r["verdict"] for r in by_kg)
        lines += [
            "",
            f"Of the calls, {len(by_kg)} {'was' if len(by_kg) == 1 else 'were'} decided by a knowledge-graph "
            f"edge; {right} of them right.",
        ]
    restated = [
        r for r, v in zip(rows, verdicts, strict=True) if r.get("decided_by") == RESTATED and v in CALLED
    ]
    if restated:
        right = sum(r["expected"] == r["verdict"] for r in restated)
        by_class = ", ".join(
            f"{cls} {sum(r['expected'] == cls for r in restated if r['verdict'] == cls)}/"
            f"{sum(r['verdict'] == cls for r in restated)}"
            for cls in CALLED
        )
        lines += [
            "",
            f"Of the calls, {len(restated)} {'was' if len(restated) == 1 else 'were'} decided by a passage "
            f"sentence restating the claim (agent/nodes/claim_restatement.py); {right} of them right "
            f"({by_class}).",
        ]
        flipped = [r for r in restated if r.get("opposite")]
        if flipped:
            lines[-1] += (
                f" Of those, {len(flipped)} said one claim word the other way round (an exclusive opposite, "
                f"graphs/text/opposites.py); {sum(r['expected'] == r['verdict'] for r in flipped)} right."
            )
    expected_counts = defaultdict(int)
    for r in rows:
        expected_counts[r["expected"]] += 1
    lines += [
        "",
        "Expected verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(expected_counts.items())),
        "",
    ]
    hand = [r for r in rows if r["source"] == "hand-written"]
    if hand:
        lines += [
            "## The hand-written clinical claims",
            "",
            "| id | expected | verdict | claim | checked as |",
        ]
        lines.append("| --- | --- | --- | --- | --- |")
        for r in hand:
            mark = (
                "✓"
                if r["verdict"] == r["expected"]
                else ("·" if r["verdict"] == "no evidence found" else "✗")
            )
            kg = {"knowledge graph": " (KG)", RESTATED: " (restated)"}.get(r.get("decided_by", ""), "")
            lines.append(
                f"| {r['id']} | {r['expected']} | {mark} {r['verdict']}{kg} | {r['claim']} "
                f"| {r['checked_as']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("calibration", "benchmark"), required=True)
    parser.add_argument("--lit-kb", type=Path, required=True, help="a KB built with --profile literature")
    parser.add_argument("--default-kb", type=Path, default=None, help="the default KB (hand-written claims)")
    parser.add_argument("--calibrate", action="store_true", help="choose and write the thresholds")
    parser.add_argument("--target", type=float, default=0.92)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--rows", type=Path, default=None, help="write the per-item rows here (JSON lines)")
    parser.add_argument("--from-rows", type=Path, default=None, help="score saved rows instead of running")
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args()
    settings = load_settings()
    items, skipped = claim_set(settings, args.part)
    if args.limit:
        items = items[: args.limit]
    if args.from_rows:
        rows = [json.loads(line) for line in args.from_rows.read_text(encoding="utf-8").splitlines() if line]
    else:
        kbs = {"literature": args.lit_kb, **({"default": args.default_kb} if args.default_kb else {})}
        rows = run_items(items, kbs)
    if args.rows:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.calibrate:
        thresholds = calibrate(rows, args.target)
        write_thresholds(thresholds, args.target, len(rows))
        print(f"thresholds: {thresholds}")
        # What the consult would say at the new thresholds: the checker's verdicts move with them, those
        # decided by a restatement or a KG edge do not (the report had shown every claim undecided).
        rows = [
            r
            if r.get("decided_by", "checker") != "checker"
            else {**r, "verdict": call(r, thresholds["supported"], thresholds["contradicted"])}
            for r in rows
        ]
    else:
        raw = json.loads((SHIPPED_CLAIMS_DIR / "claims.json").read_text(encoding="utf-8"))["thresholds"]
        thresholds = {"supported": raw["supported"], "contradicted": raw["contradicted"]}
    text = report(rows, thresholds, args.part, len(skipped))
    text += f"\n## What a threshold could have given ({args.part} claims, right / calls)\n\n"
    for source in sorted({r["source"] for r in rows}):
        text += f"**{source}**\n\n" + "\n".join(precision_curve([r for r in rows if r["source"] == source]))
        text += "\n\n"
    publish(text, args.report)


if __name__ == "__main__":
    main()
