"""The numpy MiniLM (code/embeddings/minilm.py) against the original model, and its weight files.

The reference vectors (tests/embeddings/minilm_reference.json) were computed by
sentence-transformers with PyTorch from the official weights (tools/minilm_reference.py),
so these tests compare the lab's forward pass and its compact weights with an independent
implementation.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from embeddings import minilm  # noqa: E402

REFERENCE = json.loads((Path(__file__).parent / "minilm_reference.json").read_text("utf-8"))


def _cosines(vectors, reference):
    a = np.asarray(vectors, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_shipped_weights_reproduce_the_reference_vectors():
    vectors = minilm.embed_texts(REFERENCE["sentences"])
    cosines = _cosines(vectors, REFERENCE["vectors"])
    worst = int(cosines.argmin())
    assert cosines.min() >= 0.999, (REFERENCE["sentences"][worst], cosines.min())


def test_the_reference_covers_what_can_go_wrong():
    sentences = REFERENCE["sentences"]
    assert REFERENCE["max_seq_length"] == minilm.MAX_TOKENS
    assert len(sentences) == len(REFERENCE["vectors"]) >= 20
    assert any(minilm.token_count(s) > minilm.MAX_TOKENS for s in sentences)  # the cut
    assert any(not s.isascii() for s in sentences)  # accents and other scripts
    assert any(minilm.token_count(s) <= 4 for s in sentences)  # very short texts


def test_vectors_are_float32_unit_length_and_independent_of_the_batch():
    texts = REFERENCE["sentences"][:6]
    together = minilm.embed_texts(texts)
    assert together.dtype == np.float32 and together.shape == (6, minilm.DIMENSIONS)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    model = minilm._get_model()  # the forward pass itself, not the cache in front of it
    alone = np.stack([model.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)  # padding never leaks into a vector
    assert np.allclose(model.embed(texts[::-1])[::-1], alone, atol=1e-5)


def test_a_text_embedded_again_comes_from_the_cache_with_its_truncation():
    long_text = "cached " * 400
    first_cut: list[int] = []
    first = minilm.embed_texts(["a cached text", long_text], truncated=first_cut)
    assert long_text in minilm._cache
    again_cut: list[int] = []
    again = minilm.embed_texts([long_text, "a cached text"], truncated=again_cut)
    assert first_cut == [1] and again_cut == [0]
    assert np.array_equal(first[::-1], again)
    again[0] = 0.0  # a caller changing its result never changes the cache
    assert np.array_equal(minilm.embed_texts([long_text])[0], first[1])


def test_a_text_longer_than_256_tokens_is_cut_there_and_reported():
    long_text = " ".join(["lisbon"] * 1000)
    truncated: list[int] = []
    vectors = minilm.embed_texts(["short", long_text], truncated=truncated)
    assert truncated == [1]
    cut_by_hand = " ".join(["lisbon"] * (minilm.MAX_TOKENS - 2))  # [CLS] and [SEP] around
    assert minilm.token_count(cut_by_hand) == minilm.MAX_TOKENS
    assert np.allclose(vectors[1], minilm.embed_texts([cut_by_hand])[0], atol=1e-5)


def test_paraphrases_are_close_and_unrelated_texts_are_not():
    home, city, prawns = minilm.embed_texts(
        ["My name is Dana and I live in Lisbon", "Which city is my home?", "Can I eat prawns?"]
    )
    assert float(home @ city) > float(home @ prawns) + 0.2


def test_erf_matches_math_erf_to_about_1e_7():
    xs = np.linspace(-6, 6, 20001)
    got = minilm.erf(xs)
    want = np.array([math.erf(x) for x in xs])
    assert np.max(np.abs(got - want)) < 2e-7
    assert minilm.erf(np.float32(0.5)).dtype == np.float32


def test_gelu_is_the_exact_one():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    want = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]
    assert np.allclose(minilm.gelu(x), want, rtol=0, atol=3e-7)


def test_the_weights_file_names_its_source_and_format():
    from safetensors import safe_open

    with safe_open(str(minilm.WEIGHTS_FILE), framework="numpy") as f:
        metadata = f.metadata()
        word = f.get_tensor("embeddings.word_embeddings.weight")
    from minilm_weights import FORMAT, OFFICIAL_SHA256

    assert metadata == {"source_sha256": OFFICIAL_SHA256, "format": FORMAT}
    assert word.dtype == np.int8 and word.shape == (30522, 384)
    assert minilm.WEIGHTS_FILE.stat().st_size < 40e6  # compact: never the 90 MB original


def test_quantized_rows_round_trip_within_half_a_step():
    from minilm_weights import quantize_rows

    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(50, 384)).astype(np.float32)
    matrix[3] = 0.0  # an all-zero row must not divide by zero
    q, scale = quantize_rows(matrix)
    assert q.dtype == np.int8 and scale.dtype == np.float32
    error = np.abs(q.astype(np.float32) * scale[:, None] - matrix)
    assert np.all(error <= scale[:, None] / 2 + 1e-7)
    assert np.all(q[3] == 0)


def test_building_weights_refuses_a_file_that_is_not_the_official_one(tmp_path):
    import minilm_weights

    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "README.md"):
        (folder / name).write_bytes(b"not the model")
    with pytest.raises(SystemExit, match="not the official"):
        minilm_weights.main(["--source", str(folder), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_a_missing_weights_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="tools/minilm_weights.py"):
        minilm.load_model(tmp_path / "model.safetensors", minilm.TOKENIZER_FILE)


@pytest.mark.slow
def test_importing_the_module_loads_neither_numpy_nor_the_weights():
    import subprocess

    code = (
        "import sys; sys.path.insert(0, 'code'); import embeddings.minilm; "
        "print('numpy' in sys.modules, 'tokenizers' in sys.modules, embeddings.minilm._model)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False", "None"]
