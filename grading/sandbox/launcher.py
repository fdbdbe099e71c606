"""One grading worker in a bubblewrap sandbox, spoken to one JSON line at a time.

The sandbox sees the interpreter and its virtual environment (read-only), the worker,
every provided module a learner may import (read-only: memory_store.py,
embedding_helpers.py, config.py, base/, embeddings/, ...) and one run's learner files, and
nothing else: no course
folder, gradebook, classmates, repository or $HOME; an empty environment; no network (a
private loopback); a private /proc and SysV IPC namespace. Nothing is writable but an
8 MB /tmp (the root and /dev are remounted read-only). A seccomp filter
(grading/sandbox/seccomp.py) refuses the kernel's channels that outlive a sandbox (keyrings,
SysV IPC), namespaces, mounts and ptrace; a memory cgroup (grading/sandbox/cgroup.py), where one
can be made, caps what all the worker's processes hold together. The worker lowers its
limits (CPU seconds, memory, processes, file size, open files), then, when the grader
runs as root, drops to an unprivileged uid of its own (the process limit is not enforced
for root). Killing bwrap kills the sandbox's pid namespace: nothing it started survives.

    with Worker(folder, ["scoring"], slot=0) as worker:
        worker.ask({"function": "importance_score", "args": [8], "kwargs": {}})
        -> {"value": 0.8}

Without bubblewrap (macOS, Windows) grading refuses unless isolation is switched off
explicitly (`isolated=False`), which runs the same worker as a plain child process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grading.layout import LEARNER_TOP, ROOT
from grading.sandbox import seccomp
from grading.sandbox.cgroup import MemoryCgroup

WORKER = Path(__file__).with_name("worker.py")
UID_BASE = 62000  # slot n runs as uid/gid 62000 + n: its own process count, no classmate's
SLOTS = 256  # uids UID_BASE .. UID_BASE + 255: workers that can run at once on one machine
ANSWER_BYTES = 1 << 20  # one reply; longer is an attack
ANSWER_SECONDS = 5.0  # wall clock for one case (a case takes microseconds)
RUN_SECONDS = 40.0  # wall clock for one worker's whole run: slow replies cannot stall a batch
LIMITS = {
    "RLIMIT_CPU": 20,  # seconds of CPU for the whole run
    "RLIMIT_AS": 1 << 30,  # bytes of address space (BLAS is single-threaded, see ENV)
    "RLIMIT_NPROC": 8,  # processes of the worker's uid
    "RLIMIT_FSIZE": 1 << 20,  # bytes in any file written, learner output included
    "RLIMIT_NOFILE": 64,
    "RLIMIT_CORE": 0,
}
ENV = {  # the whole environment of the worker
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "LANG": "C.UTF-8",
}
OUTPUT_BYTES = 64 << 10  # the learner's prints kept in the log, at most
TMP_BYTES = 8 << 20  # the one writable folder, /tmp: a tmpfs of this size


def provided() -> list[str]:
    """Everything of code/ a learner may import: the student edition's provided modules.

    The release copies these verbatim; only the learner's files differ (scoring.py,
    retriever.py and the whole of practice/, the exercises' reference included), and those
    are never among them (the Milestone 4 run's scoring is a proxy the parent answers:
    grading/judge/oracle.py; practice/ is the learner's own staged copy).
    """
    return sorted(
        entry.name
        for entry in (ROOT / "code").iterdir()
        if entry.name not in LEARNER_TOP
        and not entry.name.startswith((".", "__"))
        and (entry.suffix == ".py" or entry.is_dir())
    )


PROVIDED = provided()  # memory_store.py, embedding_helpers.py, config.py, base/, ...


class SandboxMissing(RuntimeError):
    """bubblewrap is not installed, or cannot create namespaces here."""


def bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None or sys.platform != "linux":
        raise SandboxMissing(
            "grading runs each submission in a bubblewrap sandbox, and `bwrap` was not found"
            " (Debian/Ubuntu: apt-get install bubblewrap; on macOS or Windows grade in a"
            " Linux container or VM). To grade WITHOUT isolation anyway, pass --no-isolation;"
            " the table then says the run was not isolated."
        )
    return path


def _system_dirs() -> list[str]:
    """/usr, and /lib, /lib64, /bin as the symlinks or folders the host has."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


def _bind(source: str, target: str, made: set[str]) -> list[str]:
    """A read-only bind, its parent folders made world-readable first (bwrap makes 0700)."""
    args = []
    parents = Path(target).parents
    for parent in reversed(parents[:-1]):  # every ancestor but "/"
        if str(parent) not in made and not str(parent).startswith("/usr"):
            made.add(str(parent))
            args += ["--perms", "0755", "--dir", str(parent)]
    return [*args, "--ro-bind", source, target]


def command(learner: Path, config: dict, filter_fd: int, start_fd: int = -1) -> list[str]:
    """The bwrap command line for one worker; `filter_fd` holds its seccomp program and
    `start_fd` the script that starts it (start_script), bound as /grader/start."""
    # subtle: the small /tmp comes before every bind, so that an interpreter, a virtual
    # environment or a checkout that lives under /tmp (a CI clone) is bound on top of it
    # instead of hidden beneath it
    made: set[str] = {"/tmp"}
    args = [bwrap(), *_system_dirs()]
    args += ["--perms", "01777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    interpreter = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    for prefix in sorted(interpreter):
        if not prefix.startswith("/usr/"):
            args += _bind(prefix, prefix, made)
    if sys.prefix != os.path.realpath(sys.prefix):  # the venv as named by sys.executable
        args += _bind(os.path.realpath(sys.prefix), sys.prefix, made)
    args += _bind(str(WORKER), "/grader/worker.py", made)
    for name in PROVIDED:
        args += _bind(str(ROOT / "code" / name), f"/provided/{name}", made)
    args += _bind(str(learner), "/learner", made)
    args += ["--perms", "0644", "--ro-bind-data", str(start_fd), "/grader/start"]
    args += ["--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc"]
    args += ["--remount-ro", "/"]  # last: bwrap's root tmpfs, once every folder is made
    args += ["--seccomp", str(filter_fd)]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    for key, value in ENV.items():
        args += ["--setenv", key, value]
    if os.geteuid() == 0:  # the worker drops to its own uid; it needs these two to do so
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user"]
    return [*args, "--chdir", "/learner", "--", "/bin/sh", "/grader/start"]


def start_script(config: dict) -> bytes:
    """The shell line that becomes the worker: the interpreter's path and the config.

    subtle: bwrap's first process is the sandbox's pid 1, and any process there can read
    its command line; so that line is only `bwrap --args FD -- /bin/sh /grader/start`
    (tucked), and the interpreter's host path and the config are in this script.
    """
    config = {**config, "learner": "/learner", "provided": "/provided"}
    line = [sys.executable, "-I", "-B", "/grader/worker.py", json.dumps(config)]
    return ("exec " + " ".join(shlex.quote(part) for part in line) + "\n").encode()


def tucked(argv: list[str]) -> tuple[list[str], int]:
    """`argv` with bwrap's options moved into a file descriptor (`--args FD`): the options
    name the grader's host paths, and pid 1 of the sandbox shows its command line."""
    split = argv.index("--")
    fd = seccomp.memfd("".join(f"{arg}\0" for arg in argv[1:split]).encode())
    return [argv[0], "--args", str(fd), *argv[split:]], fd


def probe() -> None:
    """Start one sandbox on nothing; raise SandboxMissing, with bwrap's words, if it fails.

    bwrap can be installed yet unable to make namespaces (a container without the
    privilege): better one clear error than every student graded 0.
    """
    with tempfile.TemporaryDirectory(prefix="memory-lab-probe-") as empty:
        Path(empty).chmod(0o755)
        with Worker(Path(empty), []) as worker:
            if worker.hello != {"ready": True}:
                said = worker.output().strip().splitlines()[-1:] or ["no message"]
                raise SandboxMissing(f"bubblewrap could not start a sandbox here: {said[0]}")


class SlotsBusy(RuntimeError):
    """Every grading slot (uid) of this machine is held by a running worker."""


def _locks() -> Path:
    """The folder of the slots' lock files: root's /run where it can write, else tmp."""
    run = Path("/run")
    base = run if run.is_dir() and os.access(run, os.W_OK) else Path(tempfile.gettempdir())
    folder = base / "memory-lab-slots"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def claim_slot(preferred: int = 0) -> tuple[int, int]:
    """(slot, the descriptor holding its lock): the first slot from `preferred` on that no
    running worker on this machine holds, whichever batch or process started it.

    A slot is its uid, and a uid is shared by everything the kernel counts per uid (the
    process limit above all): two batches on one machine (a second `grading worker`, a
    self-check beside a term's grading) must never run a worker as the same uid at once.
    The lock is an flock on a file of a root-only folder, held until the worker is
    closed, and let go by the kernel if the grader dies.
    """
    if not 0 <= preferred < SLOTS:
        raise ValueError(f"a grading slot is 0 to {SLOTS - 1}, got {preferred}")
    folder = _locks()
    for slot in [*range(preferred, SLOTS), *range(preferred)]:
        fd = os.open(folder / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return slot, fd
    raise SlotsBusy(f"all {SLOTS} grading slots of this machine are in use by running workers")


def slot_in_use(slot: int) -> bool:
    """Whether a running worker holds `slot` now (its processes are not left-overs)."""
    fd = os.open(_locks() / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets go of a lock this call took
    return False


class Worker:
    """A running worker; `ask` returns its reply, or None when it died, hung or lied.

    `slot` is the one it prefers: run as root, it takes the first slot from there that
    no other worker on the machine holds (claim_slot), and runs as that slot's uid (`uid`).
    """

    def __init__(
        self,
        learner: Path,
        modules: list[str],
        slot: int = 0,
        isolated: bool = True,
        limits: dict[str, int] | None = None,
        deadline: float | None = None,
        proxy: bool = False,
    ):
        config = {"modules": modules, "limits": {**LIMITS, **(limits or {})}, "proxy": proxy}
        self.slot_lock = None  # the descriptor holding this worker's slot, while it runs
        if isolated and os.geteuid() == 0:  # root drops to the slot's uid: one worker a uid
            slot, self.slot_lock = claim_slot(slot)
        config["uid"] = UID_BASE + slot
        try:
            self._start(learner, config, isolated, deadline)
        except BaseException:
            self._let_go()
            raise

    def _start(self, learner: Path, config: dict, isolated: bool, deadline: float | None):
        root = isolated and os.geteuid() == 0
        self.uid = config["uid"] if root else None  # the uid it runs as (root drops to it)
        fds: tuple[int, ...] = ()
        if isolated:
            bwrap()  # first: SandboxMissing, naming the tool, where there is none
            try:
                program = seccomp.program()
            except OSError as error:
                raise SandboxMissing(f"{error}; pass --no-isolation to grade unfiltered") from None
            filter_fd = seccomp.memfd(program)
            start_fd = seccomp.memfd(start_script(config))
            fds = (filter_fd, start_fd)
            try:
                argv, args_fd = tucked(command(learner, config, filter_fd, start_fd))
                fds = (*fds, args_fd)
            except BaseException:
                for fd in fds:
                    os.close(fd)
                raise
            env = {}
        else:  # the same worker, as a plain child: for machines without bubblewrap
            self.provided = tempfile.TemporaryDirectory(prefix="memory-lab-provided-")
            for name in PROVIDED:  # never code/ itself: it holds the reference solution
                (Path(self.provided.name) / name).symlink_to(ROOT / "code" / name)
            config = {**config, "learner": str(learner), "provided": self.provided.name}
            config["uid"] = None  # the limits still hold; root's process limit does not
            argv = [sys.executable, "-I", "-B", str(WORKER), json.dumps(config)]
            env = dict(ENV)
        self.cgroup = MemoryCgroup.create()  # None where none can be made (see its reason)
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=env,
                start_new_session=True,
                pass_fds=fds,
            )
        except BaseException:
            self.log.close()
            if self.cgroup is not None:
                self.cgroup.remove()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.pending = b""
        self.deadline = time.monotonic() + RUN_SECONDS
        if deadline is not None:  # the submission's budget, across all its workers
            self.deadline = min(self.deadline, deadline)
        self.hello = self._read(ANSWER_SECONDS * 2)

    def _read(self, seconds: float) -> dict | None:
        deadline = min(time.monotonic() + seconds, self.deadline)
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or len(self.pending) > ANSWER_BYTES or not self.selector.select(left):
                self.close()
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                self.close()
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):  # forged: garbage, or nested 100,000 deep
            reply = None
        return reply if isinstance(reply, dict) else None

    def ask(self, request: dict, calls: Callable[[dict], dict] | None = None) -> dict | None:
        """The worker's reply to `request`; `calls` answers its scoring calls meanwhile.

        In the Milestone 4 run the worker's scoring is a proxy: each call comes here as
        {"call": ...} before the reply, and `calls` (grading/judge/oracle.py) answers it. All of
        it shares the one case's ANSWER_SECONDS.
        """
        deadline = time.monotonic() + ANSWER_SECONDS
        line = request
        while True:
            if self.process.poll() is not None or not self._send(line):
                return None
            reply = self._read(deadline - time.monotonic())
            if reply is None or calls is None or "call" not in reply:
                return reply
            line = calls(reply)

    def _send(self, line: dict) -> bool:
        try:
            self.process.stdin.write(json.dumps(line).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            self.close()
            return False
        return True

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read(OUTPUT_BYTES).decode("utf-8", "replace")

    def close(self) -> None:
        """Kill the worker and, with it, the sandbox's whole pid namespace; free its slot."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.selector.close()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        if self.cgroup is not None:
            self.cgroup.remove()
        self._let_go()

    def _let_go(self) -> None:
        """Free the slot: the uid's processes are gone with the pid namespace."""
        if self.slot_lock is not None:
            os.close(self.slot_lock)
            self.slot_lock = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        self.log.close()
        if hasattr(self, "provided"):
            self.provided.cleanup()
