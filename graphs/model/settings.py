"""EviGraph's settings, in one place.

Why here: every layer (agent, tools, graphs) reads settings, and imports flow agent → tools → graphs, so
the lowest layer owns them. Values come from, in increasing priority: defaults, a ``.env`` file in the
working directory, environment variables (``EVIGRAPH_*``; ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` are
accepted as fallbacks for the LLM), and explicit keyword arguments (CLI flags). An explicit value is never
silently overridden by the environment.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

EmbeddingBackend = Literal["onnx", "sentence-transformers"]


def _default_data_dir() -> Path:
    return Path(user_data_dir("evigraph", appauthor=False))


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


class Settings(BaseSettings):
    """Effective configuration of one EviGraph process."""

    model_config = SettingsConfigDict(
        env_prefix="EVIGRAPH_", env_file=".env", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(
        default_factory=_default_data_dir, description="Root of everything EviGraph writes."
    )
    kb_dir: Path | None = Field(
        default=None, description="Knowledge-base root (holds builds/ and the `current` pointer)."
    )
    source_data_dir: Path = Field(
        default_factory=lambda: _repo_root() / "data",
        description="Source data of the default knowledge base (shipped in the project's data/).",
    )
    shared_data_dir: Path = Field(
        default_factory=lambda: _repo_root().parent / "shared" / "data",
        description="Full evaluation data (../shared/data in a development checkout).",
    )
    qdrant_url: str | None = Field(
        default=None,
        description="Qdrant server URL for the vectors; unset = the backend chosen at build time (the "
        "memory-mapped matrix by default, Qdrant local mode with `kb build --vectors qdrant-local`).",
    )
    qdrant_api_key: SecretStr | None = None
    graph_backend: Literal["embedded", "neo4j"] = "embedded"
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    llm_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("EVIGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL", "llm_base_url"),
    )
    llm_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("EVIGRAPH_LLM_API_KEY", "OPENAI_API_KEY", "llm_api_key")
    )
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 2
    llm_structured: Literal["auto", "function_calling", "json_schema"] = Field(
        default="auto",
        description="How structured steps ask the LLM: function calling, JSON-schema response_format "
        "(llama.cpp, vLLM, Ollama), or auto = probe the endpoint once per process and remember.",
    )
    llm_turn_deadline_s: float = Field(
        default=180.0,
        gt=0,
        description="The longest a consult turn waits for the LLM, counted from when the user's wait "
        "began; all its LLM calls share it and the turn ends offline by it (seconds, > 0).",
    )
    llm_breaker_cooldown_s: float = Field(
        default=60.0, description="After repeated endpoint failures, skip the LLM for this long (seconds)."
    )
    llm_enabled: bool = Field(
        default=True, description="Set false to force the offline mode even when an LLM is configured."
    )
    embedding_backend: EmbeddingBackend = "onnx"
    checkpoint_url: str | None = Field(
        default=None, description="Consult checkpoint store: unset = SQLite under data_dir; or postgresql://…"
    )
    slack_bot_token: SecretStr | None = Field(
        default=None,
        description="Slack bot token (xoxb-…) for `evigraph slack`.",
        validation_alias=AliasChoices("SLACK_BOT_TOKEN", "EVIGRAPH_SLACK_BOT_TOKEN", "slack_bot_token"),
    )
    slack_app_token: SecretStr | None = Field(
        default=None,
        description="Slack app-level token (xapp-…, scope connections:write) for `evigraph slack --socket`.",
        validation_alias=AliasChoices("SLACK_APP_TOKEN", "EVIGRAPH_SLACK_APP_TOKEN", "slack_app_token"),
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        description="Slack signing secret: `evigraph slack` rejects requests not signed with it.",
        validation_alias=AliasChoices(
            "SLACK_SIGNING_SECRET", "EVIGRAPH_SLACK_SIGNING_SECRET", "slack_signing_secret"
        ),
    )
    slack_streaming: str = Field(
        default="auto",
        description="How `evigraph slack` shows progress and the answer: auto (Slack's native chat streaming "
        "where the workspace has it, else an edited reply), native, or edits.",
    )

    @cached_property
    def kb_root(self) -> Path:
        """Where knowledge-base builds live (``kb_dir`` or ``data_dir/kb``)."""
        return (self.kb_dir or self.data_dir / "kb").expanduser()

    @property
    def llm_configured(self) -> bool:
        """An LLM is used only when explicitly reachable: a base URL or an API key, and not disabled."""
        return self.llm_enabled and (self.llm_base_url is not None or self.llm_api_key is not None)

    @property
    def checkpoint_path(self) -> Path:
        """SQLite file that keeps multi-turn consults across restarts."""
        return self.data_dir / "consults.sqlite"

    def masked(self) -> dict[str, Any]:
        """Effective settings as plain values, secrets shown as ``***`` (for ``evigraph config``)."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                out[name] = "***" if value.get_secret_value() else ""
            elif isinstance(value, Path):
                out[name] = str(value)
            else:
                out[name] = value
        out["kb_root"] = str(self.kb_root)
        out["llm_configured"] = self.llm_configured
        return out


class SettingsError(ValueError):
    """A setting (an ``EVIGRAPH_*`` variable or ``.env`` line) with a value it cannot take; the message names
    the variable, what it needs and what it got, in one line per problem."""


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment, with explicit overrides (``None`` values are ignored).

    Raises :class:`SettingsError` (not pydantic's multi-line dump with a documentation URL) for a bad value:
    ``EVIGRAPH_LLM_TURN_DEADLINE_S=0`` printed a traceback before any command ran (issue 23)."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            name = f"EVIGRAPH_{str(e['loc'][0] if e.get('loc') else '?').upper()}"
            problems.append(f"{name}: {e['msg']} (got {e.get('input')!r})")
        raise SettingsError("Bad setting: " + "; ".join(problems) + ". Fix the variable or .env.") from None
