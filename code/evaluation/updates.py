"""Does the chat keep up when facts change? Scripted conversations, replayed and probed.

A conversations file (data/update_conversations.json is the public set) holds short
conversations a user has with the chat, each followed by probe questions:

    {"id": "pub04",
     "turns": ["I drive a blue Toyota.", {"say": "I sold the Toyota, now I drive a red Honda.",
                                          "hours_later": 24}],
     "probes": [{"ask": "What car do I own?", "category": "possession",
                 "must": ["Honda"], "must_not": ["blue Toyota"]}]}

Each conversation is replayed through chat_with_memory into a fresh store (a turn 20
minutes after the one before, unless it says `hours_later`), then each probe is asked 20
minutes after the last turn, without being written back. A probe passes when the reply
contains every `must` entry (a string, or a list of which any one will do) and none of
the `must_not` strings, ignoring case. A fact kept beside its replacement fails its probe
("blue Toyota" quoted with "red Honda"), and so does a fact lost with its neighbour
("What is my name?" after "I live in Bristol now" replaced "My name is Priya and I live
in Manchester").

    report = evaluate_updates("data/update_conversations.json")
    report.passed, report.total, report.by_category["relocation"]   -> 43, 45, (4, 4)

`python code/run.py evaluate --updates FILE` prints the table per category.

Deliberately left out: judging a reply's wording; only the substrings decide.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluation.dataset import DatasetError

START = 1_700_000_000.0  # the first turn's time (epoch seconds); only differences matter
GAP_HOURS = 20 / 60  # between two turns, unless a turn says hours_later


@dataclass
class ProbeResult:
    conversation: str
    ask: str
    category: str
    reply: str
    passed: bool
    missing: list[str] = field(default_factory=list)  # must entries not in the reply
    unwanted: list[str] = field(default_factory=list)  # must_not strings in the reply


@dataclass
class UpdateReport:
    name: str
    probes: list[ProbeResult]

    @property
    def passed(self) -> int:
        return sum(p.passed for p in self.probes)

    @property
    def total(self) -> int:
        return len(self.probes)

    @property
    def by_category(self) -> dict[str, tuple[int, int]]:
        """category -> (passed, probes), in the order categories first appear."""
        table: dict[str, tuple[int, int]] = {}
        for probe in self.probes:
            passed, total = table.get(probe.category, (0, 0))
            table[probe.category] = (passed + probe.passed, total + 1)
        return table


def load_conversations(path) -> tuple[str, list[dict]]:
    """The file's name and its conversations, checked; a bad file is a DatasetError."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DatasetError(f"cannot read the conversations file {str(path)!r}: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("conversations"), list):
        raise DatasetError(
            f"{path.name}: expected an object with a 'conversations' list (see its 'format')"
        )
    conversations = data["conversations"]
    for i, conversation in enumerate(conversations):
        _check_conversation(conversation, f"{path.name}: conversations[{i}]")
    return str(data.get("name") or path.name), conversations


def _check_conversation(conversation, where: str) -> None:
    if not isinstance(conversation, dict):
        raise DatasetError(f"{where} must be an object, got {type(conversation).__name__}")
    turns, probes = conversation.get("turns"), conversation.get("probes")
    if not isinstance(turns, list) or not turns:
        raise DatasetError(f"{where}: 'turns' must be a non-empty list")
    for j, turn in enumerate(turns):
        said = turn.get("say") if isinstance(turn, dict) else turn
        if not isinstance(said, str) or not said.strip():
            raise DatasetError(
                f"{where}.turns[{j}] must be a message or {{say, hours_later}}, got {turn!r}"
            )
        if isinstance(turn, dict):
            hours = turn.get("hours_later", GAP_HOURS)
            if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not hours >= 0:
                raise DatasetError(
                    f"{where}.turns[{j}].hours_later must be a number of hours >= 0, got {hours!r}"
                )
    if not isinstance(probes, list) or not probes:
        raise DatasetError(f"{where}: 'probes' must be a non-empty list")
    for j, probe in enumerate(probes):
        ok = (
            isinstance(probe, dict)
            and isinstance(probe.get("ask"), str)
            and probe["ask"].strip()
            and isinstance(probe.get("must", []), list)
            and all(
                isinstance(m, str)
                or (isinstance(m, list) and m and all(isinstance(x, str) for x in m))
                for m in probe.get("must", [])
            )
            and isinstance(probe.get("must_not", []), list)
            and all(isinstance(m, str) for m in probe.get("must_not", []))
        )
        if not ok:
            raise DatasetError(
                f"{where}.probes[{j}] must have 'ask' (a question), 'must' (strings or lists "
                f"of strings) and 'must_not' (strings), got {probe!r}"
            )


