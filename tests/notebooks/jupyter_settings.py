"""The Jupyter settings package (tools/jupyter-settings), laid out as pip installs it.

`install_settings(folder, prefix)` copies each file its pyproject.toml lists under
[tool.setuptools.data-files] to `prefix/<target>/<name>`, as pip does for .venv, without
building anything (no network, no build tools): tests then point a JupyterLab at `prefix`.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "tools" / "jupyter-settings"


def data_files(folder: Path = SETTINGS) -> dict[str, list[str]]:
    """{target folder: [file names]}: what the package installs, and where."""
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())
    return pyproject["tool"]["setuptools"]["data-files"]


def install_settings(folder: Path, prefix: Path) -> Path:
    """Copy the package's data files into `prefix` as pip would; return `prefix`."""
    for target, names in data_files(folder).items():
        for name in names:
            (prefix / target).mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / name, prefix / target / Path(name).name)
    return prefix
