"""The one network guard of the tests: any connection or lookup beyond this machine fails.

Three places use it, each the same way: the tests' own process (conftest.py, undone
after each test), every notebook kernel the notebook tests start (tests/notebooks/test_notebooks.py)
and the subprocesses of tests/test_offline_and_imports.py. Those two run it with

    __import__("runpy").run_path(GUARD)["install"]("exit")

as their first statement, where GUARD is this file's path; nothing stays in their
namespace. Local addresses stay open: kernels and test servers talk over loopback.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

GUARD = str(Path(__file__).resolve())
LOCAL_HOSTS = ("localhost", "::1", "")


def is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    return not isinstance(host, str) or host in LOCAL_HOSTS or host.startswith(("127.", "/"))


def guarded(mode: str = "raise"):
    """(connect, getaddrinfo) replacements. mode "raise": RuntimeError; "exit": status 99."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def refuse(what: str):
        if mode == "exit":  # a subprocess: say so on stderr and stop, whatever catches errors
            os.write(2, f"NETWORK ACCESS: {what}\n".encode())
            os._exit(99)
        raise RuntimeError(f"a test tried to reach the network: {what}")

    def connect(sock, address, *args, **kwargs):
        if not is_local(address[0] if isinstance(address, tuple) else address):
            refuse(f"connect {address!r}")
        return real_connect(sock, address, *args, **kwargs)

    def getaddrinfo(host, *args, **kwargs):
        if not is_local(host):
            refuse(f"lookup {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    return connect, getaddrinfo


def install(mode: str = "raise") -> None:
    """Guard this whole process (a kernel or a subprocess) from now on."""
    socket.socket.connect, socket.getaddrinfo = guarded(mode)


def first_line(mode: str = "exit") -> str:
    """The statement that guards a kernel or a `python -c` subprocess."""
    return f'__import__("runpy").run_path({GUARD!r})["install"]({mode!r})\n'
