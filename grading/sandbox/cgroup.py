"""A memory cgroup per grading worker: the kernel caps what all its processes hold together.

RLIMIT_AS caps one process's address space, not what its children hold beside it, nor
pages that no process maps (tmpfs files, detached shared memory). A memory cgroup counts
all of it, and the kernel's OOM killer ends the worker at the cap. Each worker gets a
child cgroup of the grader's own, `memory-lab-<pid>-<n>`, entered before bubblewrap
starts (a shell writes its pid into `cgroup.procs`, then execs bwrap: nothing runs
outside it), and removed when the worker is gone.

    group = MemoryCgroup.create()      # None where no cgroup can be made; reason() says why
    argv = group.wrap(argv)            # ["/bin/sh", "-c", ..., procs, *argv]

Where it is unavailable (no write access, or cgroup v2 with processes in the grader's own
cgroup, where the kernel forbids enabling the controller for a child) grading goes on with
the per-process limits and says so (grading/course/autograde.py logs `reason()`).

Deliberately left out: the pids and CPU controllers (RLIMIT_NPROC under a uid of its own
and RLIMIT_CPU already bound them).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path

MEMORY_BYTES = 1 << 30  # everything the worker's processes hold: memory, tmpfs, shared memory
ENTER = 'echo $$ > "$0" && exec "$@"'  # the shell moves itself in, then becomes bwrap
_counter = itertools.count()
_why: list[str] = []  # the reason the last attempt failed, for the log


def _own() -> tuple[str, Path] | None:
    """('v1' or 'v2', the folder of the grader's own memory cgroup), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return "v1", Path("/sys/fs/cgroup/memory") / path.lstrip("/")
    unified = Path("/sys/fs/cgroup")
    for line in lines:
        if line.startswith("0::"):
            controllers = unified / "cgroup.controllers"
            if controllers.is_file() and "memory" in controllers.read_text().split():
                return "v2", unified / line[3:].lstrip("/")
    return None


class MemoryCgroup:
    """One worker's cgroup: a folder under the grader's own, with its memory limit."""

    def __init__(self, folder: Path, version: str):
        self.folder, self.version = folder, version

    @classmethod
    def create(cls, limit: int = MEMORY_BYTES) -> MemoryCgroup | None:
        own = _own()
        if own is None:
            _why[:] = ["no memory cgroup controller is mounted"]
            return None
        version, parent = own
        folder = parent / f"memory-lab-{os.getpid()}-{next(_counter)}"
        try:
            if version == "v2":
                control = parent / "cgroup.subtree_control"
                if "memory" not in control.read_text().split():
                    control.write_text("+memory")  # EBUSY when the parent holds processes
            folder.mkdir()
        except OSError as error:
            _why[:] = [f"cannot make a child of {parent.name or '/'} ({error.strerror})"]
            return None
        group = cls(folder, version)
        try:
            if version == "v1":
                (folder / "memory.limit_in_bytes").write_text(str(limit))
                swap = folder / "memory.memsw.limit_in_bytes"  # present with swap accounting
                if swap.exists():
                    swap.write_text(str(limit))
            else:
                (folder / "memory.max").write_text(str(limit))
                with contextlib.suppress(OSError):  # absent without swap
                    (folder / "memory.swap.max").write_text("0")
        except OSError as error:
            group.remove()
            _why[:] = [f"cannot set its memory limit ({error.strerror})"]
            return None
        _why.clear()
        return group

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv`, started inside this cgroup."""
        return ["/bin/sh", "-c", ENTER, str(self.folder / "cgroup.procs"), *argv]

    def peak(self) -> int | None:
        """The most bytes the worker's processes held at once, as the kernel counted."""
        name = "memory.max_usage_in_bytes" if self.version == "v1" else "memory.peak"
        try:
            return int((self.folder / name).read_text())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int | None:
        """How many of the worker's processes the kernel's OOM killer ended at the cap."""
        name = "memory.oom_control" if self.version == "v1" else "memory.events"
        try:
            lines = (self.folder / name).read_text().splitlines()
        except OSError:
            return None
        counts = dict(line.split() for line in lines if len(line.split()) == 2)
        return int(counts["oom_kill"]) if "oom_kill" in counts else None

    def remove(self) -> None:
        """rmdir, once the killed processes have gone (the kernel refuses it before)."""
        for _ in range(200):
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


def available() -> bool:
    """Whether a worker would get a cgroup here (one is made and removed to find out)."""
    group = MemoryCgroup.create()
    if group is not None:
        group.remove()
    return group is not None


def reason() -> str:
    """Why the last worker got no cgroup ('' when it did)."""
    return _why[0] if _why else ""


def describe() -> str:
    """One line for the log: the cap each worker runs under."""
    group = MemoryCgroup.create()
    if group is None:
        return (f"memory cgroup unavailable ({reason()}): each process is capped at "
                "RLIMIT_AS, not the worker as a whole")  # fmt: skip
    group.remove()  # made only to find out
    return f"each worker in a memory cgroup of {MEMORY_BYTES >> 20} MB ({group.version})"
