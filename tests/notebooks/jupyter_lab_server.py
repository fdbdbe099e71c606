"""A private JupyterLab server on a throwaway copy of the workbook, for the browser test.

`JupyterLab(workdir)` copies notebooks/, code/ and data/ into `workdir` (autosave writes
outputs there, never into the repository), starts `jupyter lab` on a free local port with
its own token, configuration and runtime folders, and waits until it answers. `stop()`
shuts it down with its kernels, and kills whatever is left.

Deliberately left out: the browser (test_browser.py drives it) and the data folder of
Jupyter, which holds the widget and plotly extensions the figures need.

    with JupyterLab(tmp_path) as lab:
        page.goto(lab.url("notebooks/01_recency.ipynb"))
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
KILL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL
COPIED = ("notebooks", "code", "data")  # what a learner's Run All needs

# Written into the private settings folder: no news or update check (both would fetch a
# web page), and every cell kept in the page so that the test sees every output.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


def free_port() -> int:
    """A TCP port nobody listens on right now (the server claims it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copy_workbook(target: Path) -> Path:
    """Copy the folders a learner's session needs into `target`; return `target`."""
    for name in COPIED:
        shutil.copytree(
            ROOT / name,
            target / name,
            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.sqlite3*"),
        )
    return target


def signal_group(process: subprocess.Popen, sig: int) -> None:
    """Send `sig` to the process group the server leads (to the server alone on Windows)."""
    if not hasattr(os, "killpg"):
        process.kill()  # Windows: no process groups to signal
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


class JupyterLab:
    """One JupyterLab process (a process group of its own) serving a copy of the workbook."""

    def __init__(self, workdir: Path, startup_timeout: float = 90.0) -> None:
        self.workdir = workdir
        self.root = copy_workbook(workdir / "workbook")
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "jupyter-lab.log"
        self.startup_timeout = startup_timeout  # seconds: a cold start on a busy 2-core box
        self.process: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        """The address of a file in the lab; `reset` ignores any saved workspace layout."""
        return f"{self.base}/lab/tree/{path}?token={self.token}&reset"

    def environment(self) -> dict[str, str]:
        """This environment minus MEMORY_LAB_* settings, with private config/runtime folders."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
        config = self.workdir / "jupyter-config"
        env.update(
            JUPYTER_CONFIG_DIR=str(config),
            JUPYTER_RUNTIME_DIR=str(self.workdir / "jupyter-runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(config / "lab" / "user-settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(config / "lab" / "workspaces"),
            IPYTHONDIR=str(self.workdir / "ipython"),  # no profile or history of this machine
            MEMORY_LAB_ENV_FILE="",  # offline defaults, as in every other test
            MEMORY_LAB_DB=":memory:",
        )
        for plugin, values in USER_SETTINGS.items():
            package, name = plugin.rsplit("/", 1)
            path = config / "lab" / "user-settings" / package / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        return env

    def command(self) -> list[str]:
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",  # no PyPI queries for extensions
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")  # Jupyter refuses to run as root without it
        return command

    def start(self) -> JupyterLab:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.root,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as one on stop()
            )
        deadline = time.monotonic() + self.startup_timeout
        while not self.answers():
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with code {self.process.returncode} before it "
                    f"answered on {self.base}.\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"jupyter lab did not answer on {self.base}/api/status within "
                    f"{self.startup_timeout:.0f} s.\n{self.log_tail()}"
                )
            time.sleep(0.25)  # polling interval, not a wait for something
        return self

    def request(self, path: str, method: str = "GET", timeout: float = 5.0):
        request = urllib.request.Request(
            f"{self.base}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"null")

    def answers(self) -> bool:
        try:
            self.request("/api/status", timeout=2.0)
        except (OSError, urllib.error.URLError, json.JSONDecodeError):
            return False
        return True

    def shutdown_kernels(self) -> None:
        """Stop every kernel the server runs (closing a browser tab leaves them running)."""
        with contextlib.suppress(OSError):  # a server that is gone has no kernels; stop() checks
            for kernel in self.request("/api/kernels"):
                self.request(f"/api/kernels/{kernel['id']}", method="DELETE", timeout=30.0)

    def log_tail(self, characters: int = 4000) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return f"--- last lines of {self.log_path} ---\n{text[-characters:]}"

    def stop(self) -> None:
        """Shut down the server and its kernels; kill whatever is still running."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            # Kernels run in sessions of their own: note them before the server goes.
            spawned = psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            spawned = []
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            if process.poll() is None:
                self.request("/api/shutdown", method="POST")  # stops the kernels too
                process.wait(timeout=20)
        for sig in (signal.SIGTERM, KILL):
            if process.poll() is None:
                signal_group(process, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=10)
        signal_group(process, KILL)  # anything else left in the server's group
        for child in spawned:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
        psutil.wait_procs(spawned, timeout=10)

    def __enter__(self) -> JupyterLab:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info) -> None:
        self.stop()
