"""The released student edition: provided code that ranks or recalls waits for the learner.

Built by the course's own release (test_queue's `released` fixture, a scratch dist/).
Each provided function of tests/provided_probes.py, called in the fresh student edition,
raises "not implemented yet" naming the learner function and milestone it runs on; the
notebook 09 exercise is a stub there too, and the index then takes no shortcut.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_queue import released  # noqa: F401 (a module-scoped scratch release)

from provided_probes import PROBES, expected_words, run_probe


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_fresh_student_edition_names_the_stub_each_provided_function_waits_for(
    released,  # noqa: F811
    name,
):
    outcome = run_probe(released / "student" / "code", name)
    assert outcome["raised"] == "NotWrittenYet", f"{name} ran without the learner's code"
    for word in expected_words(name):
        assert word in outcome["message"], outcome["message"]


def test_the_student_edition_stubs_the_vectorised_score(released):  # noqa: F811
    code = released / "student" / "code"
    source = (code / "scoring.py").read_text()
    assert "def retrieval_scores(" in source and "### BEGIN SOLUTION" not in source
    script = (
        f"import sys; sys.path.insert(0, {str(code)!r})\n"
        "import scoring\n"
        "try:\n    scoring.retrieval_scores([0.5], 3600.0, [0.0], [5])\n"
        "except NotImplementedError:\n    print('stub')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "stub", done.stderr
