"""Unpack a local copy of LoCoMo for `python code/run.py evaluate --dataset locomo`.

LoCoMo (github.com/snap-research/locomo) ships without a licence file, so the lab never
copies or downloads it: get `data/locomo10.zip` yourself (a clone of that repository has
it), then

    python tools/locomo_data.py PATH/locomo10.zip            # unpacks into data/locomo/
    python tools/locomo_data.py PATH/locomo10.zip --to DIR
    python code/run.py evaluate --dataset locomo data/locomo

PATH may also be the clone itself (its data/locomo10.zip is used). The conversation
files are checked as they are read (evaluation/locomo.py), written flat into the folder
(26.json ... 50.json), and data/locomo/ is ignored by git, so nothing of it is committed.

Deliberately left out: any network access; and the evaluation itself (evaluation/locomo.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "code"))

from evaluation.dataset import DatasetError  # noqa: E402
from evaluation.locomo import as_dataset, read_samples  # noqa: E402

DEFAULT_TO = ROOT / "data" / "locomo"


def unpack(source: Path, target: Path) -> list[Path]:
    """Write each conversation of `source` to target/NN.json; returns the files written."""
    if source.is_dir() and (source / "data" / "locomo10.zip").is_file():
        source = source / "data" / "locomo10.zip"  # a clone of the repository
    samples = read_samples(source)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for sid, sample in samples.items():
        as_dataset(sample, sid)  # refuses a malformed conversation before it is written
        path = target / f"{sid.removeprefix('conv-')}.json"
        conversation = dict(sample["conversation"], qa=sample["qa"])
        temporary = path.with_suffix(".json.partial")
        temporary.write_text(json.dumps(conversation, ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)  # a crash never leaves half a file under the real name
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", help="locomo10.zip, a folder of its files, or a clone")
    parser.add_argument("--to", default=str(DEFAULT_TO), help="default: data/locomo/")
    args = parser.parse_args(argv)
    try:
        written = unpack(Path(args.source), Path(args.to))
    except (DatasetError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} conversations to {args.to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
