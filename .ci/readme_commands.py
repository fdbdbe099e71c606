"""The README's two commands, run exactly as the README spells them, in a fresh clone.

    python3 .ci/readme_commands.py

Reads the two lines of the README's "Start" block, clones the committed repository into
a temporary folder, and there:

1. runs the open command (venv, install, `jupyter lab`) as whoever runs this script (root
   in CI), waits until JupyterLab answers on /api/status, starts a kernel through it and
   runs a line of code there over the websocket, then shuts the server down;
2. runs the test command (venv, install, pytest) and requires it to pass.

Only the port, the token and the browser are set from outside, through the environment
(JUPYTER_PORT, JUPYTER_TOKEN, BROWSER): the command line itself is the README's. Uses the
standard library alone, so it runs before any virtual environment exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT = 20 * 60  # seconds: venv and a cold pip install on a slow network
KERNEL_TIMEOUT = 120  # seconds for a kernel to answer on a busy 2-core machine

# Run with the clone's Python (it has websocket-client): send `print(6 * 7)` to a kernel
# over JupyterLab's websocket, as the browser does, and print what the kernel printed.
RUN_IN_KERNEL = """
import json, sys, uuid, websocket
ws = websocket.create_connection(sys.argv[1], timeout=100)
msg_id = uuid.uuid4().hex
header = {"msg_id": msg_id, "msg_type": "execute_request", "username": "ci",
          "session": uuid.uuid4().hex, "version": "5.3"}
content = {"code": "print(6 * 7)", "silent": False}
ws.send(json.dumps({"header": header, "parent_header": {}, "metadata": {},
                    "content": content, "channel": "shell"}))
while True:
    reply = json.loads(ws.recv())
    if reply.get("parent_header", {}).get("msg_id") != msg_id:
        continue
    if reply["msg_type"] == "stream":
        print(reply["content"]["text"], end="")
    if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
        break
"""


def readme_commands(readme: Path = ROOT / "README.md") -> tuple[str, str]:
    """(open command, test command): the two command lines of the README's Start block."""
    start = readme.read_text().split("## Start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", start, re.S).group(1)
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    opens = [line for line in lines if "jupyter lab" in line]
    tests = [line for line in lines if "pytest" in line]
    if len(lines) != 2 or len(opens) != 1 or len(tests) != 1:
        sys.exit(f"README.md: expected one open and one test command in Start, got {lines}")
    return opens[0], tests[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request(base: str, token: str, path: str, method: str = "GET", body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(req, timeout=10) as response:
        return json.loads(response.read() or b"null")


def wait_for(what: str, check, process: subprocess.Popen, timeout: float, log: Path):
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, urllib.error.URLError, json.JSONDecodeError):
            result = check()
            if result:
                return result
        if process.poll() is not None:
            sys.exit(f"the open command exited ({process.returncode}) before {what}:\n{tail(log)}")
        if time.monotonic() > deadline:
            sys.exit(f"no {what} within {timeout:.0f} s:\n{tail(log)}")
        time.sleep(1)  # polling interval


def tail(log: Path, characters: int = 4000) -> str:
    return log.read_text(errors="replace")[-characters:]


def prove_open_command(clone: Path, command: str) -> None:
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, JUPYTER_PORT=str(port), JUPYTER_TOKEN=token, BROWSER="true")
    log = clone.parent / "open-command.log"
    who = "root" if hasattr(os, "geteuid") and os.geteuid() == 0 else "a regular user"
    print(f"open command, as {who}: {command}", flush=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group: venv, pip, jupyter and its kernels
        )
    try:
        status = wait_for(
            "JupyterLab answer", lambda: request(base, token, "/api/status"), process,
            INSTALL_TIMEOUT, log,
        )  # fmt: skip
        print(f"JupyterLab answers on {base}/api/status: {status}", flush=True)
        kernel = request(base, token, "/api/kernels", "POST", {"name": "python3"})
        url = f"ws://127.0.0.1:{port}/api/kernels/{kernel['id']}/channels?token={token}"
        ran = subprocess.run(
            [str(clone / ".venv" / "bin" / "python"), "-c", RUN_IN_KERNEL, url],
            capture_output=True, text=True, timeout=KERNEL_TIMEOUT,
        )  # fmt: skip
        if ran.returncode != 0 or ran.stdout.strip() != "42":
            sys.exit(f"a kernel started through JupyterLab did not run code:\n{ran}\n{tail(log)}")
        print("a kernel started through it runs code: 6 * 7 = 42", flush=True)
        for warning in ("Running as root is not recommended", "without encryption"):
            if warning in log.read_text(errors="replace"):
                sys.exit(f"the open command's log says {warning!r}:\n{tail(log)}")
        with contextlib.suppress(OSError, urllib.error.URLError):
            request(base, token, "/api/shutdown", "POST")
        process.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def main() -> int:
    open_command, test_command = readme_commands()
    with tempfile.TemporaryDirectory(prefix="memory-lab-readme-") as tmp:
        clone = Path(tmp) / "memory-lab"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        prove_open_command(clone, open_command)
        print(f"test command: {test_command}", flush=True)
        started = time.monotonic()
        subprocess.run(["bash", "-c", test_command], cwd=clone, check=True)
        print(f"test command passed in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
