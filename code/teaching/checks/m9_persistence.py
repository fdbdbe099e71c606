"""Optional milestone 9: the checks of memory_to_record and memory_from_record.

Every case is plain data. For memory_to_record, Case.args holds the memory's fields as a
dict (the check builds the Memory from them) and Case.expected the record, key by key.
For memory_from_record, Case.args is (record, user_id) and Case.expected either the
fields of the memory built, or {"raises": "ValueError", "naming": [...]}: a refusal whose
message names each of those values. Numbers are compared exactly: a record is a copy,
not an approximation (JSON keeps every digit of a float). The embeddings hold float32
values (a Memory keeps 4 bytes a value), so 0.1 is kept as 0.10000000149011612.

The slips named: a number rounded or sent through a string, the embedding left as the
store's compact vector or as numpy (not JSON), a None field left out, metadata shared with
the memory (or copied one level only), last_accessed swapped for created_at; on the way
in, a record of another user accepted, a missing field filled in, a missing field
reported as a KeyError, an unknown field accepted, a recall a moment before created_at
refused, and the record's metadata dict shared with the memory.

Deliberately left out: the reference solution; only answers and slips are written down.

    >>> check_memory_to_record()     # prints "memory_to_record: 5 checks passed"
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable

from memory_store import Memory
from teaching.checks.core import Case, CheckFailed, Crash, attempt, learner_function, passed, report

# Every key of a record: the provided Memory's fields, in their order. Read from
# memory_store, never from the learner's practice/persistence.py: a RECORD_FIELDS edited
# there must not move what this check expects (a test holds the two equal).
FIELDS = tuple(field.name for field in dataclasses.fields(Memory))
F32_TENTH = 0.10000000149011612  # 0.1 as a float32 holds it
F32_THIRD = 0.3333333432674408  # 1/3 as a float32 holds it


def fields(
    memory_id="m1",
    text="Alice likes tea",
    kind="semantic",
    created_at=999_000.0,
    last_accessed=999_500.25,
    importance=7,
    embedding=(0.6000000238418579, 0.800000011920929),
    embedding_model=None,
    superseded_by=None,
    metadata=None,
    user_id="alice",
) -> dict:
    """A memory's fields as plain data (a record, when every value is already exact)."""
    return {
        "id": memory_id,
        "text": text,
        "kind": kind,
        "created_at": created_at,
        "last_accessed": last_accessed,
        "importance": importance,
        "embedding": list(embedding),
        "embedding_model": embedding_model,
        "superseded_by": superseded_by,
        "metadata": {} if metadata is None else metadata,
        "user_id": user_id,
    }


def build_memory(values: dict) -> Memory:
    """The Memory a case's plain fields describe (what the check and the grader run on)."""
    given = json.loads(json.dumps(values))  # the case's own data is never shared
    memory = Memory(**{**given, "last_accessed": given["created_at"]})
    memory.last_accessed = given["last_accessed"]  # a recall may come a moment earlier
    return memory


EXACT = fields(
    "m7",
    "Meeting moved to 14:30 — café Zoë ☕",
    "episodic",
    created_at=1_000_000.0 + 1 / 3,
    last_accessed=1_000_123.456789012,
    importance=5.5,
    embedding=(F32_TENTH, -F32_THIRD, 0.0),
    embedding_model="memorylab/hashed-bow-384",
    metadata={"source": "chat", "turn": 12, "weights": [0.1, 1e-7]},
)
NESTED = fields(
    "m3",
    "Bob prefers the window seat",
    metadata={"tags": ["travel", "seat"], "evidence": {"ids": ["e1", "e2"]}},
    superseded_by="m4",
    user_id="bob",
)
EARLY = fields("m9", "recalled a moment before it was written", last_accessed=998_999.5)

# Case.args = (the memory's fields,), Case.expected = the record
TO_RECORD_CASES = [
    Case((fields(),), fields(), {}, "a fact of alice's, no model, not superseded"),
    Case((EXACT,), EXACT, {}, "unicode, 1e6 + 1/3 seconds, importance 5.5, float32 values"),
    Case((NESTED,), NESTED, {}, "bob's archived fact with nested metadata"),
    Case((EARLY,), EARLY, {}, "recalled half a second before created_at (two clocks)"),
    Case(
        (fields("m5", "x", "procedural", 1.0, 253_402_300_799.0, 1, (1.0, 0.0, 0.0, 0.0)),),
        fields("m5", "x", "procedural", 1.0, 253_402_300_799.0, 1, (1.0, 0.0, 0.0, 0.0)),
        {},
        "year 1 and the last second of year 9999, importance 1",
    ),
]


