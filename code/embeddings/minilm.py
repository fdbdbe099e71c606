"""all-MiniLM-L6-v2 in numpy: a real sentence-embedding model with no PyTorch and no download.

memorylab/minilm-l6-v2 is the sentence-transformers model all-MiniLM-L6-v2 (Apache-2.0):
WordPiece tokens (the `tokenizers` package reads the model's own tokenizer.json), a
BERT encoder of 6 layers (384 wide, 12 attention heads, feed-forward 1536 with GELU),
the mean of the token vectors, scaled to length 1. The weights ship in the repository,
compact (data/models/all-MiniLM-L6-v2/, 34 MB: the word table as int8 rows with a scale
each, the matrices as float16), made by tools/minilm_weights.py from the official
model.safetensors; numpy computes in float32.

    embed_texts(["My name is Dana and I live in Lisbon"])  -> float32 array, shape (1, 384)
    MiniLM().embed_documents(["My name is Dana ..."])      -> [a tuple of 384 floats]

Texts longer than the model's 256 tokens are cut there, as sentence-transformers does;
`embed_texts(..., truncated=...)` and `token_count` tell a caller so it can say it.
numpy and the weights are loaded on the first call, never at import.

Deliberately left out: training, and any model but this one. The forward pass is the
inference half of BERT only (no dropout, one segment, no pooler head).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from embeddings.model import OfflineModel, Vector

MODEL_NAME = "memorylab/minilm-l6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
LAYERS, HEADS, WIDTH = 6, 12, 384
MODEL_DIR = Path(__file__).resolve().parents[2] / "data" / "models" / "all-MiniLM-L6-v2"
WEIGHTS_FILE = MODEL_DIR / "model.safetensors"
TOKENIZER_FILE = MODEL_DIR / "tokenizer.json"
_EPS = 1e-12  # BERT's layer_norm_eps
_BATCH_TOKENS = 1024  # tokens per forward batch: matmuls stay fast, temporaries stay in cache
_FFN_ROWS = 256  # rows per feed-forward block: 256 x 1536 float32 (1.5 MB) stays in cache

_lock = threading.Lock()
_model = None  # the loaded _MiniLM, once
_CACHE_SIZE = 4096
_cache: OrderedDict = OrderedDict()  # text -> (its vector, whether it was cut), newest last
_preloaded: dict[bytes, object] = {}  # sha256 of a text -> its precomputed vector


class MiniLM(OfflineModel):
    """all-MiniLM-L6-v2 as an offline model: meaning only; queries and memories alike.

        MiniLM().name                                         -> 'memorylab/minilm-l6-v2'
        MiniLM().embed_documents(["I live in Lisbon"])        -> [384 floats, length 1]

    "Which city is my home?" is close to "I live in Lisbon" with no word in common.
    """

    name = MODEL_NAME
    dimensions = DIMENSIONS
    uses_minilm = True

    def __repr__(self) -> str:
        return "MiniLM()"

    def embed_documents(self, texts: Sequence[str], truncated: list | None = None) -> list[Vector]:
        return [tuple(v.tolist()) for v in embed_texts(texts, truncated)]

    def embed_array(self, texts: Sequence[str], truncated: list | None = None):
        """The same vectors as one float32 array, shape (len(texts), 384): embed_texts."""
        return embed_texts(texts, truncated)


def embed_texts(texts, truncated: list | None = None):
    """Unit-length float32 vectors of `texts` (a list of strings), shape (len(texts), 384).

    Texts are embedded in batches of similar length (less padding, same results). If a
    list is given as `truncated`, it receives the index of every text cut at 256 tokens.
    The last few thousand texts are remembered, so embedding one again costs nothing
    (a chat re-embeds the memories it quotes; a notebook re-runs its cells).
    """
    import numpy as np

    texts = list(texts)
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    cut: set[int] = set()
    todo = []
    if _preloaded:
        for text in texts:
            if text not in _cache:
                vector = _preloaded.get(text_hash(text))
                if vector is not None:  # precomputed texts are short: never cut
                    _cache[text] = (vector, False)
    for i, text in enumerate(texts):
        if text in _cache:
            out[i], was_cut = _cache[text]
            _cache.move_to_end(text)
            if was_cut:
                cut.add(i)
        else:
            todo.append(i)
    if todo:
        fresh_cut: list[int] = []
        fresh = _get_model().embed([texts[i] for i in todo], fresh_cut)
        cut.update(todo[j] for j in fresh_cut)
        for j, i in enumerate(todo):
            out[i] = fresh[j]
            _cache[texts[i]] = (fresh[j].copy(), i in cut)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    if truncated is not None:
        truncated.extend(sorted(cut))
    return out


def preload(path) -> int:
    """Put precomputed vectors (a file tools/eval_embeddings.py wrote) into the cache.

    The file holds each text's sha256 and its vector; a text is found by its hash when it
    is embedded, so a text that changed since is simply computed. Returns how many.
    """
    import numpy as np
    from safetensors.numpy import load_file

    tensors = load_file(str(path))
    hashes, vectors = tensors["sha256"], tensors["vectors"]
    if vectors.shape != (len(hashes), DIMENSIONS) or vectors.dtype != np.float32:
        raise ValueError(f"{path}: expected float32 vectors of {DIMENSIONS} values, one per hash")
    for digest, vector in zip(hashes, vectors):
        _preloaded[bytes(digest)] = vector
    return len(hashes)


def text_hash(text: str) -> bytes:
    """The sha256 of a text's UTF-8 bytes: the key of a precomputed vector."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def token_count(text: str) -> int:
    """How many tokens the model sees for `text`, [CLS] and [SEP] included (before the cut)."""
    return _get_model().token_count(text)


