"""A learner's first JupyterLab screen: no news pop-up and no update check (both offline).

JupyterLab 4 asks on first start whether to fetch "official Jupyter news" from the web; the
workbook's settings package answers "never" for everyone, through JupyterLab's own default
settings (overrides.d), so the question never appears and nothing is fetched.
"""

from __future__ import annotations

import json

import pytest
from jupyter_lab_server import JupyterLab
from jupyter_settings import SETTINGS, data_files, install_settings

NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def test_every_file_the_settings_package_lists_is_there():
    listed = [name for names in data_files().values() for name in names]
    assert listed and all((SETTINGS / name).is_file() for name in listed)


def test_the_news_and_update_check_are_switched_off_in_the_defaults():
    [target] = [t for t in data_files() if t.endswith("lab/settings/overrides.d")]
    [name] = data_files()[target]
    overrides = json.loads((SETTINGS / name).read_text())
    assert overrides[NOTIFICATION] == {"fetchNews": "false", "checkForUpdates": False}


class Unprompted(JupyterLab):
    """A JupyterLab with the package's lab settings and no user settings of the test's."""

    def __init__(self, workdir, prefix):
        super().__init__(workdir)
        self.prefix = prefix

    def environment(self):
        env = super().environment()
        # the test server's own user settings answer the news question: remove that answer
        settings = self.workdir / "jupyter-config" / "lab" / "user-settings"
        for path in settings.rglob("notification.jupyterlab-settings"):
            path.unlink()
        return env

    def command(self):
        return [
            *super().command(),
            f"--LabApp.app_settings_dir={self.prefix / 'share/jupyter/lab/settings'}",
        ]


@pytest.mark.slow
def test_jupyterlab_serves_never_fetch_news_as_its_default(tmp_path):
    prefix = install_settings(SETTINGS, tmp_path / "prefix")
    with Unprompted(tmp_path, prefix) as lab:
        schema = lab.request(f"/lab/api/settings/{NOTIFICATION}")["schema"]["properties"]
    assert schema["fetchNews"]["default"] == "false"
    assert schema["checkForUpdates"]["default"] is False
