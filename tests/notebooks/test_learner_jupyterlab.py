"""A learner's JupyterLab shows a learner's tools: no formgrader, no Create Assignment.

The student edition's settings package (grading/course/editions.py `learner_jupyter_settings`)
switches off nbgrader's instructor panels, as plugins and as server extensions. Each test
starts a real JupyterLab on the settings laid out as pip installs them, once as the
student edition builds them and once as the master ships them (where the instructor keeps
the panels), and asks the server what it serves.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.request

import pytest
from jupyter_lab_server import JupyterLab
from jupyter_settings import SETTINGS, install_settings

from grading.course.editions import (
    INSTRUCTOR_PLUGINS,
    INSTRUCTOR_SERVER_EXTENSIONS,
    learner_jupyter_settings,
)

pytestmark = [pytest.mark.slow, pytest.mark.editions]

PAGE_CONFIG = re.compile(
    r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', re.S
)


class WithSettings(JupyterLab):
    """A JupyterLab that reads the settings package from `prefix` (JUPYTER_CONFIG_PATH)."""

    def __init__(self, workdir, prefix):
        super().__init__(workdir)
        self.prefix = prefix

    def environment(self):
        return {**super().environment(), "JUPYTER_CONFIG_PATH": str(self.prefix / "etc/jupyter")}

    def status(self, path: str) -> int:
        request = urllib.request.Request(
            f"{self.base}{path}", headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def page_config(self) -> dict:
        request = urllib.request.Request(
            f"{self.base}/lab", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(PAGE_CONFIG.search(response.read().decode()).group(1))


def settings_as(tmp_path, learner: bool):
    folder = tmp_path / "jupyter-settings"
    shutil.copytree(SETTINGS, folder, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    if learner:
        learner_jupyter_settings(folder)
    return install_settings(folder, tmp_path / "prefix")


def test_the_student_editions_jupyterlab_has_no_instructor_panels(tmp_path):
    with WithSettings(tmp_path, settings_as(tmp_path, learner=True)) as lab:
        disabled = set(lab.page_config()["disabledExtensions"])
        assert set(INSTRUCTOR_PLUGINS) <= disabled
        assert "@jupyter/nbgrader:assignment-list" not in disabled  # fetch and submit stay
        assert "@jupyter/nbgrader:validate-assignment" not in disabled
        assert lab.status("/formgrader") == 404
        assert lab.status("/api/status") == 200  # the rest of the server still answers
    assert all(name.startswith("nbgrader.") for name in INSTRUCTOR_SERVER_EXTENSIONS)


def test_the_masters_jupyterlab_keeps_the_instructor_panels(tmp_path):
    with WithSettings(tmp_path, settings_as(tmp_path, learner=False)) as lab:
        disabled = set(lab.page_config()["disabledExtensions"])
        assert not set(INSTRUCTOR_PLUGINS) & disabled
        assert lab.status("/formgrader") != 404
