"""Memory Lab for instructors: the student edition, a sandboxed autograder, a self-check.

    python -m grading release          # dist/student/ (what learners get) and dist/course/
    python -m grading autograde DIR    # grade every DIR/<student_id>/: table, CSV, HTML feedback
    python -m grading selfcheck        # prove the pipeline on known right and wrong work
    python -m grading points           # the points table, from the graded notebooks
    python -m grading reshape          # a graded cell added or removed after submissions
    python -m grading autograde DIR --queue ; python -m grading worker   # several graders

What a learner writes is code/scoring.py and code/retriever.py. Grading runs them in
sandboxed workers (sandbox.py, worker.py) on inputs only; the trusted parent judges
(verdict.py), grades each milestone on its own (grader.py) and alone writes nbgrader's
records of each submission, the feedback and the export (results.py), so the formgrader,
hand grading, release_feedback and nbgrader export work on the sandboxed grades. A
submission's rows are written in one transaction (gradebook.py); several graders share a
PostgreSQL gradebook and a queue (queue.py). See docs/instructor-guide.md and
docs/several-graders.md.

This package is the instructor's: it is left out of the student edition, since its
self-check holds deliberately wrong copies of the solution.
"""
