"""The grading worker: runs a learner's functions on inputs, inside the sandbox.

Started by grading/sandbox/launcher.py as `python -I -B worker.py CONFIG`. It imports the
learner's files, then answers one request per line on stdin with one JSON line:
the inputs of one case in, what the learner's function returned out (a float, a type
name, the class and line of an exception, or the ids a retriever returned). It never
sees an expected value, a case's label or the hidden case table, and it decides
nothing: the trusted parent (grading/judge/verdict.py) compares and scores.

In the Milestone 4 run the learner's retriever imports a `scoring` that is no file: a proxy
(`proxy`) answered by the parent, so the reference solution never runs, or lies readable,
in a process that runs learner code. Each case comes with the parent's answers to the
scoring calls about its own memories (numbers, keyed by the call); any other call is sent
to the parent as {"call": ...} and waits for its answer.

Everything here may be tampered with by the learner's code, which runs in this very
process: the parent trusts nothing it sends back beyond what it can validate.
Deliberately left out: any import of the grading package (this file runs alone).
"""

import builtins
import importlib
import json
import math
import numbers
import os
import resource
import sys
import traceback
import types
from collections.abc import Mapping, Sequence
from datetime import datetime

SCORING = (
    "recency_score",
    "importance_score",
    "relevance_score",
    "retrieval_score",
    "kind_recency_score",
)


