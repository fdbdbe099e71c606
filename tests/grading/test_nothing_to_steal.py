"""Nothing a learner's code can carry out of the sandbox is worth anything.

The Milestone 4 run holds no reference: its `scoring` is a proxy the trusted parent answers
(grading/judge/oracle.py), so no source or bytecode of it is there to read, and a sender in that
run that writes what it finds into the host's page cache (one page of a large read-only
file per bit, as a student's receiver outside reads it back with preadv2(RWF_NOWAIT)) has
nothing of the reference to write. The channel itself stays open, measured here: hidden
and public inputs are drawn afresh for every grading, so what it carries is spent.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from grading.judge import grader
from grading.judge.grader import grade
from grading.judge.oracle import Oracle
from grading.layout import ROOT
from grading.markers import clear_solutions

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt bwrap)"),
]

PAGE = 4096
SPACING = 4 * PAGE  # one bit every 16 KB of the carrier: no readahead blurs two bits
PATTERN = [1, 0, 1, 1, 0, 0, 1, 0] * 8  # 64 known bits: what the channel carries at all
PAYLOAD = 48  # bytes of the reference the sender tries to carry
BITS = len(PATTERN) + 16 + 8 * PAYLOAD


def submission(tmp_path: Path, retriever_head: str) -> Path:
    """The student edition's scoring (stubs) and the reference retriever, with a head."""
    code = tmp_path / "sub" / "code"
    code.mkdir(parents=True)
    scoring = (ROOT / "code" / "scoring.py").read_text(encoding="utf-8")
    (code / "scoring.py").write_text(clear_solutions(scoring, "code/scoring.py"))
    retriever = (ROOT / "code" / "retriever.py").read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"  # subtle: it must stay the first statement
    (code / "retriever.py").write_text(future + retriever_head + retriever.replace(future, ""))
    return code.parent


def cached(fd: int, offset: int) -> bool | None:
    """Whether the page at `offset` is in the page cache (None: the kernel cannot say).

    subtle: a miss starts the kernel's readahead of the pages after it, so a probe is read
    once, the pages of a message are probed last to first, and evicted after.
    """
    try:
        os.preadv(fd, [bytearray(1)], offset, os.RWF_NOWAIT)
    except BlockingIOError:
        return False
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EINVAL):
            return None
        raise
    return True


def carrier() -> Path:
    """A large file the sandbox and any user can read whose pages nobody else holds."""
    roots = [Path("/usr/lib"), Path("/usr/share"), Path(sys.prefix)]
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = Path(folder) / name
                if path.is_symlink() or not path.is_file():
                    continue
                if path.stat().st_size < BITS * SPACING + PAGE or path.stat().st_mode & 0o004 == 0:
                    continue
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    states = {cached(fd, n * SPACING) for n in reversed(range(BITS))}
                    evict(fd)
                    if None in states:
                        pytest.skip("this kernel or filesystem cannot tell cached pages")
                    if states == {False} and carries(fd):  # nobody else holds its pages
                        return path
                finally:
                    os.close(fd)
    pytest.skip("no large read-only file here whose pages nobody else holds")


def carries(fd: int) -> bool:
    """Whether one page marked per bit reads back as exactly that bit (no readahead blur)."""
    bits = [n % 3 == 0 for n in range(BITS)]
    for n, bit in enumerate(bits):
        if bit:
            os.posix_fadvise(fd, n * SPACING, PAGE, os.POSIX_FADV_WILLNEED)
    time.sleep(0.2)
    seen = [cached(fd, n * SPACING) for n in reversed(range(BITS))][::-1]
    evict(fd)
    return seen == bits


def evict(fd: int) -> None:
    """Drop the file's pages, once the readahead that the probes started has landed."""
    time.sleep(0.3)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


SENDER = """
import inspect as _inspect
import os as _os


def _send(carrier, spacing, pattern, payload):
    source = ""
    try:
        import scoring as _scoring
        source = _inspect.getsource(_scoring)
    except Exception:
        pass
    for path in ("/learner/scoring.py", "/learner/__pycache__"):
        try:
            source = source or open(path).read()
        except OSError:
            pass
    lines, inside = [], False
    for line in source.splitlines():
        if "END SOLUTION" in line:
            inside = False
        if inside:
            lines.append(line.strip())
        if "BEGIN SOLUTION" in line:
            inside = True
    found = " ".join(lines).encode()[:payload]
    bits = list(pattern) + [(len(found) >> i) & 1 for i in range(16)]
    bits += [(byte >> i) & 1 for byte in found for i in range(8)]
    fd = _os.open(carrier, _os.O_RDONLY)
    for n, bit in enumerate(bits):
        if bit:
            _os.posix_fadvise(fd, n * spacing, 4096, _os.POSIX_FADV_WILLNEED)
    _os.close(fd)


_send(__CARRIER__, __SPACING__, __PATTERN__, __PAYLOAD__)
"""