# Abramowitz and Stegun 7.1.26: erf(z) = 1 - t * P(t) * exp(-z * z), t = 1 / (1 + p * z)
# for z >= 0, with |error| <= 1.5e-7 (float32 itself resolves about 6e-8 near 1)
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erfc_tail(z):
    """t * P(t) * exp(-z * z) for z >= 0, which is 1 - erf(z); in place where it can be."""
    import numpy as np

    t = z * _P
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * _A[4]
    for coefficient in _A[3::-1]:
        poly += coefficient
        poly *= t
    square = z * z
    np.negative(square, out=square)
    np.exp(square, out=square)
    poly *= square
    return poly


def erf(x):
    """The error function, elementwise, to about 1e-7 (numpy has none; math.erf is scalar).

    Abramowitz and Stegun's formula 7.1.26 (|error| <= 1.5e-7), so GELU is the exact
    one BERT was trained with, not the tanh approximation.
    """
    import numpy as np

    x = np.asarray(x)
    tail = _erfc_tail(np.abs(x.reshape(-1))).reshape(x.shape)  # 1-d: in place works
    return np.where(x >= 0, 1.0 - tail, tail - 1.0).astype(x.dtype, copy=False)


def gelu(x):
    """BERT's GELU: x * P(N(0, 1) <= x) = 0.5 * x * (1 + erf(x / sqrt(2))).

    Written as max(x, 0) - h with h = 0.5 * |x| * (1 - erf(|x| / sqrt(2))): the same
    function on both sides of 0, with no comparison and no choice between two arrays, and
    the 1 / sqrt(2) and the 0.5 folded into the constants of the erf formula, so it
    takes a dozen passes over the array, each in place.
    """
    import numpy as np

    x = np.asarray(x)
    a = np.abs(x)
    t = a * _P_HALF  # 1 / (1 + p * z) with z = |x| / sqrt(2)
    t += 1.0
    np.reciprocal(t, out=t)
    h = t * _A_HALF[4]
    for coefficient in _A_HALF[3::-1]:
        h += coefficient
        h *= t
    square = np.multiply(a, a, out=a)
    square *= -0.5  # -z * z
    np.exp(square, out=square)
    h *= square
    np.abs(x, out=square)
    h *= square  # times |x|: 0.5 * |x| * erfc(|x| / sqrt(2))
    out = np.maximum(x, 0.0)
    out -= h
    return out


_P_HALF = _P / math.sqrt(2.0)
_A_HALF = tuple(0.5 * c for c in _A)


def multiply_adds(lengths) -> int:
    """Multiply-adds of one forward pass over texts of these token lengths (no padding).

    Per token and layer: the four 384x384 projections and the two 384x1536 feed-forward
    matrices; per pair of tokens in a text: the attention scores and the weighted values.
    """
    per_token = LAYERS * (4 * WIDTH * WIDTH + 2 * WIDTH * 4 * WIDTH)
    return sum(n * per_token + LAYERS * 2 * n * n * WIDTH for n in lengths)


def _get_model():
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _MiniLM(WEIGHTS_FILE, TOKENIZER_FILE)
    return _model


def load_model(weights_file=WEIGHTS_FILE, tokenizer_file=TOKENIZER_FILE):
    """A model from other files (the tools and tests compare weight files with it)."""
    return _MiniLM(Path(weights_file), Path(tokenizer_file))


