"""The grading sandbox holds: each limit proven by a learner file that tries to break it.

Each probe is an importance_score that returns a number saying whether it got out (1.0)
or not (0.0), run by a real worker in bubblewrap. This machine and CI run as root, where
the process limit is not enforced: the worker must drop to its own uid first. Where the
probe needs a contrast, the same file is run with isolation switched off, to show the
probe does detect what it tests. The seccomp program itself is also run here, by a small
BPF interpreter, on every call it must refuse.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from grading.layout import ROOT
from grading.sandbox import cgroup, launcher, seccomp
from grading.sandbox.launcher import ENV, LIMITS, SLOTS, TMP_BYTES, UID_BASE, Worker, slot_in_use

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt bwrap)"),
]


def probe(tmp_path, body: str, isolated: bool = True, slot: int = 7):
    """The reply of importance_score(1) whose body is `body`."""
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    source = "import ctypes, errno, os, resource, socket, sys, time\n"
    source += "libc = ctypes.CDLL(None, use_errno=True)\n\n\ndef importance_score(importance):\n"
    source += "".join(f"    {line}\n" for line in body.strip().splitlines())
    (folder / "scoring.py").write_text(source)
    (folder / "scoring.py").chmod(0o644)
    with Worker(folder, ["scoring"], slot=slot, isolated=isolated) as worker:
        reply = worker.ask({"function": "importance_score", "args": [1], "kwargs": {}})
        return reply, os.fstat(worker.log.fileno()).st_size


def learner_folder(tmp_path, body: str) -> Path:
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    source = "import os\n\n\ndef importance_score(importance):\n    " + body + "\n"
    (folder / "scoring.py").write_text(source)
    (folder / "scoring.py").chmod(0o644)
    return folder


def ask_uid(worker: Worker) -> float:
    return worker.ask({"function": "importance_score", "args": [1], "kwargs": {}})["value"]


def test_the_worker_runs_as_an_unprivileged_uid_of_its_own(tmp_path):
    folder = learner_folder(tmp_path, "return float(os.getuid())")
    with Worker(folder, ["scoring"], slot=7) as worker:
        uid = ask_uid(worker)
        assert uid != 0.0
        if os.geteuid() == 0:
            assert uid == worker.uid and UID_BASE <= worker.uid < UID_BASE + SLOTS


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="slots are uids: only root has them")


@needs_root
def test_a_slot_another_grading_process_holds_is_never_shared(tmp_path):
    """A second grader on this machine (another OS process) holds slot 5: a worker asking
    for slot 5 runs as another uid, and gets slot 5 back once that grader is gone."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "from grading.sandbox.launcher import claim_slot; print(claim_slot(5)[0], flush=True); "
         "sys.stdin.read()", str(ROOT)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "5"
        assert slot_in_use(5)
        folder = learner_folder(tmp_path, "return float(os.getuid())")
        with Worker(folder, ["scoring"], slot=5) as worker:
            assert worker.uid != UID_BASE + 5
            assert ask_uid(worker) == worker.uid
            assert slot_in_use(worker.uid - UID_BASE)  # held while it runs
        assert not slot_in_use(worker.uid - UID_BASE)  # and let go when it is closed
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert not slot_in_use(5)  # the kernel let go of the ended grader's lock
    with Worker(folder, ["scoring"], slot=5) as worker:
        assert worker.uid == UID_BASE + 5


def test_forks_stop_at_the_process_limit_even_when_grading_runs_as_root(tmp_path):
    body = """
children = 0
try:
    while children < 100:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        children += 1
except OSError:
    pass
return float(children)
"""
    reply, _ = probe(tmp_path, body)
    assert reply["value"] < LIMITS["RLIMIT_NPROC"]


def test_memory_beyond_the_limit_is_refused(tmp_path):
    reply, _ = probe(tmp_path, "hog = bytearray(2 << 30)\nreturn float(len(hog))")
    assert reply["error"] == "MemoryError"