def refused(*naming: str, error: str = "ValueError") -> dict:
    """A refusal: `error` (or a subclass of it), its message naming each value."""
    return {"raises": error, "naming": list(naming)}


def _without(record: dict, name: str) -> dict:
    return {k: v for k, v in record.items() if k != name}


# Case.args = (record, user_id), Case.expected = the memory's fields, or refused(...)
FROM_RECORD_CASES = [
    Case((fields(), "alice"), fields(), {}, "alice's own record"),
    Case((EXACT, "alice"), EXACT, {}, "unicode, 1e6 + 1/3 seconds, float32 values"),
    Case((EARLY, "alice"), EARLY, {}, "recalled half a second before created_at"),
    Case((NESTED, "alice"), refused("bob", "alice"), {}, "a record of bob's, into alice's store"),
    Case(
        (_without(fields(), "last_accessed"), "alice"),
        refused("last_accessed"),
        {},
        "a record without last_accessed",
    ),
    Case(
        (_without(fields(), "superseded_by"), "alice"),
        refused("superseded_by"),
        {},
        "a record without superseded_by",
    ),
    Case(
        ({**fields(), "colour": "blue"}, "alice"),
        refused("colour"),
        {},
        "a record with a field more",
    ),
    Case(
        ({**fields(), "importance": "high"}, "alice"),
        refused("importance", error="TypeError"),
        {},
        "importance 'high', a word where a rating belongs",
    ),
]

# --- the slips ----------------------------------------------------------------------------

NOT_JSON = "the record is not JSON data"
ROUNDED = (
    "a number lost digits (rounded, or sent through a string or a float32): a record keeps "
    "every value exactly as the memory holds it"
)
EMBEDDING_NOT_LIST = (
    "the embedding is not a list: the memory keeps a compact vector; give the record a "
    "list of Python floats (iterate the embedding)"
)
EMBEDDING_NUMPY = (
    "the embedding holds numpy numbers, which JSON cannot write: convert each with float()"
)
NONE_DROPPED = "a field that is None was left out: write it as None (null in JSON), never drop it"
METADATA_SHARED = (
    "the record's metadata is the memory's own dict: a change to one changes the other; "
    "give the record a copy"
)
METADATA_SHALLOW = (
    "the metadata was copied one level only: its inner lists and dicts are still the "
    "memory's; copy it all the way down (a deep copy)"
)
LAST_AS_CREATED = "last_accessed was written as created_at: each field keeps its own value"
OTHER_USER = (
    "a record of another user was accepted: compare record['user_id'] with user_id and "
    "refuse (ValueError) naming both"
)
FILLED_IN = (
    "a record with a missing field was accepted (a default filled it in): refuse it, "
    "naming the field, as nothing in the file says what it was"
)
KEY_ERROR = (
    "a missing field raised KeyError: check every field of RECORD_FIELDS first and raise "
    "ValueError naming the ones missing"
)
EXTRA_ACCEPTED = "a record with an unknown field was accepted: refuse it, naming the field"
EARLY_REFUSED = (
    "a recall a moment before created_at was refused: the constructor refuses it, so build "
    "the memory with last_accessed = created_at, then assign the record's last_accessed"
)
RECORD_SHARED = (
    "the memory's metadata is the record's dict: a change to the record changes the stored "
    "memory; give the memory its own (deep) copy"
)


def _plain(value):
    """A value as JSON would carry it, to compare (numpy numbers and tuples included)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        value = value.tolist() if hasattr(value, "tolist") else value
        return [_plain(v) for v in value] if isinstance(value, list) else value
    return value


def _close_not_equal(a, b) -> bool:
    """Numbers, or lists of numbers, equal to a relative 1e-5 but not exactly."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = list(zip(a, b))
    else:
        pairs = [(a, b)]
    numbers = all(isinstance(x, (int, float)) and isinstance(y, (int, float)) for x, y in pairs)
    return (
        numbers
        and any(x != y for x, y in pairs)
        and all(math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-9) for x, y in pairs)
    )


def _shares(inner, outer) -> bool:
    """Whether a dict or list inside `inner` is the very object inside `outer`."""
    if isinstance(inner, (dict, list)) and inner is outer:
        return True
    if isinstance(inner, dict) and isinstance(outer, dict):
        return any(_shares(inner[k], outer[k]) for k in inner if k in outer)
    if isinstance(inner, list) and isinstance(outer, list):
        return any(_shares(a, b) for a, b in zip(inner, outer))
    return False