def receive(path: Path) -> tuple[int, bytes]:
    """(bits of the known pattern read right, the payload the sender carried out)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        time.sleep(0.5)  # WILLNEED reads ahead asynchronously
        bits = [int(bool(cached(fd, n * SPACING))) for n in reversed(range(BITS))][::-1]
        evict(fd)  # leave the cache as it was
    finally:
        os.close(fd)
    right = sum(a == b for a, b in zip(bits, PATTERN))
    rest = bits[len(PATTERN) :]
    length = min(PAYLOAD, sum(bit << i for i, bit in enumerate(rest[:16])))
    data = bytes(sum(rest[16 + 8 * k + i] << i for i in range(8)) for k in range(length))
    return right, data


def test_a_page_cache_sender_in_the_milestone_4_run_has_no_reference_to_send(tmp_path):
    path = carrier()
    head = (
        SENDER.replace("__CARRIER__", repr(str(path)))
        .replace("__SPACING__", str(SPACING))
        .replace("__PATTERN__", repr(PATTERN))
        .replace("__PAYLOAD__", str(PAYLOAD))
    )
    graded = grade(submission(tmp_path, head))
    right, data = receive(path)
    assert graded.milestone(4) > 0  # the retriever ran (on the proxy) and scored
    assert right == len(PATTERN), "the channel itself did not carry: the test proves nothing"
    assert data == b"", f"the Milestone 4 run carried out {data!r}"


PROBE = """
import importlib.machinery as _machinery
import os as _os
import sys as _sys

import scoring as _scoring

_FOUND = []
if getattr(_scoring, "__file__", None) or getattr(_scoring, "__spec__", None):
    _FOUND.append("scoring is a file")
_CODE = _scoring.relevance_score.__code__.co_filename
if not _CODE.startswith("/grader/"):
    _FOUND.append("scoring's functions are not the worker's proxy: " + _CODE)
if _machinery.PathFinder.find_spec("scoring") is not None:
    _FOUND.append("a scoring module on the path")
_SOLUTION = __SOLUTION__
for _root in ["/learner", "/provided", "/grader", "/tmp"]:
    for _folder, _, _names in _os.walk(_root):
        for _name in _names:
            if not _name.startswith("scoring"):
                continue
            try:
                _text = open(_os.path.join(_folder, _name), "rb").read()
            except OSError:
                continue
            if _name.endswith(".pyc") or any(line in _text for line in _SOLUTION):
                _FOUND.append(_os.path.join(_folder, _name))
if _FOUND:
    print("FOUND", _FOUND, file=_sys.stderr)
    raise SystemExit(1)
"""


def test_the_milestone_4_run_holds_no_reference_and_its_scoring_is_answered_by_the_parent(
    tmp_path, monkeypatch
):
    source = (ROOT / "code" / "scoring.py").read_text(encoding="utf-8")
    regions = source.split("### BEGIN SOLUTION")[1:]
    solution = [region.split("\n")[1].strip().encode() for region in regions]  # first lines
    assert len(solution) >= 5 and all(solution)  # every scoring function, vectorised one too
    calls = []
    answer = Oracle.answer

    def counted(self, call):
        calls.append(call["call"])
        return answer(self, call)

    monkeypatch.setattr(Oracle, "answer", counted)
    head = PROBE.replace("__SOLUTION__", repr(solution))
    graded = grade(submission(tmp_path, head))
    m4 = [o for o in graded.outcomes if o.cell.milestone == 4]
    assert all(o.score == o.cell.points for o in m4), [o.message for o in m4]
    assert {"relevance_score", "recency_score", "importance_score", "retrieval_score"} <= set(calls)


def test_hidden_inputs_differ_between_two_gradings_while_the_score_does_not(tmp_path, monkeypatch):
    code = tmp_path / "ana" / "code"
    code.mkdir(parents=True)
    for name in ("scoring.py", "retriever.py"):
        shutil.copy(ROOT / "code" / name, code / name)
    sent: list[dict] = []
    run_cell = grader.run_cell

    def recorded(cell, ask, files, stop_early=True):
        def asked(request):
            if cell.hidden:
                sent[-1].setdefault(cell.id, []).append(request)
            return ask(request)

        return run_cell(cell, asked, files, stop_early)

    monkeypatch.setattr(grader, "run_cell", recorded)
    totals = []
    for _ in range(2):
        sent.append({})
        totals.append(grade(code.parent).total)
    assert totals == [31.0, 31.0]
    first, second = sent
    assert len(first) == 7 and set(first) == set(second)
    changed = [first[cell] != second[cell] for cell in first]
    assert sum(changed) >= len(changed) - 1, changed  # three whole ratings can repeat, rarely
