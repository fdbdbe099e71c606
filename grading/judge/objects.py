"""The judge of the optional milestones whose inputs or answers are memories (8 and 9).

reflection_groups takes Memory objects, memory_to_record takes one, memory_from_record
returns one or refuses a record. Their cases are the checks' own tables
(teaching/checks/m8_reflection.py, m9_persistence.py): plain rows or fields, which the
parent turns into memories here (build_memories, build_memory) and sends as
{"memory": to_dict()}. The worker replies {"json": ...} (a Memory as {"memory": its
to_dict()}), "shared" when the answer holds a dict or list of the arguments themselves
(its depth: 1 the metadata itself, 2 or more something inside it), or for an exception its
class, the classes it is and the start of its message. Nothing of that is quoted: the
message is only searched for the values a refusal must name, and the classes are shown
only when they are Python's own.

The slips are the checks' own: m8_reflection.likely_slip (by the case's index in the
public table), m9_persistence.record_slip and the refusal slips, so a grader's message
names the same mistake as the notebook. reflection_groups is asked twice per case, as
the notebook's check does, to catch an answer that changes between calls.

    >>> judge_objects(cell, ask, files, failure)   # the first wrong case's message, or None
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from grading.judge import values
from grading.layout import REGISTRY
from teaching.checks import m8_reflection as m8
from teaching.checks import m9_persistence as m9

REFLECTION, TO_RECORD, FROM_RECORD = "reflection_groups", "memory_to_record", "memory_from_record"
FUNCTIONS = (REFLECTION, TO_RECORD, FROM_RECORD)
GROUPS = "a list of groups, each a list of memory ids (strings)"
VALUE_SHOWN = re.compile(r"^field (\w+): expected .*", re.DOTALL)  # a hidden case's values
A_MEMORY = SimpleNamespace(kind="Memory")  # shown as "a Memory": its fields are the expected's
CHANGED = (
    "the answer changed between two calls: no randomness and no sets, whose order is not "
    "the order given"
)


def request(cell, case) -> dict:
    """One case's inputs: the memories built from the case's plain data, as to_dict()."""
    if cell.function == REFLECTION:
        args = ([{"memory": m.to_dict()} for m in m8.build_memories(case.args[0])],)
    elif cell.function == TO_RECORD:
        args = ({"memory": m9.build_memory(case.args[0]).to_dict()},)
    else:
        args = case.args
    row = REGISTRY.MILESTONES[cell.function]
    return {
        "function": cell.function,
        "module": row.module,
        "args": values.encode(args),
        "kwargs": values.encode(case.kwargs),
    }


def _shared(reply: dict) -> int:
    depth = reply.get("shared")
    return depth if type(depth) is int and depth >= 0 else 0


def _error(reply: dict) -> SimpleNamespace | None:
    """An exception's reply, validated: its class names (strings) and message (a string)."""
    if "error" not in reply:
        return None
    bases = reply.get("bases")
    bases = [b for b in bases if type(b) is str][:12] if type(bases) is list else []
    message = reply.get("message")
    name = reply["error"] if type(reply["error"]) is str else ""
    return SimpleNamespace(name=name, bases=bases or [name],
                           message=message if type(message) is str else "")  # fmt: skip


def _reflection(case, reply, again) -> tuple[str | None, object]:
    got = values.answer_of(reply)
    if isinstance(got, SimpleNamespace):
        return f"the function returned {values._a(got.kind)}; it should return {GROUPS}", got
    if got != case.expected or not values.core.same(case.expected, got):
        index = next((i for i, c in enumerate(m8.CASES) if c == case), -1)
        return _by_rule(case, got) if index < 0 else m8.likely_slip(index, got), got
    if again is not None and values.answer_of(again) != got:
        return CHANGED, got
    return None, got


def _by_rule(case, got) -> str:
    """A case outside the notebook's table (hidden): the slip the answer shows by itself."""
    rows = {r["id"]: r for r in case.args[0]}
    ids = [i for g in got if type(g) is list for i in g] if type(got) is list else []
    if any(i in rows and rows[i]["kind"] != "episodic" for i in ids):
        return m8.FACTS_GROUPED
    if any(i in rows and rows[i]["superseded_by"] is not None for i in ids):
        return m8.ARCHIVED_GROUPED
    size = case.kwargs.get("min_size", 5)
    if type(got) is list and any(type(g) is list and len(g) < size for g in got):
        return m8.TOO_SMALL
    return m8.likely_slip(-1, got)


