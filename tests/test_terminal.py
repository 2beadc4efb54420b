"""The terminal front end, used as a person would: ``evigraph chat`` driven in a pseudo-terminal.

Every test runs the real CLI (``python -m agent.frontends.cli``) against the real slice KB, in offline
mode, with a
private data dir (consult checkpoint, chat history). Assertions are on what the person sees — prompt, live
steps, numbered citations, command output — and on the files the chat writes. No timing is asserted:
timeouts are only there so a hung session fails instead of blocking the run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

REPO = Path(__file__).resolve().parent.parent
PROMPT = re.compile(r"evigraph \[(new|[0-9a-f]{10})\]> ")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
TIMEOUT = 240  # a loaded machine may need long for the first turn; never asserted on
LOST_SIGNAL_WAIT = 20  # how long a Ctrl-C at the prompt may go unanswered before it is pressed again
Q1 = "What is the treatment for type 2 diabetes?"
Q2 = "What are the symptoms of hemochromatosis?"
Q3 = "What causes breast cancer?"


def plain(text: str) -> str:
    return ANSI.sub("", text)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private data dir for the module: the resume test continues the consult of the first test."""
    return tmp_path_factory.mktemp("evigraph-data")


def cli_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVIGRAPH_", "OPENAI_"))}
    env.update(EVIGRAPH_DATA_DIR=str(data_dir), TERM="xterm-256color", PYTHONPATH=str(REPO), LC_ALL="C.UTF-8")
    env["EVIGRAPH_TEST_HOLD_FILE"] = str(data_dir / "hold-turn")  # see the Ctrl-C part of the first test
    env.pop("NO_COLOR", None)
    return env


