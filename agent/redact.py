"""One redaction function for everything EviGraph shows, logs or stores: secrets never leave the process.

Why one function: a secret reaches people by many roads — ``evigraph config`` printing a checkpoint URL with
its password, an error echoing ``?password=…``, httpx logging ``http://user:SECRET@host``, an LLM error body
quoting ``Bearer sk-…`` that becomes an answer's fallback note, the trace, an HTTP or Slack reply and the
consult store. Each road calls :func:`redact` (or is covered by :func:`install_log_redaction`), so a new kind
of secret is taught in one place.

What is masked (the rest of the text is kept, so messages stay useful):
- URL userinfo passwords: ``scheme://user:SECRET@host`` → ``scheme://user:***@host``;
- password-like query or keyword parameters: ``?password=…``, ``&api_key=…``, ``token=…``, ``secret=…``;
- tokens by shape: ``Bearer …``, OpenAI-style ``sk-…``, Slack ``xox?-…`` and ``xapp-…``;
- any secret value registered with :func:`remember_secret` (the configured keys and passwords).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

MASK = "***"

_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#@:\[\]]*):(?P<secret>[^\s/?#@\[\]]*)@")
"""``scheme://user:password@`` (brackets excluded: help texts write ``user[:password]@host``)."""
_SECRET_NAMES = (
    r"password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|authorization|signature|sig"
)
_PARAM = re.compile(
    rf"(?P<head>(?:(?<=[?&;\s,({{\"'])|^)(?:[\w-]*[_.-])?(?:{_SECRET_NAMES})(?:[_.-][\w-]*)?\s*=\s*)"
    r"(?P<secret>[^&#\s'\",;)}]+)",
    re.IGNORECASE,
)
_TOKENS = re.compile(
    # Authorization header values; a digit or symbol is required so prose ("Basic Information") is kept
    r"\b(?:Bearer|Basic)\s+(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{6,}"
    r"|\bsk-[A-Za-z0-9_-]{16,}"  # OpenAI-style API keys (sk-…, sk-proj-…)
    r"|\bxox[abposre]-[A-Za-z0-9-]{6,}"  # Slack bot/user/… tokens
    r"|\bxapp-[A-Za-z0-9-]{6,}",  # Slack app-level tokens (Socket Mode)
)
MIN_REMEMBERED = 6
"""Shortest registered secret that is masked by value (shorter ones would mask ordinary words)."""

_remembered: set[str] = set()
_remembered_lock = threading.Lock()


def remember_secret(value: str | None) -> None:
    """Mask this exact value wherever it appears from now on (e.g. a configured API key of any shape)."""
    if value and len(value) >= MIN_REMEMBERED:
        with _remembered_lock:
            _remembered.add(value)


def _token_mask(match: re.Match[str]) -> str:
    word = match.group(0)
    if word.startswith(("Bearer", "Basic")):
        return f"{word.split()[0]} {MASK}"
    return word.split("-", 1)[0] + "-" + MASK


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``***`` (see the module docstring for what counts)."""
    if not text:
        return text
    with _remembered_lock:
        remembered = sorted(_remembered, key=len, reverse=True)
    for value in remembered:
        text = text.replace(value, MASK)
    text = _USERINFO.sub(lambda m: f"{m.group('head')}:{MASK}@", text)
    text = _PARAM.sub(lambda m: f"{m.group('head')}{MASK}", text)
    return _TOKENS.sub(_token_mask, text)


def redact_value(value: Any) -> Any:
    """``value`` with every string inside it (dicts, lists, tuples) redacted; other values unchanged."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(item) for item in value)
    return value


_installed = False
_install_lock = threading.Lock()


def install_log_redaction() -> None:
    """Redact every log record of this process, whichever logger or handler it goes through.

    Why a record factory and not a ``logging.Filter``: a filter on a logger does not see records of its
    child loggers (httpx, httpcore, slack_bolt, uvicorn…), and a filter on a handler misses handlers added
    later. The factory runs when any record is created: it formats the message once, masks it, and
    pre-renders a masked traceback (``exc_text``, which formatters use instead of formatting their own).
    Idempotent.
    """
    global _installed
    with _install_lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()
        logging.setLogRecordFactory(_redacting_factory(previous))
        _installed = True


def _redacting_factory(previous: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    formatter = logging.Formatter()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let the handler report it as logging always does
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact(formatter.formatException(record.exc_info))
        return record

    return factory
