"""The evaluation command: the ablation table for a dataset, in a terminal.

    python code/run.py evaluate --data data/eval/one_year.json --k 1 3 5 10 --strategy course

Progress goes to stderr and the table to stdout, so `> table.txt` keeps just the table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from embedding_helpers import Embedder
from evaluation.dataset import DatasetError, load_dataset
from evaluation.metrics import DEFAULT_KS, ablation, format_table
from evaluation.strategies import STRATEGIES
from llm.gateway import ModelCallError

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "data" / "eval" / "one_year.json"


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line on stderr (the usage is what --help is for)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="python code/run.py evaluate", description="Print the ablation table for a dataset."
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="dataset JSON file")
    parser.add_argument("--k", type=int, nargs="+", default=list(DEFAULT_KS), help="cut-offs")
    parser.add_argument("--strategy", action="append", choices=sorted(STRATEGIES),
                        help="repeat to pick several (default: all)")  # fmt: skip
    parser.add_argument("--embed-model", default=None, help="default: from config.py")
    args = parser.parse_args(argv)
    if any(k < 1 for k in args.k):
        parser.error(f"--k values must be >= 1, got {args.k}")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    say(f"loading and embedding {_shown(Path(args.data))}")
    try:
        evalset = load_dataset(args.data, Embedder(args.embed_model))
    # a bad file, model name or path, or an embedding model that fails
    except (DatasetError, ValueError, TypeError, OSError, ModelCallError) as err:
        say(f"error: {err}")
        return 2
    say(f"{len(evalset.store)} memories, {len(evalset.questions)} questions")
    chosen = [STRATEGIES[name] for name in (args.strategy or STRATEGIES)]
    reports = ablation(evalset, chosen, ks=sorted(set(args.k)), progress=say)
    print(f"{evalset.name}: {len(evalset.store)} memories, {len(evalset.questions)} questions, "
          f"embeddings {evalset.embedder.model}\n")  # fmt: skip
    print(format_table(reports, "MRR"))
    return 0


def _shown(path: Path) -> Path:
    """The path relative to the working directory when it is below it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path
