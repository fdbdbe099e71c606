"""The MiniLM vectors of the evaluation sets, precomputed: data/eval/*.minilm-l6-v2.safetensors.

Embedding the year's 547 memories with the numpy MiniLM takes seconds; notebook 08, the
evaluation command and the tests load the same texts again and again. So their vectors
ship beside each dataset: each turn's and question's sha256 and its 384 float32 values, written by
this script with the lab's own model (embeddings/minilm.py). evaluation/dataset.py loads the
file beside a dataset into the model's cache, where a text is found by its hash; a text
that changed since is simply computed. tests/evaluation/test_eval_embeddings.py recomputes a sample
and checks the file is current.

    python tools/eval_embeddings.py          # rewrite both files

Deliberately left out: the lexical half of the hybrid (hashed words cost microseconds).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from embeddings import minilm  # noqa: E402

DATA = ROOT / "data" / "eval"
DATASETS = [DATA / "one_year.json", DATA / "example_conversations.json"]
SUFFIX = ".minilm-l6-v2.safetensors"


def vectors_file(dataset: Path) -> Path:
    return dataset.with_name(dataset.stem + SUFFIX)


def turn_texts(dataset: Path) -> list[str]:
    data = json.loads(dataset.read_text(encoding="utf-8"))
    texts = [turn["text"] for session in data["sessions"] for turn in session["turns"]]
    texts += [question["question"] for question in data["questions"]]
    return list(dict.fromkeys(texts))  # each text once, in file order


def write(dataset: Path) -> Path:
    import numpy as np
    from safetensors.numpy import save_file

    texts = turn_texts(dataset)
    truncated: list[int] = []
    vectors = minilm._get_model().embed(texts, truncated)  # the model itself, not a cache
    if truncated:
        raise SystemExit(f"{dataset.name}: texts longer than 256 tokens: {truncated}")
    hashes = np.array([list(minilm.text_hash(t)) for t in texts], dtype=np.uint8)
    target = vectors_file(dataset)
    save_file(
        {"sha256": hashes, "vectors": vectors}, str(target), metadata={"model": minilm.MODEL_NAME}
    )
    return target


def main() -> int:
    for dataset in DATASETS:
        target = write(dataset)
        print(f"wrote {target.relative_to(ROOT)} ({target.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