def test_limits_cannot_be_raised_again(tmp_path):
    body = """
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (4096, 4096))
    return 1.0
except (ValueError, OSError):
    return 0.0
"""
    assert probe(tmp_path, body)[0] == {"value": 0.0}


def test_huge_output_stops_at_the_file_size_limit(tmp_path):
    reply, logged = probe(tmp_path, "sys.stdout.write('x' * (8 << 20))\nsys.stdout.flush()")
    assert reply is None or reply["error"] == "OSError"  # EFBIG: the write is refused
    assert logged <= LIMITS["RLIMIT_FSIZE"]


def test_the_network_is_closed_even_on_loopback(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    body = f"""
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1)
    return 1.0
except OSError:
    return 0.0
"""
    try:
        assert probe(tmp_path, body)[0] == {"value": 0.0}
        assert probe(tmp_path, body, isolated=False)[0] == {"value": 1.0}  # the probe works
    finally:
        server.close()


def test_the_environment_is_empty_and_secrets_stay_out(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    body = "return float(len(os.environ)) if 'OPENAI_API_KEY' not in os.environ else -1.0"
    count = probe(tmp_path, body)[0]["value"]
    assert 0 < count <= len(ENV) + 1  # Python may add LC_CTYPE (PEP 538)


@pytest.mark.parametrize(
    "place", [ROOT / "code" / "scoring.py", ROOT / "dist", ROOT / ".git", "/etc"]
)
def test_the_repository_course_and_home_are_out_of_sight(tmp_path, place):
    body = f"return 1.0 if os.path.exists({str(place)!r}) else 0.0"
    assert probe(tmp_path, body)[0] == {"value": 0.0}
    if place == ROOT / "code" / "scoring.py":
        assert probe(tmp_path, body, isolated=False)[0] == {"value": 1.0}


def test_home_shows_at_most_the_folder_that_holds_the_interpreter(tmp_path):
    home = os.path.expanduser("~")
    body = f"return float(len(os.listdir({home!r}))) if os.path.isdir({home!r}) else 0.0"
    assert probe(tmp_path, body)[0]["value"] <= 1.0


def test_nothing_the_worker_started_survives_it(tmp_path):
    body = """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
return 0.0
"""
    assert probe(tmp_path, body, slot=9)[0] == {"value": 0.0}
    time.sleep(0.5)
    uids = [p.info["uids"] for p in psutil.process_iter(["uids"])]
    assert not [u for u in uids if u and u.real == UID_BASE + 9]


def test_a_hang_that_ignores_sigint_is_killed_in_seconds(tmp_path):
    start = time.monotonic()
    body = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    reply, _ = probe(tmp_path, body)
    assert reply is None  # the worker was killed after its time for one case
    assert time.monotonic() - start < 15


def test_cpu_time_beyond_the_limit_kills_the_worker(tmp_path):
    folder = tmp_path / "learner"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "scoring.py").write_text("def importance_score(importance):\n    while True:\n"
                                       "        pass\n")  # fmt: skip
    (folder / "scoring.py").chmod(0o644)
    start = time.monotonic()
    with Worker(folder, ["scoring"], slot=7, limits={"RLIMIT_CPU": 1}) as worker:
        reply = worker.ask({"function": "importance_score", "args": [1], "kwargs": {}})
        assert reply is None
        assert worker.process.returncode != 0
    assert time.monotonic() - start < 4  # the CPU limit, not the 5 s answer timeout


def test_open_files_stop_at_their_limit(tmp_path):
    body = """
files = []
try:
    while len(files) < 1000:
        files.append(open(__file__))
except OSError:
    pass
return float(len(files))
"""
    assert probe(tmp_path, body)[0]["value"] < LIMITS["RLIMIT_NOFILE"]


def test_proc_shows_only_the_sandbox_own_processes(tmp_path):
    body = "return float(sum(name.isdigit() for name in os.listdir('/proc')))"
    assert probe(tmp_path, body)[0]["value"] <= 3  # bwrap's reaper, the worker, maybe one more


def test_pid_1_of_the_sandbox_shows_no_host_path_nor_the_worker_config(tmp_path):
    """bwrap's options (every bind's host path) and the worker's line are out of sight."""
    hosts = [str(ROOT), sys.prefix, os.path.realpath(sys.prefix), str(tmp_path), '"limits"']
    body = f"""
seen = open('/proc/1/cmdline', 'rb').read().decode()
try:
    seen += open('/proc/1/environ', 'rb').read().decode()
except OSError:
    pass
return float(sum(host in seen for host in {hosts!r}))
"""
    assert probe(tmp_path, body)[0] == {"value": 0.0}
    assert probe(tmp_path, body.replace("/proc/1/", "/proc/self/"))[0]["value"] > 0  # it looks


def test_the_sandbox_probe_passes_where_bubblewrap_works():
    from grading.sandbox.launcher import probe

    probe()  # raises SandboxMissing, naming the cause, where namespaces are refused


def test_without_bubblewrap_grading_refuses_and_names_the_tool(monkeypatch):
    from grading.sandbox import launcher as sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(sandbox.SandboxMissing, match="bwrap.*--no-isolation"):
        sandbox.probe()


def run_filter(nr: int, arch: int = seccomp.AUDIT_ARCH_X86_64, arg0: int = 0) -> int:
    """What the seccomp program returns for one call: a tiny classic-BPF interpreter."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    rows = [struct.unpack("=HBBI", seccomp.program()[i : i + 8])
            for i in range(0, len(seccomp.program()), 8)]  # fmt: skip
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = rows[pc]
        if code == seccomp.LD:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == seccomp.RET:
            return k
        elif code in (seccomp.JEQ, seccomp.JGE, seccomp.JSET):
            taken = {seccomp.JEQ: acc == k, seccomp.JGE: acc >= k, seccomp.JSET: acc & k}[code]
            pc += jt if taken else jf
        pc += 1


EPERM, ENOSYS = seccomp.ERRNO | errno.EPERM, seccomp.ERRNO | errno.ENOSYS
AFNOSUPPORT = seccomp.ERRNO | errno.EAFNOSUPPORT


@pytest.mark.parametrize("name", sorted(seccomp.DENIED))
def test_the_filter_refuses_every_listed_call_with_eperm(name):
    assert run_filter(seccomp.DENIED[name]) == EPERM


@pytest.mark.parametrize(
    ("call", "verdict"),
    [
        ({"nr": 0}, seccomp.ALLOW),  # read
        ({"nr": 57}, seccomp.ALLOW),  # fork
        ({"nr": seccomp.CLONE, "arg0": 0x01200011}, seccomp.ALLOW),  # a thread's or fork's flags
        ({"nr": seccomp.CLONE, "arg0": 0x10000000 | 0x11}, EPERM),  # CLONE_NEWUSER
        ({"nr": seccomp.CLONE, "arg0": 0x00020000}, EPERM),  # CLONE_NEWNS
        ({"nr": seccomp.CLONE3}, ENOSYS),  # the C library falls back to clone
        ({"nr": 0 | seccomp.X32_BIT}, EPERM),  # the x32 ABI
        ({"nr": 0, "arch": 0x40000003}, seccomp.KILL),  # i386 through int 0x80
        ({"nr": seccomp.SOCKET, "arg0": socket.AF_UNIX}, seccomp.ALLOW),
        ({"nr": seccomp.SOCKETPAIR, "arg0": socket.AF_UNIX}, seccomp.ALLOW),
        ({"nr": seccomp.SOCKET, "arg0": socket.AF_INET}, AFNOSUPPORT),
        ({"nr": seccomp.SOCKETPAIR, "arg0": 40}, AFNOSUPPORT),  # AF_VSOCK
    ],
)
def test_the_filter_checks_the_architecture_and_the_namespace_flags_of_clone(call, verdict):
    assert run_filter(**call) == verdict


@pytest.mark.parametrize(
    ("call", "number"),
    [
        ("add_key", "libc.syscall(248, b'user', b'memory-lab-probe', b'x', 1, -4)"),
        ("keyctl", "libc.syscall(250, 10, -4, b'user', b'memory-lab-probe', 0)"),
        ("shmget", "libc.syscall(29, 0, 1 << 20, 0o1600)"),
        ("msgget", "libc.syscall(68, 0, 0o1600)"),
        ("semget", "libc.syscall(64, 0, 1, 0o1600)"),
        ("unshare", "libc.syscall(272, 0x10000000)"),
        ("ptrace", "libc.syscall(101, 16, 1, 0, 0)"),
        ("io_uring_setup", "libc.syscall(425, 4, None)"),
    ],
)
def test_kernel_channels_that_outlive_a_sandbox_are_refused_in_the_worker(tmp_path, call, number):
    body = f"result = {number}\nreturn float(ctypes.get_errno()) if result == -1 else -1.0"
    assert probe(tmp_path, body)[0] == {"value": float(errno.EPERM)}


FAMILIES = {  # every socket family a worker could use to talk to the kernel or the host
    "AF_INET": socket.AF_INET,
    "AF_INET6": socket.AF_INET6,
    "AF_NETLINK": 16,
    "AF_PACKET": 17,
    "AF_VSOCK": 40,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_sockets_of_every_family_but_unix_are_refused_in_the_worker(tmp_path, family):
    number = FAMILIES[family]
    body = f"""
pair = socket.socketpair(socket.AF_UNIX)  # a local pair stays possible
pair[0].close(), pair[1].close()
try:
    socket.socket({number}, socket.SOCK_DGRAM if {number} in (16, 40) else socket.SOCK_STREAM)
except OSError as error:
    return float(error.errno)
return -1.0
"""
    assert probe(tmp_path, body)[0] == {"value": float(errno.EAFNOSUPPORT)}


def test_the_filter_leaves_forks_and_subprocesses_working(tmp_path):
    body = """
import subprocess
pid = os.fork()
if pid == 0:
    os._exit(7)
status = os.waitpid(pid, 0)[1]
return float(os.waitstatus_to_exitcode(status) + subprocess.run(['/bin/true']).returncode)
"""
    assert probe(tmp_path, body)[0] == {"value": 7.0}


def test_only_a_small_tmp_is_writable(tmp_path):
    body = """
written = 0
for folder in ('/', '/dev', '/dev/shm', '/learner', '/provided', '/grader', '/tmp'):
    for n in range(100):
        try:
            with open(f'{folder}/bomb{n}', 'wb') as file:
                file.write(b'x' * (1 << 20))
            written += 1 << 20
        except OSError:
            break
return float(written)
"""
    assert 0 < probe(tmp_path, body)[0]["value"] <= TMP_BYTES


needs_cgroup = pytest.mark.skipif(
    not cgroup.available(), reason="no memory cgroup can be made here"
)


@needs_cgroup
def test_memory_held_across_processes_is_capped_for_the_worker_as_a_whole(tmp_path, monkeypatch):
    # 4 x 400 MB, each under RLIMIT_AS: only the cgroup sees the sum. The kernel's OOM
    # killer ends one process at the cap: a child, or the worker itself (then no reply).
    # A busy machine may take longer than a case's 5 s to reclaim and kill, hence 60.
    monkeypatch.setattr(launcher, "ANSWER_SECONDS", 60.0)
    folder = learner_folder(tmp_path, "return hog()")
    (folder / "scoring.py").write_text("""import os, time


def hog():
    children = []
    for n in range(4):
        pid = os.fork()
        if pid == 0:
            block = bytearray(400 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(1)
            os._exit(0)
        children.append(pid)
    return float(sum(os.waitpid(pid, 0)[1] != 0 for pid in children))


def importance_score(importance):
    return hog()
""")
    with Worker(folder, ["scoring"], slot=7) as worker:
        reply = worker.ask({"function": "importance_score", "args": [1], "kwargs": {}})
        kills, peak, output = worker.cgroup.oom_kills(), worker.cgroup.peak(), worker.output()
    assert kills is not None and kills >= 1, (reply, kills, peak, output)
    assert peak is not None and peak <= cgroup.MEMORY_BYTES, peak


@needs_cgroup
def test_each_worker_gets_its_own_cgroup_and_it_is_removed_after(tmp_path):
    folder = tmp_path / "learner"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "scoring.py").write_text("def importance_score(importance):\n    return 1.0\n")
    (folder / "scoring.py").chmod(0o644)
    with Worker(folder, ["scoring"], slot=7) as worker:
        assert worker.cgroup is not None and worker.cgroup.folder.is_dir()
        assert worker.ask({"function": "importance_score", "args": [1], "kwargs": {}})
        peak = worker.cgroup.peak()
    assert peak is not None and 0 < peak <= cgroup.MEMORY_BYTES
    assert not worker.cgroup.folder.exists()


def test_every_provided_module_is_importable_and_the_reference_core_is_not_there(tmp_path):
    from grading.sandbox.launcher import PROVIDED

    assert {"memory_store.py", "embedding_helpers.py", "config.py", "base", "embeddings"} <= set(
        PROVIDED
    )
    assert not {"scoring.py", "retriever.py", "practice"} & set(PROVIDED)  # no reference of theirs
    body = """
import embedding_helpers, config, memory_store
from embeddings import hybrid
return 0.0 if any(os.path.exists(f'/provided/{n}') for n in ('scoring.py', 'practice')) else 1.0
"""
    assert probe(tmp_path, body)[0] == {"value": 1.0}


def test_finding_out_whether_a_cgroup_can_be_made_leaves_none_behind():
    parent = cgroup._own()
    before = set(parent[1].glob("memory-lab-*")) if parent else set()
    cgroup.available()
    cgroup.describe()
    assert (set(parent[1].glob("memory-lab-*")) if parent else set()) == before


def test_an_interpreter_under_tmp_is_bound_on_top_of_the_small_tmp(monkeypatch):
    """A CI clone keeps its virtual environment under /tmp: the small /tmp must not hide it."""
    from grading.sandbox import launcher as sandbox

    monkeypatch.setattr(sandbox.sys, "prefix", "/tmp/clone/.venv")
    monkeypatch.setattr(sandbox.os.path, "realpath", lambda path: str(path))
    args = sandbox.command(ROOT, {}, filter_fd=3, start_fd=4)
    tmpfs = args.index("--tmpfs")
    assert args[tmpfs + 1] == "/tmp"
    binds = [args[i + 2] for i, arg in enumerate(args) if arg == "--ro-bind"]
    assert "/tmp/clone/.venv" in binds
    first_under_tmp = min(
        i for i, arg in enumerate(args) if arg == "--ro-bind" and args[i + 2].startswith("/tmp/")
    )
    assert tmpfs < first_under_tmp  # mounted first, so the bind lands on top of it


@needs_root
def test_the_self_check_counts_a_grading_uids_process_as_left_over_only_when_its_slot_is_free():
    from grading.sandbox.launcher import claim_slot
    from grading.selfcheck.runner import survivors

    slot, lock = claim_slot(20)  # a batch beside the self-check, running a worker
    sleeper = subprocess.Popen(["sleep", "30"], user=UID_BASE + slot, group=UID_BASE + slot)
    try:
        assert sleeper.pid not in survivors()  # that batch's worker: no survivor
        os.close(lock)  # its slot let go, yet its uid still runs something: left over
        assert sleeper.pid in survivors()
    finally:
        sleeper.kill()
        sleeper.wait()
