"""The extension modules import quietly and leave litellm unloaded until a real model is asked."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSIONS = (
    "extensions.kinds",
    "extensions.superseding",
    "extensions.importance_rating",
    "extensions.consolidation",
    "extensions.forgetting",
    "extensions.what_to_embed",
    "extensions.distillation",
    "extensions.context_budget",
    "extensions.model_choice",
    "storage.sqlite_store",
    "storage.sqlite_file",
)


@pytest.mark.slow
def test_importing_every_extension_is_silent_and_does_not_load_litellm():
    source = (
        "import sys\n"
        f"import {', '.join(EXTENSIONS)}\n"
        "sys.stderr.write(repr([m for m in ('litellm', 'numpy') if m in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
    env.update(PYTHONPATH=str(ROOT / "code"), MEMORY_LAB_ENV_FILE="")
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", source],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "[]")


@pytest.mark.parametrize("name", EXTENSIONS)
def test_every_extension_says_what_it_leaves_out(name):
    module = importlib.import_module(name)
    assert "Deliberately left out" in (module.__doc__ or ""), f"{module.__file__} docstring"