def record_slip(record, expected: dict, memory: Memory) -> str | None:
    """What is off in `record` (memory_to_record's answer), or None when it is right."""
    if not isinstance(record, dict):
        return f"return a dict (one key per field), not a {type(record).__name__}"
    missing = [name for name in expected if name not in record]
    if missing:
        if all(expected[name] is None for name in missing):
            return f"{NONE_DROPPED} (missing: {', '.join(missing)})"
        return f"field(s) {', '.join(missing)} missing: a record has every field of RECORD_FIELDS"
    extra = [name for name in record if name not in expected]
    if extra:
        return f"field(s) {', '.join(map(str, extra))} are not fields of a memory: leave them out"
    embedding = record["embedding"]
    if not isinstance(embedding, list):
        if hasattr(embedding, "dtype"):
            return EMBEDDING_NUMPY + f" (got a {type(embedding).__name__})"
        return EMBEDDING_NOT_LIST + f" (got a {type(embedding).__name__})"
    if any(type(x) is not float for x in embedding):
        return (
            EMBEDDING_NUMPY
            + f" (got {type(next(x for x in embedding if type(x) is not float)).__name__})"
        )
    if record["metadata"] is memory.metadata:
        return METADATA_SHARED
    if _shares(record["metadata"], memory.metadata):
        return METADATA_SHALLOW
    for name, want in expected.items():
        got = _plain(record[name])
        if got == want and type(got) is type(want):
            continue
        if name == "last_accessed" and got == expected["created_at"]:
            return LAST_AS_CREATED
        if _close_not_equal(got, want):
            return f"{ROUNDED} (field {name})"
        return f"field {name}: expected {want!r}, got {record[name]!r}"
    try:
        json.dumps(record, allow_nan=False)
    except (TypeError, ValueError) as error:
        return f"{NOT_JSON}: {error}"
    return None


def _show_to(case: Case) -> str:
    return f"memory_to_record(memory)  # {case.call}\n  memory's fields: {case.args[0]}"


def _show_from(case: Case) -> str:
    record, user_id = case.args
    return f"memory_from_record(record, {user_id!r})  # {case.call}\n  record: {record}"


def run_to_record_case(case: Case, function: Callable | None = None) -> None:
    """Run memory_to_record on one case; raise CheckFailed naming the slip."""
    name = "memory_to_record"
    function = function or learner_function(name)
    memory = build_memory(case.args[0])
    got = attempt(name, function, memory)
    if isinstance(got, Crash):
        raise report(_show_to(case), case.expected, str(got), got.hint, name)
    slip = record_slip(got, case.expected, memory)
    if slip:
        raise report(_show_to(case), case.expected, got, slip, name)


def _memory_slip(got, case: Case, record: dict) -> str | None:
    """What is off in the memory memory_from_record returned, or None when it is right."""
    if not isinstance(got, Memory):
        return f"return a Memory, not a {type(got).__name__}"
    if got.metadata is record["metadata"] or _shares(got.metadata, record["metadata"]):
        return RECORD_SHARED
    for name, want in case.expected.items():
        value = getattr(got, name)
        value = [float(x) for x in value] if name == "embedding" else _plain(value)
        if value != want:
            if _close_not_equal(value, want):
                return f"{ROUNDED} (field {name})"
            return f"field {name}: expected {want!r}, got {value!r}"
    return None


def _refusal_slip(got, case: Case) -> str | None:
    """What is off in the answer to a record that must be refused, or None when refused well."""
    record, user_id = case.args
    naming = case.expected["naming"]
    if isinstance(got, Crash):
        error = got.error
        if isinstance(error, KeyError):
            return KEY_ERROR
        wanted = case.expected["raises"]
        if wanted not in {cls.__name__ for cls in type(error).__mro__}:
            return f"refuse with {wanted}, not {type(error).__name__}"
        unnamed = [value for value in naming if value not in str(error)]
        if unnamed:
            return (
                f"refused, but the message does not name {', '.join(unnamed)}: say which "
                "value and which rule"
            )
        return None
    if record.get("user_id") not in (None, user_id):
        return OTHER_USER
    if any(name not in record for name in FIELDS):
        return FILLED_IN
    if any(name not in FIELDS for name in record):
        return EXTRA_ACCEPTED
    return "this record must be refused with a ValueError naming the value and the rule"


