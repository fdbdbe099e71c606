"""What this course adds to nbgrader (named in dist/course/nbgrader_config.py).

StderrIsNotFailure (autograding, right after execution): nbgrader gives a grade cell
zero when anything reached stderr, so a library's DeprecationWarning would cost a
correct answer its points. In grade cells, stderr text is kept but moved to stdout,
marked "[stderr]"; a failed check still fails, since it raises an error.

HideHiddenChecks (feedback): nbgrader's HTML feedback shows the autograded notebook,
hidden checks included. This removes their code and shortens a failure inside them to
the likely mistake, without the case that failed or a traceback quoting the code.

SandboxedGradingOnly (Autograde.exporter_class): `nbgrader autograde` and the
formgrader's Autograde button would run learner code in a kernel, outside the sandbox,
and replace the sandboxed grade. nbgrader makes its exporter before it touches any
submission, the gradebook or autograded/, so refusing there changes nothing and says
which command grades this course.

SandboxedFeedbackOnly (GenerateFeedback.exporter_class): nbgrader's Generate Feedback (the
command and the formgrader's button) would write its own full-notebook pages over the
sandbox's (scripts, a CDN, the learner's raw HTML), and Release Feedback would ship them.
It refuses the same way, naming the command that writes this course's pages.
"""

from __future__ import annotations

import re

from nbconvert.exporters import NotebookExporter
from nbgrader.preprocessors import NbGraderPreprocessor

from grading.markers import HIDDEN

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TEACHING_LINES = ("likely mistake:", "(fix it in")


def _is_grade_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade", False)


class StderrIsNotFailure(NbGraderPreprocessor):
    """In grade cells, stderr output becomes marked stdout: only errors fail a check."""

    def preprocess_cell(self, cell, resources, index):
        if _is_grade_cell(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
                    output.text = "".join(
                        f"[stderr] {line}" for line in output.text.splitlines(True)
                    )
        return cell, resources


class HideHiddenChecks(NbGraderPreprocessor):
    """Hidden checks' code removed from feedback; their failures cut to the likely mistake."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or HIDDEN[0] not in cell.source:
            return cell, resources
        kept, hidden = [], False
        for line in cell.source.splitlines():
            if line.strip() == HIDDEN[0]:
                hidden = True
                kept.append(line[: len(line) - len(line.lstrip())] + "# (hidden checks)")
            elif line.strip() == HIDDEN[1]:
                hidden = False
            elif not hidden:
                kept.append(line)
        cell.source = "\n".join(kept)
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                output.evalue = _shown(output.ename, output.evalue)
                output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


def _shown(ename: str, message: str) -> str:
    """What feedback says about an error in a hidden check: never the case that failed.

    A failed check (CheckFailed) is cut to its likely mistake and where to fix it; other
    errors (a module that does not import, a stub) keep their first line, which names
    the learner's file, not the check.
    """
    lines = [ln.strip() for ln in ANSI.sub("", message).splitlines() if ln.strip()]
    if ename == "CheckFailed":
        teaching = [ln for ln in lines if ln.startswith(TEACHING_LINES)]
        return " ".join(["a hidden check failed.", *teaching])
    return lines[0] if lines else ""


REFUSAL = (
    "this course is graded in a sandbox, not in a notebook kernel: nbgrader autograde (and "
    "the formgrader's Autograde button) would run learner code unsandboxed and replace the "
    "sandboxed grades. Grade with:  python -m grading autograde dist/course/submitted"
)


class SandboxedGradingOnly(NotebookExporter):
    """Autograde's exporter: refuses before any submission is read or any grade written."""

    def __init__(self, *args, **kwargs):
        from nbgrader.converters.base import NbGraderException

        super().__init__(*args, **kwargs)
        parent = kwargs.get("parent")
        if parent is not None:
            parent.log.error(REFUSAL)
        raise NbGraderException(REFUSAL)


FEEDBACK_REFUSAL = (
    "this course's feedback pages are written by the sandboxed grader (feedback/<student>/"
    "milestones/: scores, likely mistakes and hand grades, no script and no learner HTML); "
    "nbgrader generate_feedback (and the formgrader's Generate Feedback button) would "
    "replace them with pages that carry the learner's HTML. Write them with:  python -m "
    "grading autograde dist/course/submitted  (after hand grading too), then Release Feedback"
)


class SandboxedFeedbackOnly(NotebookExporter):
    """GenerateFeedback's exporter: refuses before any feedback page is written."""

    def __init__(self, *args, **kwargs):
        from nbgrader.converters.base import NbGraderException

        super().__init__(*args, **kwargs)
        parent = kwargs.get("parent")
        if parent is not None:
            parent.log.error(FEEDBACK_REFUSAL)
        raise NbGraderException(FEEDBACK_REFUSAL)