def limit(config: dict) -> None:
    """Lower every limit (soft = hard, so they cannot be raised again), then drop root."""
    for name, value in config["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    uid = config.get("uid")
    if os.getuid() == 0 and uid:  # root in the sandbox: limits are only enforced below it
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() == 0 or os.geteuid() == 0:
            raise SystemExit("could not drop root")


def where(error: BaseException) -> dict:
    """The learner file (or own module) and line an exception came from (the parent reads
    the line, from its own copy, and only of a file it staged)."""
    found = {"file": None, "line": None}
    if isinstance(error, SyntaxError) and error.filename:
        name = staged(error.filename) or os.path.basename(error.filename)
        if name.endswith(".py"):
            return {"file": name, "line": error.lineno}
    for frame in traceback.extract_tb(error.__traceback__):
        name = staged(frame.filename or "")
        if name and name.endswith(".py"):
            found = {"file": name, "line": frame.lineno}
    return found


def staged(filename: str) -> str | None:
    """'practice/reflection.py' for a file the learner's folder holds, else None."""
    if os.path.dirname(filename) == LEARNER:
        return os.path.basename(filename)
    folder, name = os.path.split(os.path.dirname(filename)), os.path.basename(filename)
    if folder[0] == LEARNER and folder[1].isidentifier():  # one package down: practice/
        return f"{folder[1]}/{name}"
    return None


def crash(error: BaseException) -> dict:
    """A stub, or an exception: its class, the classes it is (a refusal may be a subclass),
    the start of its message (read by the parent, never quoted) and where it came from."""
    if type(error) is NotImplementedError:
        return {"stub": True}
    try:
        bases = [cls.__name__ for cls in type(error).__mro__][:12]
        message = str(error)[:2000]
    except BaseException:  # a message that raises is no message
        bases, message = [], ""
    return {"error": type(error).__name__, "bases": bases, "message": message, **where(error)}


def number(value) -> dict:
    """A plain float for the parent, or the name of the type that came back instead."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)  # numpy floats too; an always-equal object is no Real
        if type(value) is float:
            return {"value": value}
    return {"type": type(value).__name__}


def decode(value):
    if isinstance(value, dict) and "datetime" in value:
        return datetime.fromisoformat(value["datetime"])
    if isinstance(value, dict) and "memory" in value:  # an optional milestone's memory
        from memory_store import Memory

        fields = dict(value["memory"])  # recalled a moment before created_at: two clocks
        memory = Memory.from_dict({**fields, "last_accessed": fields.get("created_at")})
        memory.last_accessed = fields.get("last_accessed")
        return memory
    if isinstance(value, dict):
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def plain(value):
    """A call's argument as JSON: numbers, strings, datetimes, and lists or mappings of them."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if hasattr(value, "tolist"):  # a numpy array or scalar
        return plain(value.tolist())
    if isinstance(value, Sequence):  # lists, tuples, the store's Float32Vector
        return [plain(item) for item in value]
    raise TypeError(f"the grader's scoring takes numbers, vectors and tables, got {type(value)}")


def call_key(call: dict, parameters: Mapping) -> str | None:
    """A scoring call as one JSON text: its arguments bound to the function's parameters,
    defaults filled in. The key of the parent's table of answers; None if it cannot bind."""
    params, args, kwargs = parameters.get(call.get("call")), call.get("args"), call.get("kwargs")
    if not isinstance(params, list) or not isinstance(args, list) or not isinstance(kwargs, dict):
        return None
    names = [param[0] for param in params]
    if len(args) > len(names) or not set(kwargs) <= set(names[len(args) :]):
        return None
    given = {**dict(zip(names, args)), **kwargs}
    if any(name not in given and len(param) < 2 for name, param in zip(names, params)):
        return None
    values = [given[name] if name in given else param[1] for name, param in zip(names, params)]
    return json.dumps([call["call"], values], sort_keys=True)


def forwarded(name: str):
    """The proxy of one scoring function: the parent computes it, on this case's inputs only.

    The case came with the parent's answers to the calls about its own memories (SCORES):
    one of those is answered from there, any other call is sent to the parent.
    """

    def function(*args, **kwargs):
        call = {"call": name, "args": plain(list(args)), "kwargs": plain(kwargs)}
        known = SCORES.get("answers", {}).get(call_key(call, SCORES.get("parameters", {})))
        if type(known) is float:
            return known
        CHANNEL.write(json.dumps(call) + "\n")
        CHANNEL.flush()
        reply = json.loads(REPLIES.readline() or "{}")
        if type(reply.get("value")) is float:
            return reply["value"]
        if "raise" in reply:
            error = getattr(builtins, str(reply["raise"]), ValueError)
            raise error(f"{name}: the reference scoring refused this input")
        raise PermissionError(f"{name}: the grader's scoring answers for the case's own memories")

    function.__name__ = function.__qualname__ = name
    return function


def proxy() -> types.ModuleType:
    """A `scoring` module whose functions are answered by the parent (grading/judge/oracle.py)."""
    from base.defaults import DECAY_RATE, HALF_LIVES, WEIGHTS

    module = types.ModuleType("scoring", "The reference scoring, answered by the grader.")
    module.DECAY_RATE, module.HALF_LIVES, module.WEIGHTS = DECAY_RATE, HALF_LIVES, WEIGHTS
    for name in SCORING:
        setattr(module, name, forwarded(name))
    return module


def build_store(request: dict):
    from memory_store import Memory, MemoryStore

    store = MemoryStore()
    for row in request["memories"]:
        store.add(
            Memory(
                row["id"],
                f"memory {row['id']}",
                kind=row.get("kind", "episodic"),
                created_at=row["created_at"],
                last_accessed=row["last_accessed"],
                importance=row["importance"],
                embedding=row["embedding"],
            )
        )
    for old, new in request["superseded"]:
        store.supersede(old, new)
    return store


def shape(result, store) -> str | None:
    """What kind of thing a retriever returned, as a tag the parent knows."""
    from memory_store import Memory

    if result is None:
        return "none"
    if type(result) is not list:
        return "not_list"
    for item in result:
        if hasattr(item, "memory") and hasattr(item, "score"):
            return "rows"
        if isinstance(item, str):
            return "ids"
        if isinstance(item, (int, float)):
            return "scores"
        if isinstance(item, tuple):
            return "tuples"
        if type(item) is not Memory:
            return "other"
        if store.get(item.id) is not item:
            return "copies"
    return None


def retrieval(request: dict) -> dict:
    store = build_store(request)
    function = getattr(MODULES["retriever"], request["function"])
    args = (store, request["query"], request["now"])
    kwargs = {key: request[key] for key in ("k", "weights", "decay_rate", "half_lives")
              if key in request}  # fmt: skip
    result = function(*args, **kwargs)
    if request["function"] == "rank_memories":
        if type(result) is not list or not all(hasattr(r, "memory") for r in result):
            return {"shape": "not_rows"}
        ids = [str(row.memory.id) for row in result]
        top = result[0] if result else None
        signals = [top.relevance, top.recency, top.importance, top.score] if top else []
        signals = [number(s).get("value", math.nan) for s in signals]
        accessed = {m.id: float(m.last_accessed) for m in store}
        return {"shape": None, "ids": ids, "signals": signals, "accessed": accessed}
    tag = shape(result, store)
    if tag:
        return {"shape": tag}
    accessed = {m.id: float(m.last_accessed) for m in store}
    return {"shape": None, "ids": [m.id for m in result], "accessed": accessed}


def containers(value, depth: int = 0, seen: dict | None = None) -> dict:
    """{id of every dict and list inside `value` (a Memory's fields too): its depth}."""
    seen = {} if seen is None else seen
    if depth > 8 or len(seen) > 10_000:
        return seen
    if type(value).__name__ == "Memory" and hasattr(value, "to_dict"):
        for name in getattr(value, "__dataclass_fields__", {}):
            containers(getattr(value, name, None), depth + 1, seen)
    elif isinstance(value, (dict, list, tuple)):
        if not isinstance(value, tuple):
            seen.setdefault(id(value), depth)
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            containers(item, depth + 1, seen)
    return seen


def json_value(value, args=(), kwargs=None) -> dict:
    """An optional milestone's answer as plain JSON (a Memory as {"memory": its to_dict()}),
    or the name of its type; "shared": the least depth at which the answer holds a dict or
    list of the arguments themselves (the parent validates it all again:
    grading/judge/values.py, objects.py)."""
    reply = {}
    given = containers([list(args), kwargs or {}])
    shared = [depth for key, depth in containers(value).items() if key in given]
    if shared:
        reply["shared"] = min(shared)
    if type(value).__name__ == "Memory" and hasattr(value, "to_dict"):
        try:
            value = {"memory": value.to_dict()}
        except BaseException:
            return {"type": "Memory"}
    try:
        text = json.dumps(value, allow_nan=True)  # tuples become lists; anything else fails
    except (TypeError, ValueError, RecursionError):
        return {**reply, "type": type(value).__name__}
    if len(text) > 100_000:
        return {**reply, "type": type(value).__name__}
    return {**reply, "json": json.loads(text)}


def answer(request: dict) -> dict:
    global SCORES
    scores = request.pop("scores", None)
    SCORES = scores if isinstance(scores, dict) else {}  # this case's answers, none other's
    try:
        if "memories" in request:
            return retrieval(request)
        if "module" in request:  # an optional milestone: plain values in and out
            function = getattr(MODULES[request["module"]], request["function"])
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
            return json_value(function(*args, **kwargs), args, kwargs)
        function = getattr(MODULES["scoring"], request["function"])
        args, kwargs = decode(request["args"]), decode(request["kwargs"])
        return number(function(*args, **kwargs))
    except BaseException as error:  # SystemExit too: the learner's exit is a finding
        return crash(error)


def main() -> None:
    global LEARNER, CHANNEL
    config = json.loads(sys.argv[1])
    LEARNER = config["learner"]
    channel = CHANNEL = os.fdopen(os.dup(1), "w")  # replies; fd 1 is stderr for learner prints
    os.dup2(2, 1)
    limit(config)
    sys.path[:0] = [LEARNER, config["provided"]]
    os.chdir(LEARNER)
    if config.get("proxy"):  # the Milestone 4 run: scoring is answered by the parent
        sys.modules["scoring"] = proxy()
    for name in config["modules"]:
        try:
            MODULES[name] = importlib.import_module(name)  # "scoring", "practice.reflection"
        except BaseException as error:
            reply = {"import_error": name, **crash(error)}
            channel.write(json.dumps(reply) + "\n")
            channel.flush()
            return
    channel.write(json.dumps({"ready": True}) + "\n")
    channel.flush()
    for line in sys.stdin:
        channel.write(json.dumps(answer(json.loads(line))) + "\n")
        channel.flush()


MODULES: dict = {}
LEARNER = ""
CHANNEL = sys.stdout  # where calls and replies go out (main: a copy of the first stdout)
REPLIES = sys.stdin  # where the parent's requests and answers come in
SCORES: dict = {}  # the parent's answers to the case's own scoring calls (Oracle.scores)

if __name__ == "__main__":
    main()
