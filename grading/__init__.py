"""Memory Lab for instructors: the student edition, autograding with nbgrader, a self-check.

    python -m grading release          # dist/student/ (what learners get) and dist/course/
    python -m grading autograde DIR    # grade every DIR/<student_id>/: table, CSV, HTML feedback
    python -m grading selfcheck        # prove the pipeline on known right and wrong work

What a learner writes is code/scoring.py and code/retriever.py; notebooks 01-04 are the
harness that checks them. See docs/instructor-guide.md.

This package is the instructor's: it is left out of the student edition, since its
self-check holds deliberately wrong copies of the solution.
"""
