"""The shipped MiniLM vectors of the evaluation sets (tools/eval_embeddings.py) are current."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from embeddings import minilm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import eval_embeddings


@pytest.mark.parametrize("dataset", eval_embeddings.DATASETS, ids=lambda p: p.name)
def test_the_shipped_vectors_cover_every_text_and_match_a_fresh_sample(dataset):
    texts = eval_embeddings.turn_texts(dataset)
    tensors = load_file(str(eval_embeddings.vectors_file(dataset)))
    hashes = [bytes(h) for h in tensors["sha256"]]
    assert hashes == [minilm.text_hash(t) for t in texts]  # every text, in order: current
    sample = random.Random(0).sample(range(len(texts)), min(12, len(texts)))
    fresh = minilm._get_model().embed([texts[i] for i in sample])  # the model, no cache
    assert np.allclose(tensors["vectors"][sample], fresh, atol=1e-5)


def test_a_preloaded_vector_is_used_and_a_changed_text_is_computed(tmp_path):
    from safetensors.numpy import save_file

    text = "a text nobody embeds anywhere else, 81f3"
    fake = np.zeros((1, minilm.DIMENSIONS), dtype=np.float32)
    fake[0, 0] = 1.0
    digest = np.frombuffer(minilm.text_hash(text), dtype=np.uint8)[None, :]
    save_file({"sha256": digest, "vectors": fake}, str(tmp_path / "v.safetensors"))
    assert minilm.preload(tmp_path / "v.safetensors") == 1
    assert np.array_equal(minilm.embed_texts([text])[0], fake[0])
    other = minilm.embed_texts([text + "!"])[0]
    assert not np.array_equal(other, fake[0])