class Chat:
    """A person at a terminal running ``evigraph chat``: type a line, read what appears until the prompt."""

    def __init__(self, kb_root: Path, data_dir: Path, *extra: str, ignore_sigint: bool = False) -> None:
        args = ["-m", "agent.frontends.cli", "chat", "--offline", "--kb-dir", str(kb_root), *extra]
        self.child = pexpect.spawn(
            sys.executable,
            args,
            cwd=str(REPO),
            env=cli_env(data_dir),
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(50, 120),
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None,
        )
        self.banner = self.wait_prompt()

    @property
    def consult(self) -> str:
        match = self.child.match
        assert isinstance(match, re.Match)
        return match.group(1)

    def wait_prompt(self) -> str:
        self.child.expect(PROMPT)
        return plain(self.child.before or "")

    def say(self, line: str) -> str:
        """Type ``line``, press Enter, return everything shown until the next prompt (ANSI removed)."""
        self.child.sendline(line)
        return self.wait_prompt()

    def ctrl_c_at_prompt(self, reaction: object) -> None:
        """Press Ctrl-C at the prompt and wait for ``reaction``; press it once more if it was not seen.

        Why twice may be needed: CPython's readline prints the prompt, then sleeps in ``select``; a SIGINT
        landing in between (a test types within milliseconds of the prompt) is only acted on at the next
        signal or keypress. A person presses Ctrl-C again; so does this, and says so with a warning. The
        second press does not count twice: the pending one is handled with it (one KeyboardInterrupt).
        """
        self.child.send("\x03")
        if self.child.expect([reaction, pexpect.TIMEOUT], timeout=LOST_SIGNAL_WAIT) == 1:
            warnings.warn(
                "a Ctrl-C at the prompt went unanswered (readline race): pressed again", stacklevel=1
            )
            self.child.send("\x03")
            self.child.expect(reaction)

    def exit_code(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus is not None
        return self.child.exitstatus


@pytest.fixture()
def chat_factory(slice_kb_root: Path, data_dir: Path) -> Iterator[list[Chat]]:
    sessions: list[Chat] = []
    yield sessions
    for s in sessions:
        if s.child.isalive():
            s.child.terminate(force=True)


def test_chat_session_questions_commands_export_and_cancel(
    slice_kb_root: Path, data_dir: Path, chat_factory: list[Chat], tmp_path: Path
) -> None:
    chat = Chat(slice_kb_root, data_dir)
    chat_factory.append(chat)
    assert "EviGraph chat" in chat.banner and "offline mode" in chat.banner
    assert chat.consult == "new"

    shown = chat.say(Q1)
    first_id = chat.consult
    assert first_id != "new"
    assert "steps" in shown and "✓ turn 1 · task clinical" in shown and "✓ answer:" in shown
    # The direct answer cites KG facts first, so passage citations need not be [1].
    assert "[1]" in shown and "citations" in shown and re.search(r"\[\d+\] E:", shown)
    assert f"consult {first_id}" in shown and "LLM calls 0" in shown
    assert "Decision support only" in shown

    sources = chat.say("/sources")
    assert "sources (" in sources and "MedQuAD" in sources and "http" in sources

    more = chat.say("/more")  # the last answer in full: every passage, snippets and the cited sources
    assert "sources cited (" in more and re.search(r"\[\d+\] E:", more) and "Decision support only" in more

    trace = chat.say("/trace")
    for step in ("start_turn", "ner_link", "evidence_rank", "sufficiency", "answer"):
        assert step in trace
    assert "fallback" in trace

    chat.child.send("\x1b[A")  # Up arrow: readline recalls /trace from this session's history
    again = chat.say("")
    assert "trace of the last turn" in again and "start_turn" in again

    shown = chat.say(Q2)
    assert chat.consult == first_id
    assert "✓ turn 2" in shown and "[1]" in shown

    md, js = tmp_path / "consult.md", tmp_path / "consult.json"
    assert f"Exported consult {first_id} (2 turn(s))" in chat.say(f"/export {md}")
    assert "2 turn(s)" in chat.say(f"/export {js}")
    text = md.read_text(encoding="utf-8")
    assert f"# EviGraph consult {first_id}" in text
    assert "## Turn 1: " + Q1 in text and "## Turn 2: " + Q2 in text
    assert "### Citations" in text and ". `E:" in text and "### Sources" in text and "KB slice-" in text
    exported = json.loads(js.read_text(encoding="utf-8"))
    assert exported["consult_id"] == first_id
    assert [t["question"] for t in exported["turns"]] == [Q1, Q2]
    for turn in exported["turns"]:
        assert (
            turn["answer"]["text"] and turn["answer"]["sources"] and turn["kb_version"].startswith("slice-")
        )
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file behind
    assert "use .md or .json" in chat.say(f"/export {tmp_path / 'consult.pdf'}")
    assert "does not exist" in chat.say(f"/export {tmp_path / 'missing' / 'x.md'}")

    assert "New consult" in chat.say("/new")
    assert chat.consult == "new"
    chat.say(Q3)
    second_id = chat.consult
    assert second_id not in ("new", first_id)

    assert "No consult 'nope0000'" in chat.say("/resume nope0000")
    assert chat.consult == second_id  # still in the same consult

    resumed = chat.say(f"/resume {first_id}")
    assert chat.consult == first_id
    assert "2 turn(s)" in resumed and Q1 in resumed and Q2 in resumed
    assert "sources (" in chat.say("/sources")  # the resumed consult's last answer

    listing = chat.say("/resume")
    assert first_id in listing and second_id in listing and Q3 in listing

    unknown = chat.say("/bogus")
    assert "Unknown command /bogus" in unknown and "/help" in unknown
    help_text = chat.say("/help")
    for cmd in ("/sources", "/trace", "/new", "/resume ID", "/export FILE", "/quit"):
        assert cmd in help_text

    # Ctrl-C while a turn runs cancels the turn, not the session. The hold file keeps the turn running
    # until the Ctrl-C arrives (a real turn takes ~0.2 s: a Ctrl-C sent after it ends would cancel nothing).
    hold = data_dir / "hold-turn"
    hold.touch()
    try:  # a failure here must not leave the hold file to stall the next test's turns
        chat.child.sendline("What is the outlook for breast cancer?")
        chat.child.expect("working")
        chat.child.send("\x03")
        chat.child.expect("cancelled")
        chat.wait_prompt()
    finally:
        hold.unlink(missing_ok=True)
    assert chat.consult == first_id
    shown = chat.say("/trace")  # the session still answers commands
    assert "trace of the last turn" in shown

    chat.child.sendline("/quit")
    assert chat.exit_code() == 0
    history = (data_dir / "chat_history").read_text(encoding="utf-8")
    assert Q1 in history and "/export" in history


def test_chat_resume_flag_continues_a_consult(
    slice_kb_root: Path, data_dir: Path, chat_factory: list[Chat]
) -> None:
    rows = json.loads(
        subprocess.run(
            [sys.executable, "-m", "agent.frontends.cli", "consults", "--json"],
            cwd=REPO,
            env=cli_env(data_dir),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    first = next(r for r in rows if r["first_question"] == Q1)
    assert first["turns"] >= 2

    chat = Chat(slice_kb_root, data_dir, "--resume", first["consult_id"])
    chat_factory.append(chat)
    assert chat.consult == first["consult_id"]
    # The earlier turns are replayed: each question with a one-line recap of its answer.
    replay = chat.banner.split("Resumed consult", 1)[1]
    assert f"1. {Q1}" in replay and f"2. {Q2}" in replay
    assert len(re.findall(r"→ (answered|insufficient) · \S", replay)) == first["turns"]
    shown = chat.say("What is the outlook?")
    assert chat.consult == first["consult_id"] and f"✓ turn {first['turns'] + 1}" in shown

    chat.ctrl_c_at_prompt("Ctrl-C again")  # a hint, the session stays
    chat.wait_prompt()
    chat.ctrl_c_at_prompt(pexpect.EOF)  # a second one in a row leaves
    assert chat.exit_code() == 0


def test_ctrl_c_works_even_when_the_chat_was_started_with_sigint_ignored(
    slice_kb_root: Path, data_dir: Path, chat_factory: list[Chat]
) -> None:
    """Started from a backgrounded script, a process inherits SIGINT ignored; the chat takes it back."""
    chat = Chat(slice_kb_root, data_dir, ignore_sigint=True)
    chat_factory.append(chat)
    chat.ctrl_c_at_prompt("Ctrl-C again")
    chat.wait_prompt()
    chat.ctrl_c_at_prompt(pexpect.EOF)
    assert chat.exit_code() == 0


def test_chat_ctrl_d_leaves_and_unknown_resume_is_a_clear_error(
    slice_kb_root: Path, data_dir: Path, chat_factory: list[Chat]
) -> None:
    chat = Chat(slice_kb_root, data_dir)
    chat_factory.append(chat)
    chat.child.sendeof()
    chat.child.expect("Bye")
    assert chat.exit_code() == 0

    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent.frontends.cli",
            "chat",
            "--offline",
            "--kb-dir",
            str(slice_kb_root),
            "--resume",
            "nope0000",
        ],
        cwd=REPO,
        env=cli_env(data_dir),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2
    assert "No consult 'nope0000'" in run.stderr and "Traceback" not in run.stderr + run.stdout


def test_consults_lists_recent_ids_with_first_question(slice_kb_root: Path, tmp_path: Path) -> None:
    env = {**cli_env(tmp_path), "COLUMNS": "160"}
    empty = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "consults"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert empty.returncode == 0 and "No consults yet" in empty.stdout
    asked = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent.frontends.cli",
            "ask",
            "--offline",
            "--json",
            "--kb-dir",
            str(slice_kb_root),
            Q1,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert payload["answer"]["text"] and payload["answer"]["sources"]
    assert payload["answer"]["kb_version"].startswith("slice-")
    listed = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "consults"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0
    assert payload["consult_id"] in listed.stdout and "type 2 diabetes" in listed.stdout


def test_ask_with_an_empty_question_is_a_clear_error(slice_kb_root: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "ask", "--offline", "--kb-dir", str(slice_kb_root), ""],
        cwd=REPO,
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "The question is empty" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_eval_without_the_eval_extra_says_what_to_install(tmp_path: Path) -> None:
    # sys.modules[name] = None is how Python itself marks a module as unavailable: find_spec returns None.
    hide = "import sys; sys.modules['matplotlib'] = None; from agent.frontends.cli import main; main()"
    run = subprocess.run(
        [sys.executable, "-c", hide, "eval", "retrieval", "--dataset", "medquad-consumer-ci"],
        cwd=REPO,
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    said = " ".join(run.stderr.split())
    assert "need the eval extra (matplotlib missing): pip install -e '.[eval]'" in said
    assert "Traceback" not in run.stderr + run.stdout
