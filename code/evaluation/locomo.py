"""LoCoMo, real multi-session conversations, read from a local copy into the lab's format.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", 2024; github.com/snap-research/locomo, `data/locomo10.zip`) is ten long
conversations between two people, each turn with an id (`dia_id`, "D3:7": session 3,
turn 7) and questions (`qa`) naming the turns that answer them (`evidence`). It ships
without a licence file, so the lab never copies it: the user points to a local copy
(tools/locomo_data.py unpacks one) and this module reads it.

    conversations = load_locomo("data/locomo")                 # every conversation
    conversations = load_locomo(path, ["26", "41"])            # or some, by sample id
    conversations[0].name, len(conversations[0].questions)     -> ('conv-26', 152)

Each conversation becomes its own EvalSet (evaluation/dataset.py's format, checked by
its loader): one memory per turn, its text the speaker's name and what they said, a
shared photo's caption appended ("Caroline: Look! [shares a photo of a necklace]"),
dated at its session's date (a second apart, in order). Questions of categories 1-4
(multi-hop, temporal, open-domain, single-hop) have evidence and are kept; category 5
(adversarial: the answer is not in the conversation) has none and is left out. Every
question is asked at the conversation's end, so every turn is a candidate.

A local copy is any of: the zip itself, a folder holding its conversation files
(`26.json` ... `50.json`: one conversation each, as the zip has them), or one JSON file,
either one conversation or the list of samples of `locomo10.json` (each with
`sample_id`, `conversation` and `qa`).

Deliberately left out: the answers, the session summaries and the event graphs (only
retrieval is measured), and fetching anything: a missing copy is an error naming it.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from embedding_helpers import Embedder
from evaluation.dataset import DatasetError, EvalSet, load_dataset
from llm.memory_block import format_date

# LoCoMo's categories as its evaluation code names them; 5 has no evidence
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# The split the default embedding was tuned on (docs/evaluation.md); the rest accept it.
TUNING = ("conv-26", "conv-41", "conv-43", "conv-47", "conv-49")
ACCEPTANCE = ("conv-30", "conv-42", "conv-44", "conv-48", "conv-50")
_DATE = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")  # also the odd "D:11:26" and "D30:05"


def load_locomo(
    path, conversations: Iterable[str] | None = None, embedder: Embedder | None = None
) -> list[EvalSet]:
    """One EvalSet per conversation of the local copy at `path`, in sample-id order.

    `conversations` picks some by sample id ("conv-26" or "26"); an id the copy does
    not have is a DatasetError listing those it has.
    """
    samples = read_samples(path)
    if conversations is not None:
        wanted = [sample_id(c) for c in conversations]
        missing = [c for c in wanted if c not in samples]
        if missing:
            raise DatasetError(
                f"{Path(path).name} has no conversation {missing[0]!r}; it has {', '.join(samples)}"
            )
        samples = {c: samples[c] for c in wanted}
    embedder = embedder or Embedder()
    return [load_dataset(as_dataset(s, sid), embedder) for sid, s in samples.items()]


def sample_id(name) -> str:
    """'conv-26' for '26', 'conv-26' or 26; a DatasetError for anything else."""
    text = str(name).strip()
    number = text.removeprefix("conv-")
    if not number.isdigit():
        raise DatasetError(f"a LoCoMo conversation is named like 'conv-26' or '26', got {name!r}")
    return f"conv-{int(number)}"


def read_samples(path) -> dict[str, dict]:
    """{sample id: {"conversation": {...}, "qa": [...]}} from a zip, a folder or a file."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(
            f"no LoCoMo copy at {path}: download data/locomo10.zip from "
            "github.com/snap-research/locomo and unpack it with python tools/locomo_data.py"
        )
    found: dict[str, dict] = {}
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if not p.name.startswith("."))
        for file in files:
            _add(found, file.name, file.read_bytes())
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for member in sorted(archive.namelist()):
                if member.endswith(".json") and not Path(member).name.startswith("."):
                    _add(found, Path(member).name, archive.read(member))
    else:
        _add(found, path.name, path.read_bytes())
    if not found:
        raise DatasetError(f"{path} holds no LoCoMo conversation (no .json file with a 'qa' list)")
    return dict(sorted(found.items(), key=lambda item: int(item[0].removeprefix("conv-"))))


