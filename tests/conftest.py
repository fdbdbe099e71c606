"""Shared test setup: every test runs offline, on default settings."""

from __future__ import annotations

import os
import socket

import pytest

NOW = 1_000_000.0  # epoch seconds: the course examples' fixed "now"
HOUR = 3600.0
DAY = 24 * HOUR

_LOCAL_HOSTS = ("localhost", "::1", "")


def _is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    return not isinstance(host, str) or host in _LOCAL_HOSTS or host.startswith(("127.", "/"))


@pytest.fixture(autouse=True)
def offline_defaults(monkeypatch):
    """No MEMORY_LAB_* setting or .env file of this machine leaks into a test, and no test
    writes the terminal chat's store file."""
    for name in list(os.environ):
        if name.startswith("MEMORY_LAB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORY_LAB_ENV_FILE", "")
    monkeypatch.setenv("MEMORY_LAB_DB", ":memory:")  # no test writes the chat's store file


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to reach a non-local address fails the test loudly."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(sock, address, *args, **kwargs):
        if not _is_local(address[0] if isinstance(address, tuple) else address):
            raise RuntimeError(f"a test tried to reach the network: {address!r}")
        return real_connect(sock, address, *args, **kwargs)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            raise RuntimeError(f"a test tried to look up a host on the network: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