def judge(reply: str, must: list, must_not: list) -> tuple[list[str], list[str]]:
    """(missing, unwanted): the must entries not in `reply`, the must_not strings in it."""
    lowered = reply.lower()
    missing = []
    for entry in must:
        options = [entry] if isinstance(entry, str) else list(entry)
        if not any(option.lower() in lowered for option in options):
            missing.append(" or ".join(options))
    unwanted = [text for text in must_not if text.lower() in lowered]
    return missing, unwanted


def evaluate_updates(
    path,
    settings=None,
    embedder=None,
    progress: Callable[[str], None] | None = None,
    **model_kwargs,
) -> UpdateReport:
    """Replay every conversation of `path` through chat_with_memory and judge its probes."""
    from chat_with_memory import chat_with_memory
    from config import load_settings
    from embedding_helpers import Embedder
    from memory_store import MemoryStore

    name, conversations = load_conversations(path)
    settings = settings or load_settings()
    settings = replace(settings, db_path=None)
    embedder = embedder or Embedder(settings.embed_model, settings.api_base, settings.timeout)
    results = []
    for conversation in conversations:
        store = MemoryStore(embedder.model, user_id="probe")
        now = START
        for i, turn in enumerate(conversation["turns"]):
            said = turn["say"] if isinstance(turn, dict) else turn
            hours = turn.get("hours_later", GAP_HOURS) if isinstance(turn, dict) else GAP_HOURS
            now += 0 if i == 0 else hours * 3600
            chat_with_memory(said, store, now, settings=settings, embedder=embedder, **model_kwargs)
        for probe in conversation["probes"]:
            now += GAP_HOURS * 3600
            result = chat_with_memory(
                probe["ask"], store, now, settings=settings, embedder=embedder,
                write_back=False, **model_kwargs,
            )  # fmt: skip
            missing, unwanted = judge(
                result.reply, probe.get("must", []), probe.get("must_not", [])
            )
            results.append(
                ProbeResult(
                    str(conversation.get("id", "")), probe["ask"], str(probe.get("category", "")),
                    result.reply, not missing and not unwanted, missing, unwanted,
                )
            )  # fmt: skip
        if progress:
            done = sum(r.passed for r in results)
            progress(f"{conversation.get('id', '')}: {done} of {len(results)} probes pass so far")
    return UpdateReport(name, results)


def format_report(report: UpdateReport, show_failures: bool = True) -> str:
    """The table per category, then every failed probe with what was off."""
    width = max([len("category")] + [len(c) for c in report.by_category])
    lines = [f"{'category':<{width}}  passed", f"{'-' * width}  ------"]
    for category, (passed, total) in report.by_category.items():
        lines.append(f"{category:<{width}}  {passed:>2} of {total}")
    share = report.passed / report.total if report.total else 0.0
    lines.append(f"{'all':<{width}}  {report.passed:>2} of {report.total} ({share:.0%})")
    failed = [p for p in report.probes if not p.passed]
    if show_failures and failed:
        lines.append("\nfailed probes:")
        for probe in failed:
            why = []
            if probe.missing:
                why.append("missing " + ", ".join(repr(m) for m in probe.missing))
            if probe.unwanted:
                why.append("should not say " + ", ".join(repr(m) for m in probe.unwanted))
            lines.append(f"  {probe.conversation} {probe.ask!r}: {'; '.join(why)}")
    return "\n".join(lines)