def _add(found: dict[str, dict], name: str, raw: bytes) -> None:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DatasetError(f"{name} is not JSON text: {err}") from None
    if isinstance(data, list):  # locomo10.json: a list of samples
        for i, sample in enumerate(data):
            if not isinstance(sample, dict) or "sample_id" not in sample:
                raise DatasetError(f"{name}[{i}] must be a sample with a 'sample_id'")
            _keep(found, sample_id(sample["sample_id"]), sample, f"{name}[{i}]")
    elif isinstance(data, dict) and "qa" in data:  # one conversation per file: 26.json
        stem = Path(name).stem
        if not stem.removeprefix("conv-").isdigit():
            raise DatasetError(f"{name}: a conversation file is named by its number, like 26.json")
        _keep(found, sample_id(stem), {"conversation": data, "qa": data["qa"]}, name)


def _keep(found: dict, sid: str, sample: dict, where: str) -> None:
    if sid in found:
        raise DatasetError(f"{where}: conversation {sid} appears twice in the copy")
    if not isinstance(sample.get("conversation"), dict) or not isinstance(sample.get("qa"), list):
        raise DatasetError(f"{where}: a sample needs a 'conversation' object and a 'qa' list")
    found[sid] = sample


ITEMS = ("turn", "pair", "window", "episode", "distilled")  # what one memory holds
ITEM_SHAPES = {
    "turn": "each turn its own memory (the course's notebooks' shape)",
    "pair": "each turn with the turn before it, one memory a turn",
    "window": "each turn with the turns before and after it, one memory a turn",
    "episode": "EPISODE_TURNS consecutive turns of a session grouped into one memory",
    "distilled": "each episode distilled offline into up to MAX_FACTS standalone facts, "
    "one memory a fact",
}
EPISODE_TURNS = 3


def as_dataset(sample: dict, sid: str, items: str = "turn") -> dict:
    """One LoCoMo sample in the lab's dataset format (docs/evaluation.md).

    items: what one memory holds (ITEM_SHAPES). With "pair" and "window" a memory is
    still one turn's (same id, same evidence) read together with its neighbours in the
    session; with "episode" a memory is a group of turns, and a question's evidence is
    the groups that hold its evidence turns.

    With "distilled" each episode (the same groups) goes through the offline distiller
    (extensions/distillation.py's offline_statements, what offline_distill keeps: dated
    statements with a decision or preference cue, else the longest one, at most
    MAX_FACTS). LoCoMo has two people and no user, so both speakers' turns count as
    statements, and a fact names its speaker: "On 2023-05-08 Caroline said: ...". Each
    fact is its own memory, id "<the episode's first turn id>#f0", "#f1", ..., dated at
    its turn. An episode with nothing to keep (every turn a question or too short to
    embed) keeps its longest turn as it is, under id "...#f0". A question's evidence is
    every fact of the episodes that hold its evidence turns: a fact stands for its whole
    episode, so a hit is found as with "episode", but recall@k counts the share of those
    facts in the first k (stricter than "episode" when an episode has several facts),
    and a fact may not be the sentence that answers (the distiller drops the rest).
    """
    if items not in ITEMS:
        raise ValueError(f"items must be one of {', '.join(ITEMS)}, got {items!r}")
    dataset = _turn_dataset(sample, sid)
    return dataset if items == "turn" else _reshaped(dataset, items)