def _to_record(case, reply) -> tuple[str | None, object]:
    got = values.answer_of(reply)
    if isinstance(got, SimpleNamespace):
        if got.kind == "dict":  # json.dumps refused it: numpy numbers, a vector, a set
            return (f"{m9.NOT_JSON}: a value in it is no plain number, string, list or dict; "
                    f"{m9.EMBEDDING_NUMPY}"), got  # fmt: skip
        return f"return a dict (one key per field), not {values._a(got.kind)}", got
    slip = m9.record_slip(got, case.expected, m9.build_memory(case.args[0]))
    if slip is None and _shared(reply):
        slip = m9.METADATA_SHARED if _shared(reply) <= 1 else m9.METADATA_SHALLOW
    return slip, got


def _from_record(case, reply, error, hidden: bool) -> tuple[str | None, object]:
    if "raises" in case.expected:
        if error is None:  # accepted what must be refused: the check's own slips
            return m9._refusal_slip(None, case), A_MEMORY
        if "KeyError" in error.bases:
            return m9.KEY_ERROR, SimpleNamespace(kind="KeyError")
        wanted, shown = case.expected["raises"], SimpleNamespace(kind=_error_name(error))
        if wanted not in error.bases:
            return f"refuse with {wanted}, not {shown.kind}", shown
        unnamed = [v for v in case.expected["naming"] if v not in error.message]
        if unnamed:
            which = "the value(s) at fault" if hidden else ", ".join(map(repr, unnamed))
            return (f"refused, but the message does not name {which}: say which value and "
                    "which rule"), shown  # fmt: skip
        return None, shown
    got = values.answer_of(reply)
    memory = got.get("memory") if type(got) is dict and len(got) == 1 else None
    if type(memory) is not dict:
        kind = got.kind if isinstance(got, SimpleNamespace) else "plain value"
        return f"return a Memory, not {values._a(kind)}", got
    if _shared(reply):
        return m9.RECORD_SHARED, A_MEMORY
    for name, want in case.expected.items():
        value = memory.get(name)
        if value != want or type(value) is not type(want):
            if m9._close_not_equal(value, want):
                return f"{m9.ROUNDED} (field {name})", A_MEMORY
            return f"field {name}: expected {want!r}, got {value!r}"[:300], A_MEMORY
    return None, A_MEMORY


def _error_name(error: SimpleNamespace) -> str:
    return error.name if error.name in values.ERRORS else "another exception"


def judge_objects(cell, ask, files, failure) -> str | None:
    """Ask the worker every case of `cell`; the first wrong case's message, or None."""
    where = f"  (fix it in {REGISTRY.where(cell.function)})"
    for case in cell.cases:
        sent = request(cell, case)
        reply = ask(sent)
        if reply is None or reply.get("stub") is True:
            return failure(reply, cell.function, files)
        error = _error(reply)
        expected_refusal = cell.function == FROM_RECORD and "raises" in case.expected
        if error is not None and not expected_refusal:
            if cell.function == FROM_RECORD and "earlier than created_at" in error.message:
                slip = m9.EARLY_REFUSED  # the constructor's words: built with the early recall
                got = SimpleNamespace(kind=_error_name(error))
            else:
                return failure(reply, cell.function, files)
        elif cell.function == REFLECTION:
            again = ask(sent)
            if again is None or again.get("stub") is True or "error" in again:
                return failure(again, cell.function, files)
            slip, got = _reflection(case, reply, again)
        elif cell.function == TO_RECORD:
            slip, got = _to_record(case, reply)
        else:
            slip, got = _from_record(case, reply, error, cell.hidden)
        if slip is None:
            continue
        if cell.hidden:
            slip = VALUE_SHOWN.sub(r"field \1 does not hold the value it should (exactly)", slip)
            return (
                f"{cell.function}: a hidden case failed (its inputs stay hidden)\n"
                f"  likely mistake: {slip}\n{where}"
            )
        return (
            f"{_call(cell.function, case)}\n  expected: {_expected(case)}\n"
            f"  got:      {_got(got)}\n  likely mistake: {slip}\n{where}"
        )
    return None


def _call(function: str, case) -> str:
    if function == REFLECTION:
        return m8._shown(case)
    if function == TO_RECORD:
        return m9._show_to(case)
    return m9._show_from(case)


def _expected(case) -> str:
    want = case.expected
    if isinstance(want, dict) and "raises" in want:
        return f"{want['raises']} naming {', '.join(map(repr, want['naming']))}"
    return values._shown(want)


def _got(got) -> str:
    if isinstance(got, SimpleNamespace):
        return values._a(got.kind)
    return values._shown(got)
