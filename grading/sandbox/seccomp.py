"""The grading worker's seccomp filter: kernel channels that outlive a sandbox, refused.

A classic BPF program (the kernel's `struct sock_filter`, packed here; no dependency),
handed to bubblewrap with `--seccomp FD`, which loads it just before it starts the worker.
It is inherited by every process the learner's code starts and cannot be removed.

    arch       anything but x86_64 (i386 through int 0x80, x32) is killed: its numbers differ
    EPERM      keyrings (per uid, they outlive the sandbox), SysV IPC (detached segments
               escape the memory limit), ptrace, mounts, namespaces (unshare, setns, and
               clone with a CLONE_NEW* flag), bpf, perf_event_open, userfaultfd, io_uring,
               process_vm_*, modules, kexec, and the host's clock, swap and reboot
    ENOSYS     clone3: its flags sit in memory a filter cannot read; the C library falls
               back to clone, whose flags it can
    EAFNOSUPPORT  socket and socketpair of any family but AF_UNIX: no AF_INET/INET6 (the
               namespace's loopback), AF_NETLINK (the kernel's own tables), AF_PACKET,
               AF_VSOCK (the hypervisor), ...; the worker speaks over pipes and needs none

    >>> len(program()) % 8, program()[:8].hex()
    (0, '2000000004000000')

Deliberately left out: an allow-list (the interpreter, numpy and a learner's imports need
a long, version-dependent list of calls; what is refused here is what grading must never
grant, and the namespaces, limits and memory cgroup bound the rest). Other architectures
(aarch64) have other numbers: `program()` refuses to build there rather than guess.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000  # x32 ABI calls: the same numbers with this bit set

# x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl)
DENIED = {
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67,
    "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442,
    "unshare": 272, "setns": 308,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320,
    "name_to_handle_at": 303, "open_by_handle_at": 304,
    "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163,
    "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "clock_adjtime": 305,
}  # fmt: skip
CLONE, CLONE3 = 56, 435
SOCKET, SOCKETPAIR = 41, 53
AF_UNIX = 1  # the one socket family a worker may open (a library's local socketpair)
CLONE_NEW = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
NR, ARCH, ARG0_LOW = 0, 4, 16  # byte offsets; args[0]'s low half (little-endian)
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|..|K, BPF_RET|K
ALLOW, KILL, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000  # SECCOMP_RET_*


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k)


def instructions(denied: dict[str, int] | None = None) -> list[tuple[int, int, int, int]]:
    """The program as (code, jt, jf, k) rows; jumps count the rows they skip."""
    numbers = sorted(set((DENIED if denied is None else denied).values()))
    body = [_op(JEQ, n, jt=0, jf=0) for n in numbers]  # jt filled in below
    # rows: 0 ld arch | 1 jeq x86_64 | 2 ld nr | 3 jge x32 | body | clone, clone3, socket,
    # socketpair | tail
    tail = [
        _op(RET, ALLOW),  # allow
        _op(LD, ARG0_LOW),  # clone: its flags
        _op(JSET, CLONE_NEW, jt=1, jf=0),
        _op(RET, ALLOW),
        _op(RET, ERRNO | errno.EPERM),  # deny
        _op(RET, ERRNO | errno.ENOSYS),  # clone3
        _op(RET, KILL),  # a foreign architecture
        _op(LD, ARG0_LOW),  # socket, socketpair: the family
        _op(JEQ, AF_UNIX, jt=0, jf=1),
        _op(RET, ALLOW),
        _op(RET, ERRNO | errno.EAFNOSUPPORT),
    ]
    head = [_op(LD, ARCH), None, _op(LD, NR), None]
    checks = [*body, _op(JEQ, CLONE), _op(JEQ, CLONE3), _op(JEQ, SOCKET), _op(JEQ, SOCKETPAIR)]
    start = len(head) + len(checks)  # index of "allow"
    deny, enosys, kill, family = start + 4, start + 5, start + 6, start + 7
    rows = head + checks + tail
    rows[1] = _op(JEQ, AUDIT_ARCH_X86_64, jt=0, jf=kill - 2)
    rows[3] = _op(JGE, X32_BIT, jt=deny - 4, jf=0)
    for index in range(len(head), len(head) + len(body)):
        rows[index] = _op(JEQ, rows[index][3], jt=deny - index - 1)
    clone = len(head) + len(body)
    rows[clone] = _op(JEQ, CLONE, jt=start + 1 - clone - 1)
    rows[clone + 1] = _op(JEQ, CLONE3, jt=enosys - clone - 2)
    rows[clone + 2] = _op(JEQ, SOCKET, jt=family - clone - 3)
    rows[clone + 3] = _op(JEQ, SOCKETPAIR, jt=family - clone - 4)
    if any(not 0 <= jt <= 255 or not 0 <= jf <= 255 for _, jt, jf, _ in rows):
        raise ValueError("seccomp program too long for 8-bit jumps")
    return rows


def program(denied: dict[str, int] | None = None) -> bytes:
    """The filter as the bytes bubblewrap reads from `--seccomp FD`."""
    if platform.machine() not in ("x86_64", "AMD64"):
        raise OSError(f"the grading seccomp filter knows x86_64 only, not {platform.machine()}")
    return b"".join(struct.pack("=HBBI", *row) for row in instructions(denied))


def memfd(data: bytes) -> int:
    """A file descriptor holding `data` at offset 0; one per worker (bwrap reads it to EOF)."""
    fd = os.memfd_create("memory-lab-seccomp")  # close-on-exec: pass it with pass_fds
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
