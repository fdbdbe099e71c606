"""The first cell of every notebook: `%run -i workbook.py`.

It finds the folder that holds code/ (this one or one above it, wherever the notebooks
were copied), puts code/ on sys.path, turns on autoreload (a saved change to scoring.py
or retriever.py is used when a cell runs again, no restart needed) and makes an
unfinished function say which file and milestone it belongs to. `here` and `root` stay
defined in the notebook: the notebook's folder and the folder that holds code/.
"""

import sys
from pathlib import Path

here = Path.cwd().resolve()
root = next(p for p in (here, *here.parents) if (p / "code" / "memory_store.py").is_file())
if str(root / "code") not in sys.path:
    sys.path.insert(0, str(root / "code"))

from teaching.notebook import setup  # noqa: E402  (code/ is on the path only now)

setup()
