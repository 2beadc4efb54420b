"""How well the question-aspect cues (graphs/model/labels.py) read what a question asks, on a labelled set of
question wordings (evals/data/aspect_wordings.jsonl; issue 22's polish list).

    python -m evals.aspect_cues [--out evals/reports/aspect_cues.md]

A row is read correctly when its labelled aspect is among ``specific_labels_asked`` and its ``not`` label
(a differential is not "causes") is not. The set is small and was written with the new cues in mind — lay
treatment wording, differentials, mechanism of action, interactions — plus the aspects that worked before;
it guards against regressions and shows per aspect what is read, it is not an independent test of
coverage. The same rows are a test (tests/test_labels.py).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from graphs.model.labels import specific_labels_asked

REPO = Path(__file__).resolve().parent.parent
WORDINGS = REPO / "evals" / "data" / "aspect_wordings.jsonl"


def load_wordings(path: Path = WORDINGS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_correctly(row: dict[str, Any]) -> bool:
    asked = specific_labels_asked(row["question"])
    return row["asked"] in asked and row.get("not") not in asked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "aspect_cues.md")
    args = parser.parse_args(argv)
    rows = load_wordings()
    total, right = Counter(r["asked"] for r in rows), Counter(r["asked"] for r in rows if read_correctly(r))
    lines = [
        "# Question-aspect cues on labelled wordings (graphs/model/labels.py)",
        "",
        f"Command: `python -m evals.aspect_cues`. {sum(right.values())}/{len(rows)} wordings read correctly "
        "(labelled aspect found, and a differential not read as causes). The wordings were written for this "
        "change (evals/aspect_cues.py says what that means). Before the change (commit bee02b9's cues) the "
        "first 52 rows scored 31/52: treatment 7/10, diagnosis 4/9, mechanism 0/6, interactions 0/7. "
        'Rows 53-57 (2026-11-27) are a diagnosis the question only reports ("newly diagnosed gout"), '
        'which is not asked, beside two that do ask, and row 58 a differential worded "what is it likely '
        'to be?"; before DESCRIBES_A_DIAGNOSIS and that wording the same 58 rows scored 54/58. Rows 59-63 '
        '(2026-11-27, from a newcomer trial: "which blood thinner she should take and what bleeding risks '
        'to expect") are a treatment asked as "should she take", and a treatment\'s bleeding risk, which is '
        "a side effect and not a risk factor, beside one risk-factor question; before the 'should … take' "
        "cue and HARM_OF_A_TREATMENT they scored 1/5. Rows 64-67 (2026-11-27) are cases that report a test "
        "or an examination and ask something else, beside one that asks which tests show; before "
        "REPORTED_FINDINGS they scored 1/4 (it changes the reading of 482 of the 1,026 MedQA-USMLE test "
        "stems and of no question of the dev, calibration or BioASQ sets). Rows 68-70 (2026-11-27) ask about "
        '"ibuprofen while on warfarin" (interactions), beside "while pregnant", which does not; before the '
        "phrase cue they scored 1/3 (it reads three MedicationQA interaction questions of "
        "evals/data/sufficiency.jsonl as interactions, as that set labels them; their verdicts stay "
        "insufficient). Rows 73-76 (2026-11-27, from a newcomer trial: an atrial-fibrillation case "
        'asking how "he can lower his risk of stroke" was read as risk factors) ask for a risk to be '
        "lowered, which is prevention (and treatment), beside one asking what raises it; before "
        "LOWERING_A_RISK they scored 1/4 (it changes the reading of 12 of the 10,284 questions of "
        "evals/data and ../shared/data/eval, none of them in evals/data). Rows 77-79 (2026-11-28, from the "
        "bioasq-dev answers: 'What classes of drugs does Retapamulin belong to?' was headed by the drug's "
        "indications) ask a drug's class, which is what it is, beside one asking which class treats; before "
        "DRUG_CLASS they scored 1/3 (it matches 20 of the 17,628 questions of evals/data and "
        "../shared/data/eval, 4 of them in evals/data: the retapamulin question and these rows). Rows "
        "80-82 (2026-11-28, from a newcomer trial: a giant-cell-arteritis vignette ending 'What should I "
        "suspect?' was read as asking nothing) ask which conditions to suspect, consider or rule out; "
        "before that cue they scored 0/3 (it matches no other of the 18,009 questions of evals/data and "
        "../shared/data/eval). Rows 83-87 (2026-11-28, from a newcomer trial: 'What happens if high blood "
        "pressure is not treated?' led with 'ACE inhibitors block this process …') ask what happens without "
        "treatment, which is complications and outlook, beside one asking whether early treatment helps and "
        "one asking how to protect a baby (prevention); before LEFT_UNTREATED and the 'protect' cue they "
        "scored 1/5 (the two change the reading of 42 of the 10,441 questions of evals/data and "
        "../shared/data/eval, one of them in evals/data besides these rows: a bioasq-test question on an "
        "aortic haematoma 'not treated', no longer read as asking treatment).",
        "",
        "| aspect | read correctly |",
        "| --- | --- |",
        *(f"| {label} | {right[label]}/{n} |" for label, n in sorted(total.items())),
        "",
        "Misread rows:",
        "",
        *(
            f"- {r['question']} — labelled {r['asked']}, read {specific_labels_asked(r['question'])}"
            for r in rows
            if not read_correctly(r)
        ),
    ]
    if lines[-1] == "":
        lines.append("- none")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
