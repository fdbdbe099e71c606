"""A newcomer's first run: the README's commands, the same everywhere, and working as root.

The commands themselves are run by CI (`.ci/readme_commands.py` runs both, as the README
spells them, in a fresh clone, as root); these tests hold what makes them work: the
settings Jupyter reads from the virtual environment, and one spelling of the commands in
the README and the learner guide, on every system.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "tools" / "jupyter-settings" / "jupyter_server_config.json"
INSTALLED = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.json"


def code_blocks(path: Path, section: str) -> list[str]:
    """The fenced blocks of a Markdown file's section (up to the next heading of its level)."""
    text = path.read_text()
    level = section.split(" ", 1)[0]
    body = text.split(section + "\n", 1)[1]
    body = re.split(rf"^{level} ", body, flags=re.M)[0]
    return re.findall(r"```[a-z]*\n(.*?)```", body, re.S)


def commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


README = code_blocks(ROOT / "README.md", "## Start")
GUIDE = code_blocks(ROOT / "docs" / "learner-guide.md", "## Set up")


def test_the_readme_starts_with_two_commands_open_and_test():
    unix = commands(README[0])
    assert len(unix) == 2, unix
    assert unix[0].endswith(".venv/bin/jupyter lab"), unix[0]
    assert unix[1].endswith(".venv/bin/python -m pytest"), unix[1]


@pytest.mark.parametrize("system, index", [("Linux and macOS", 0), ("Windows", 1)])
def test_the_learner_guide_spells_the_readme_commands_exactly(system, index):
    assert commands(GUIDE[index]) == commands(README[index]), (
        f"the {system} setup differs between README.md and docs/learner-guide.md"
    )


def test_the_windows_steps_are_the_unix_commands_one_by_one():
    unix = [step.strip() for line in commands(README[0]) for step in line.split("&&")]
    windows = commands(README[1])
    translated = [
        step.replace("python3 -m venv", "py -m venv")
        .replace(".venv/bin/pip install", ".venv\\Scripts\\python -m pip install")
        .replace(".venv/bin/jupyter lab", ".venv\\Scripts\\python -m jupyter lab")
        .replace(".venv/bin/python", ".venv\\Scripts\\python")
        for step in unix
    ]
    assert windows == list(dict.fromkeys(translated)), (windows, translated)


def test_requirements_install_the_jupyter_settings_into_the_environment():
    lines = [
        line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
    ]
    assert "./tools/jupyter-settings" in lines
    settings = json.loads(SETTINGS.read_text())
    assert settings["ServerApp"]["allow_root"] is True
    assert settings["KernelManager"]["transport_encryption"] == "auto"


def test_jupyter_started_from_this_environment_may_run_as_root_with_encrypted_kernels(
    tmp_path, monkeypatch
):
    """What `jupyter lab` reads: no flag, no file in the working folder, no user setting."""
    from jupyter_server.serverapp import ServerApp

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "no-user-config"))
    app = ServerApp()
    app.load_config_file()
    hint = "reinstall the settings: .venv/bin/pip install -r requirements.txt"
    assert app.allow_root, f"Jupyter would refuse to start as root; {hint}"
    assert app.config.KernelManager.transport_encryption == "auto", hint
    assert _shared(INSTALLED) == _shared(SETTINGS), hint


def _shared(path):
    """A settings file without the server extensions' switches: the student edition turns
    the instructor's nbgrader panels off there (grading/course/editions.py), and its tests may run
    in an environment installed from either edition."""
    settings = json.loads(path.read_text())
    settings.get("ServerApp", {}).pop("jpserver_extensions", None)
    return settings


def test_an_executed_notebook_keeps_no_widget_state(tmp_path, monkeypatch):
    """`jupyter nbconvert --execute` from .venv: outputs kept, widget state (5 MB) not saved."""
    from nbconvert.nbconvertapp import NbConvertApp

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "no-user-config"))
    app = NbConvertApp()
    app.load_config_file()
    hint = "reinstall the settings: .venv/bin/pip install -r requirements.txt"
    assert app.config.ExecutePreprocessor.store_widget_state is False, hint
    assert app.config.KernelManager.transport_encryption == "auto", hint
    source = SETTINGS.with_name("jupyter_nbconvert_config.json")
    installed = INSTALLED.with_name("jupyter_nbconvert_config.json")
    assert json.loads(installed.read_text()) == json.loads(source.read_text()), hint


@pytest.mark.slow
def test_a_command_piped_into_head_ends_quietly():
    """`python code/run.py progress | head` must not end in a BrokenPipeError traceback."""
    import subprocess

    launcher = ROOT / "code" / "run.py"
    process = subprocess.Popen(
        [sys.executable, str(launcher), "progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader is gone before the first line: every write fails
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 0
    assert stderr == "", stderr


def test_the_pyproject_learners_receive_names_no_instructor_tool():
    """The student edition ships pyproject.toml as it is (plus ruff lines): no grading."""
    text = (ROOT / "pyproject.toml").read_text()
    assert not re.search(r"grading|instructor", text, re.I), "pyproject.toml names grading"


@pytest.mark.slow
def test_collected_submissions_are_never_committed():
    import shutil
    import subprocess

    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "check-ignore", "-q", "submissions/alice/code/scoring.py"], cwd=ROOT
    )
    assert done.returncode == 0, ".gitignore does not ignore submissions/"