class _MiniLM:
    def __init__(self, weights_file: Path, tokenizer_file: Path):
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        for path in (weights_file, tokenizer_file):
            if not path.is_file():
                raise FileNotFoundError(
                    f"the MiniLM model file {path.name} is missing from {path.parent}; "
                    "it ships with the repository (rebuild it with tools/minilm_weights.py)"
                )
        self.np = np
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_truncation()  # cut by hand at 256 below, and know that we did
        self.tokenizer.no_padding()
        self.sep_id = self.tokenizer.token_to_id("[SEP]")
        raw = load_file(str(weights_file))
        w = {name: _dequantize(raw, name) for name in raw if not name.endswith(".scale")}
        del w["embeddings.word_embeddings.weight"]
        # the word table is the largest: kept as stored (int8), its rows dequantized on use
        self.word_table = raw["embeddings.word_embeddings.weight"]
        self.word_scale = raw.get("embeddings.word_embeddings.weight.scale")
        self.position = w["embeddings.position_embeddings.weight"][:MAX_TOKENS]
        self.position += w["embeddings.token_type_embeddings.weight"][0]  # one segment only
        self.emb_norm = _norm(w, "embeddings.LayerNorm")
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            qkv = np.concatenate(
                [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]
            )
            qkv_b = np.concatenate(
                [w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
            )
            # the attention scores' 1 / sqrt(head width) folded into the query projection
            qkv[:WIDTH] *= 1.0 / math.sqrt(WIDTH // HEADS)
            qkv_b[:WIDTH] *= 1.0 / math.sqrt(WIDTH // HEADS)
            self.layers.append(
                (
                    np.ascontiguousarray(qkv.T),
                    qkv_b,
                    np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    w[p + "attention.output.dense.bias"],
                    _norm(w, p + "attention.output.LayerNorm"),
                    np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    w[p + "intermediate.dense.bias"],
                    np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    w[p + "output.dense.bias"],
                    _norm(w, p + "output.LayerNorm"),
                )
            )

    def token_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def token_count(self, text: str) -> int:
        return len(self.token_ids(text))

    def embed(self, texts: list[str], truncated: list | None = None):
        np = self.np
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        ids = []
        for i, encoding in enumerate(self.tokenizer.encode_batch(texts)):
            tokens = encoding.ids
            if len(tokens) > MAX_TOKENS:
                tokens = [*tokens[: MAX_TOKENS - 1], self.sep_id]
                if truncated is not None:
                    truncated.append(i)
            ids.append(tokens)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))  # least padding
        batch: list[int] = []
        for i in [*order, None]:
            full = i is None or (batch and (len(batch) + 1) * len(ids[i]) > _BATCH_TOKENS)
            if full and batch:
                out[batch] = self._forward([ids[j] for j in batch], len(ids[batch[-1]]))
                batch = []
            if i is not None:
                batch.append(i)
        return out

    def _feed_forward(self, x, wi, bi, wo, bo):
        """gelu(x @ wi + bi) @ wo + bo + x, a block of rows at a time: the 1536-wide
        middle stays in the processor's cache while GELU makes its passes over it. The
        residual (+ x) is added here, in place."""
        np = self.np
        out = np.empty_like(x)
        for start in range(0, len(x), _FFN_ROWS):
            middle = x[start : start + _FFN_ROWS] @ wi
            middle += bi
            np.matmul(gelu(middle), wo, out=out[start : start + _FFN_ROWS])
        out += bo
        out += x
        return out

    def _forward(self, batch: list[list[int]], length: int):
        np = self.np
        n = len(batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = self.word_table[ids].astype(np.float32)
        if self.word_scale is not None:
            x *= self.word_scale[ids][..., None]
        x += self.position[:length]
        x = _layer_norm(np, x.reshape(n * length, WIDTH), self.emb_norm)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]  # padding gets no attention
        head = WIDTH // HEADS
        for qkv, qkv_b, wo, bo, norm1, wi, bi, wo2, bo2, norm2 in self.layers:
            projected = x @ qkv  # the query part comes scaled by 1 / sqrt(head): see __init__
            projected += qkv_b
            q, k, v = np.split(projected, 3, axis=1)
            q, k, v = (t.reshape(n, length, HEADS, head).transpose(0, 2, 1, 3) for t in (q, k, v))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)  # softmax, in place
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, WIDTH)
            attended = context @ wo
            attended += bo
            attended += x
            x = _layer_norm(np, attended, norm1)
            x = _layer_norm(np, self._feed_forward(x, wi, bi, wo2, bo2), norm2)
        x = x.reshape(n, length, WIDTH)
        pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _layer_norm(np, x, weight_bias):
    """Layer norm of the rows of `x` (2-d), in place: x is a temporary of the forward pass."""
    weight, bias = weight_bias
    x -= x.mean(axis=-1, keepdims=True)
    scale = np.einsum("ij,ij->i", x, x)[:, None]  # each row's sum of squares
    scale *= 1.0 / x.shape[-1]
    scale += _EPS
    np.sqrt(scale, out=scale)
    np.reciprocal(scale, out=scale)
    x *= scale
    x *= weight
    x += bias
    return x


def _norm(w: dict, name: str):
    return w[name + ".weight"], w[name + ".bias"]


def _dequantize(raw: dict, name: str):
    """float32 values of tensor `name`: int8 rows times their scale, or stored as they are."""
    import numpy as np

    value = raw[name]
    if value.dtype == np.int8:
        return value.astype(np.float32) * raw[name + ".scale"][:, None]
    return value.astype(np.float32)
