"""The evaluation command: the ablation table for a dataset, in a terminal.

    python code/run.py evaluate --data data/eval/one_year.json --k 1 3 5 10 --strategy course
    python code/run.py evaluate --dataset locomo data/locomo --conversations 26 41

    python code/run.py evaluate --updates data/update_conversations.json

With --updates FILE it replays scripted conversations through the chat and prints how
many probes pass, category by category (evaluation/updates.py): does the assistant keep
up when a fact changes?

With --dataset locomo PATH (a local copy of LoCoMo, evaluation/locomo.py) it prints
recall@k and MRR of plain relevance over real conversations, retriever by retriever:
BM25, the word toy, MiniLM alone and the embedding model (the default, or --embed-model).

Progress goes to stderr and the table to stdout, so `> table.txt` keeps just the table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from embedding_helpers import Embedder
from evaluation.dataset import DatasetError, load_dataset
from evaluation.metrics import DEFAULT_KS, ablation, format_table, verdict
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
    parser.add_argument(
        "--dataset",
        choices=["file", "locomo"],
        default="file",
        help="locomo: PATH is a local copy of LoCoMo (default: --data)",
    )
    parser.add_argument("path", nargs="?", help="with --dataset locomo: the LoCoMo copy")
    parser.add_argument(
        "--conversations",
        nargs="+",
        metavar="ID",
        help="with --dataset locomo: which (26 or conv-26; default: all)",
    )
    parser.add_argument(
        "--items",
        choices=["turn", "pair", "window", "episode", "distilled"],
        default=None,
        help="with --dataset locomo: what one memory holds (evaluation/locomo.py's "
        "ITEM_SHAPES; distilled: each episode's facts from the offline distiller; default "
        "turn); with --updates: turn or episode, what the chat stores (default: MEMORY_LAB_ITEMS)",
    )
    parser.add_argument("--k", type=int, nargs="+", default=list(DEFAULT_KS), help="cut-offs")
    parser.add_argument("--strategy", action="append", choices=sorted(STRATEGIES),
                        help="repeat to pick several (default: all)")  # fmt: skip
    parser.add_argument("--embed-model", default=None, help="default: from config.py")
    parser.add_argument(
        "--updates",
        metavar="FILE",
        help="replay the conversations of FILE through the chat and judge its probes "
        "(e.g. data/update_conversations.json)",
    )
    args = parser.parse_args(argv)
    if any(k < 1 for k in args.k):
        parser.error(f"--k values must be >= 1, got {args.k}")

    if args.dataset == "file" and (args.path or args.conversations):
        parser.error("a PATH and --conversations go with --dataset locomo")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.updates:
        if args.dataset != "file" or args.path or args.conversations or args.strategy:
            parser.error("--updates FILE goes alone (with --embed-model and --items at most)")
        if args.items not in (None, "turn", "episode"):
            parser.error(f"with --updates, --items is turn or episode, got {args.items}")
        return _updates(args, say)

    if args.dataset == "locomo":
        if not args.path:
            parser.error("--dataset locomo needs the PATH of a local LoCoMo copy")
        return _locomo(args, say)

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
          f"embeddings {evalset.embedder.model}{_which_embedding(args.embed_model)}\n")  # fmt: skip
    print(format_table(reports, "MRR"))
    print("\n" + verdict(reports, "MRR"))
    return 0


def _which_embedding(asked: str | None) -> str:
    """Why these figures may differ from notebook 08's first tables: another embedding."""
    from config import TOY_EMBED_MODEL

    if asked is not None:
        return ""
    return (
        f"\n(the lab's default embedding; notebook 08's first tables use the word toy, so"
        f" their figures differ: add --embed-model {TOY_EMBED_MODEL} to see them)"
    )


def _locomo(args, say) -> int:
    from config import TOY_EMBED_MODEL
    from embeddings.minilm import MODEL_NAME
    from evaluation.locomo import compare, format_comparison

    try:
        model = Embedder(args.embed_model).model  # checks the name before any work
        models = list(dict.fromkeys([TOY_EMBED_MODEL, MODEL_NAME, model]))
        results = compare(
            args.path,
            models,
            args.conversations,
            sorted(set(args.k)),
            say,
            items=args.items or "turn",
        )
    except (DatasetError, ValueError, TypeError, OSError, ModelCallError) as err:
        say(f"error: {err}")
        return 2
    labels = {"bm25": "bm25 (keywords)", TOY_EMBED_MODEL: f"{TOY_EMBED_MODEL} (words)",
              MODEL_NAME: f"{MODEL_NAME} (meaning)"}  # fmt: skip
    which = ", ".join(args.conversations) if args.conversations else "all conversations"
    shape = {"turn": "each turn a memory", "pair": "each turn with the one before",
             "window": "each turn with its neighbours",
             "episode": "consecutive turns grouped",
             "distilled": "episodes distilled offline"}[args.items or "turn"]  # fmt: skip
    print(f"LoCoMo ({which}): relevance alone, {shape}, asked at the end\n")
    print(format_comparison(results, labels))
    return 0


def _updates(args, say) -> int:
    from dataclasses import replace

    from config import load_settings
    from evaluation.updates import evaluate_updates, format_report

    try:
        settings = load_settings()
        if args.embed_model:
            settings = replace(settings, embed_model=args.embed_model)
        settings = replace(settings, items=args.items or settings.items)
        say(f"replaying {_shown(Path(args.updates))} through the chat ({settings.chat_model})")
        report = evaluate_updates(args.updates, settings, progress=say)
    except (DatasetError, ValueError, TypeError, OSError, ModelCallError) as err:
        say(f"error: {err}")
        return 2
    print(f"{report.name}: {len(report.probes)} probes, chat {settings.chat_model}, "
          f"embeddings {settings.embed_model}\n")  # fmt: skip
    print(format_report(report))
    return 0


def _shown(path: Path) -> Path:
    """The path relative to the working directory when it is below it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path