def run_from_record_case(case: Case, function: Callable | None = None) -> None:
    """Run memory_from_record on one case; raise CheckFailed naming the slip."""
    name = "memory_from_record"
    function = function or learner_function(name)
    record = json.loads(json.dumps(case.args[0]))  # a fresh record, as read from a file
    got = attempt(name, function, record, case.args[1])
    expected = case.expected
    if "raises" in expected:
        slip = _refusal_slip(got, case)
        if slip:
            shown = str(got) if isinstance(got, Crash) else got
            want = f"{expected['raises']} naming {', '.join(map(repr, expected['naming']))}"
            raise report(_show_from(case), want, shown, slip, name)
        return
    if isinstance(got, Crash):
        hint = EARLY_REFUSED if "earlier than created_at" in str(got.error) else got.hint
        raise report(_show_from(case), "a Memory with these fields", str(got), hint, name)
    slip = _memory_slip(got, case, record)
    if slip:
        raise report(_show_from(case), expected, got, slip, name)


def run_persistence_cases(name: str, cases: list[Case], function: Callable | None = None) -> None:
    """Run several cases of one function (the grader's hidden ones, say); print the count."""
    run = run_to_record_case if name == "memory_to_record" else run_from_record_case
    for case in cases:
        run(case, function)
    passed(name, len(cases))


def check_memory_to_record(function: Callable | None = None) -> None:
    """Optional milestone 9, part 1: every field, exact numbers, lists, None kept, own metadata."""
    run_persistence_cases("memory_to_record", TO_RECORD_CASES, function)


def check_memory_from_record(function: Callable | None = None) -> None:
    """Optional milestone 9, part 2: exact fields, early recalls, refusals that name the value."""
    run_persistence_cases("memory_from_record", FROM_RECORD_CASES, function)


__all__ = [
    "FROM_RECORD_CASES",
    "TO_RECORD_CASES",
    "CheckFailed",
    "build_memory",
    "check_memory_from_record",
    "check_memory_to_record",
    "fields",
    "refused",
    "run_from_record_case",
    "run_persistence_cases",
    "run_to_record_case",
]


# --- the prediction of notebook 07h: which records are refused? ------------------------

PREDICTION = "07h.refused"  # its key on the hint ladder
TO_IMPORT = {  # what each record is, into alice's store
    "r1": "alice's fact, every field present",
    "r2": "bob's fact, every field present",
    "r3": "alice's episode without the superseded_by field (it was None, and left out)",
    "r4": "alice's episode recalled half a second before its created_at (two clocks)",
}
REFUSED = {"r2": "another user's record", "r3": "a field is missing: nothing says what it was"}
ACCEPTED = {
    "r1": "a complete record of alice's",
    "r4": "a recall a moment early is a fact of two clocks; the memory keeps it",
}


def check_refusal_prediction(refused, *, reveal: bool = False) -> None:
    """Your prediction of which TO_IMPORT records are refused, on the hint ladder."""
    from teaching.checks.ladder import reveal_hint, revealed, was_revealed, wrong_try

    if reveal:
        revealed(PREDICTION)
        why = [f"  {i}: refused, {w}" for i, w in REFUSED.items()]
        why += [f"  {i}: accepted, {w}" for i, w in ACCEPTED.items()]
        raise CheckFailed("the answer, as asked:\n" + "\n".join(sorted(why)))
    if refused is None:  # no stop: which are refused is shown only by this check
        print("no prediction yet: set my_refused to the ids you expect refused, then run this cell")
        return
    if not isinstance(refused, (set, list, tuple)) or not all(isinstance(i, str) for i in refused):
        raise CheckFailed(f"a prediction is a set of record ids, e.g. {{'r1'}}; got {refused!r}")
    refused = set(refused)
    unknown = sorted(refused - set(TO_IMPORT))
    if unknown:
        raise CheckFailed(f"{', '.join(unknown)}: not a record here (r1 to r4)")
    if refused == set(REFUSED):
        said = " (as the answer said)" if was_revealed(PREDICTION) else ""
        print(f"prediction right{said}: {sorted(REFUSED)} are refused")
        return
    rung = wrong_try(PREDICTION, tuple(sorted(refused)))
    too_many, too_few = refused - set(REFUSED), set(REFUSED) - refused
    lines = [f"not quite: {sorted(refused)}"]
    if too_many:
        lines.append(f"  {len(too_many)} of yours would be accepted")
    if too_few:
        lines.append(f"  {len(too_few)} more would be refused")
    if rung >= 2:
        off = sorted(too_many | too_few)
        lines.append(
            f"  next step: look again at {', '.join(off)}: is anything missing, is it someone "
            "else's, or is it only odd?"
        )
    lines.append(reveal_hint("check_refusal_prediction(my_refused, reveal=True)"))
    raise CheckFailed("\n".join(lines))