def _reshaped(dataset: dict, items: str) -> dict:
    group_of: dict[str, str] = {}
    facts_of: dict[str, list[str]] = {}  # an episode's first turn id -> its facts' ids
    for session in dataset["sessions"]:
        turns = session["turns"]
        if items in ("distilled", "episode"):
            shaped = []
            for start in range(0, len(turns), EPISODE_TURNS):
                group = turns[start : start + EPISODE_TURNS]
                for turn in group:
                    group_of[turn["id"]] = group[0]["id"]
                if items == "episode":
                    shaped.append({**group[0], "text": "\n".join(t["text"] for t in group)})
                    continue
                facts = _distilled(group)
                facts_of[group[0]["id"]] = [f["id"] for f in facts]
                shaped += facts
            session["turns"] = shaped
            continue
        before, after = 1, (1 if items == "window" else 0)
        session["turns"] = [
            {
                **turn,
                "text": "\n".join(t["text"] for t in turns[max(0, i - before) : i + after + 1]),
            }
            for i, turn in enumerate(turns)
        ]
    if items == "episode":
        for question in dataset["questions"]:
            question["evidence"] = list(dict.fromkeys(group_of[e] for e in question["evidence"]))
    if items == "distilled":
        for question in dataset["questions"]:
            episodes = dict.fromkeys(group_of[e] for e in question["evidence"])
            question["evidence"] = [f for episode in episodes for f in facts_of[episode]]
    return dataset


def _distilled(group: list[dict]) -> list[dict]:
    """An episode's turns as the offline distiller's facts (as_dataset's "distilled")."""
    from extensions.distillation import offline_statements  # only this shape needs it

    said = [
        {**turn, "role": "user", "content": turn["text"].removeprefix(f"{turn['speaker']}: "),
         "time": turn["date"]}
        for turn in group
    ]  # fmt: skip
    kept = offline_statements(said)
    if not kept:  # nothing to keep: the episode's longest turn, as it is
        longest = max(group, key=lambda turn: len(turn["text"]))
        return [{**longest, "id": f"{group[0]['id']}#f0"}]
    return [
        {"id": f"{group[0]['id']}#f{i}", "speaker": turn["speaker"], "date": turn["date"],
         "text": f"On {format_date(turn['time'])[:10]} {turn['speaker']} said: {sentence}"}
        for i, (turn, sentence) in enumerate(kept)
    ]  # fmt: skip


def _turn_dataset(sample: dict, sid: str) -> dict:
    conversation = sample["conversation"]
    sessions, turn_ids = [], set()
    numbers = sorted(
        int(key.removeprefix("session_"))
        for key, value in conversation.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list) and value
    )
    for n in numbers:
        start = _session_date(conversation, n, sid)
        turns = []
        for i, turn in enumerate(conversation[f"session_{n}"]):
            where = f"{sid} session_{n}[{i}]"
            if not isinstance(turn, dict) or not all(
                isinstance(turn.get(k), str) for k in ("speaker", "dia_id", "text")
            ):
                raise DatasetError(f"{where} must have 'speaker', 'dia_id' and 'text' strings")
            text = f"{turn['speaker']}: {turn['text']}"
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text += f" [shares {caption.strip()}]"
            tid = f"{sid}:{turn['dia_id']}"
            turn_ids.add(tid)
            turns.append({"id": tid, "text": text, "speaker": turn["speaker"],
                          "date": start + i})  # fmt: skip
        sessions.append({"id": f"{sid}:S{n}", "turns": turns})
    if not sessions:
        raise DatasetError(f"{sid}: the conversation has no session_N turns")
    questions = []
    for i, qa in enumerate(sample["qa"]):
        category = CATEGORIES.get(qa.get("category")) if isinstance(qa, dict) else None
        if category is None:
            continue  # adversarial (5): nothing in the conversation answers it
        evidence = [f"{sid}:{d}" for d in evidence_ids(qa.get("evidence"))]
        evidence = list(dict.fromkeys(e for e in evidence if e in turn_ids))
        question = qa.get("question")
        if not evidence or not isinstance(question, str) or not question.strip():
            continue  # a few questions name no turn that exists: nothing to find
        questions.append({"id": f"{sid}:q{i}", "question": question, "evidence": evidence,
                          "category": category})  # fmt: skip
    return {"name": sid, "sessions": sessions, "questions": questions}


def evidence_ids(evidence) -> list[str]:
    """The dia_ids an `evidence` list names; LoCoMo sometimes joins two in one string.

    evidence_ids(["D1:3", "D8:6; D9:17", "D:11:26", "D30:05"])
        -> ['D1:3', 'D8:6', 'D9:17', 'D11:26', 'D30:5']
    """
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list):
        return []
    return [
        f"D{int(session)}:{int(turn)}"
        for item in evidence
        if isinstance(item, str)
        for session, turn in _DIA_ID.findall(item)
    ]


