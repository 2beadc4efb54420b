"""Every prompt EviGraph sends to an LLM, one Markdown file each, loaded by name.

Why files: a clinician or reviewer can read and change what the model is told without reading code, and a
diff of a prompt is a diff of a file. Placeholders use ``str.format`` fields (``{question}``); literal braces
in a prompt are doubled.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parent


@cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``; a clear error names the prompts that exist."""
    path = PROMPT_DIR / f"{name}.md"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPT_DIR.glob("*.md")))
        raise FileNotFoundError(f"No prompt named '{name}' in {PROMPT_DIR} (known: {known})")
    return path.read_text(encoding="utf-8")


def render_prompt(name: str, **fields: object) -> str:
    """``load_prompt(name)`` with its placeholders filled."""
    return load_prompt(name).format(**fields)