def _session_date(conversation: dict, n: int, sid: str) -> float:
    raw = conversation.get(f"session_{n}_date_time")
    try:
        moment = datetime.strptime(str(raw).strip(), _DATE)
    except ValueError:
        raise DatasetError(
            f"{sid}: session_{n}_date_time must read like '1:56 pm on 8 May, 2023', got {raw!r}"
        ) from None
    return moment.replace(tzinfo=UTC).timestamp()


def questions_in(conversations: Sequence[EvalSet]) -> int:
    return sum(len(c.questions) for c in conversations)


# --- recall on the conversations, retriever by retriever ------------------------------


def compare(
    conversations_path,
    models: Sequence[str],
    conversations: Iterable[str] | None = None,
    ks: Sequence[int] = (1, 3, 5, 10),
    progress=None,
    items: str = "turn",
) -> dict[str, dict]:
    """{retriever: {"overall": {"R@1": ..., "MRR": ...}, "by_category": {...}}}, pooled.

    Retrievers: "bm25" (evaluation/bm25.py) and relevance alone with each embedding
    model of `models`, all over the same memories (`items`: ITEM_SHAPES). Each
    conversation is its own store; the scores of every question of every conversation
    are averaged together (a question counts once, wherever it is).
    """
    from evaluation.metrics import evaluate
    from evaluation.strategies import STRATEGIES

    wanted = None if conversations is None else [sample_id(c) for c in conversations]
    samples = read_samples(conversations_path)
    missing = [c for c in wanted or () if c not in samples]
    if missing:
        raise DatasetError(
            f"{Path(conversations_path).name} has no conversation {missing[0]!r}; it has "
            f"{', '.join(samples)}"
        )
    names = wanted or list(samples)
    rows: dict[str, list[tuple[str, dict]]] = {"bm25": []} | {m: [] for m in models}
    for n, sid in enumerate(names, start=1):  # conversation outside: MiniLM's cache is reused
        for m, model in enumerate(models):
            evalset = load_dataset(as_dataset(samples[sid], sid, items), Embedder(model))
            if progress:
                progress(f"[{n}/{len(names)}] {sid}: {len(evalset.store)} turns, "
                         f"{len(evalset.questions)} questions, {model}")  # fmt: skip
            category = {q.id: q.category for q in evalset.questions}
            strategies = [("bm25", STRATEGIES["bm25"])] if m == 0 else []
            for name, strategy in [*strategies, (model, STRATEGIES["relevance"])]:
                report = evaluate(evalset, strategy, ks)
                rows[name] += [(category[q], s) for q, s in report.per_question.items()]
    return {name: _pooled(pairs) for name, pairs in rows.items()}


def _pooled(pairs: list[tuple[str, dict]]) -> dict:
    def mean(rows):
        return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}

    groups: dict[str, list] = {}
    for category, scores in pairs:
        groups.setdefault(category, []).append(scores)
    return {
        "overall": mean([s for _, s in pairs]),
        "by_category": {c: mean(g) for c, g in sorted(groups.items())},
        "questions": len(pairs),
    }


def format_comparison(results: dict[str, dict], labels: dict[str, str] | None = None) -> str:
    """The comparison as a table: one row per retriever, then R@10 by category."""
    labels = labels or {}
    first = next(iter(results.values()))
    columns = list(first["overall"])
    width = max(21, *(len(labels.get(n, n)) + 1 for n in results))
    lines = [f"{'retriever':<{width}}" + "".join(f" {c:>6}" for c in columns)]
    for name, result in results.items():
        cells = "".join(f" {result['overall'][c]:6.3f}" for c in columns)
        lines.append(f"{labels.get(name, name):<{width}}{cells}")
    metric = "R@10" if "R@10" in columns else columns[-2]
    categories = list(first["by_category"])
    lines += ["", f"{metric} by category ({first['questions']} questions)",
              f"{'retriever':<{width}}" + "".join(f" {c:>11}" for c in categories)]  # fmt: skip
    for name, result in results.items():
        cells = "".join(f" {result['by_category'][c][metric]:11.3f}" for c in categories)
        lines.append(f"{labels.get(name, name):<{width}}{cells}")
    return "\n".join(lines)
