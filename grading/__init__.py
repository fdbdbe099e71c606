"""Memory Lab for instructors: the student edition, a sandboxed autograder, a self-check.

    python -m grading release          # dist/student/ (what learners get) and dist/course/
    python -m grading autograde DIR    # grade every DIR/<student_id>/: table, CSV, HTML feedback
    python -m grading selfcheck        # prove the pipeline on known right and wrong work
    python -m grading points           # the points table, from the graded notebooks
    python -m grading reshape          # a graded cell added or removed after submissions
    python -m grading autograde DIR --queue ; python -m grading worker   # several graders

What a learner writes is code/scoring.py and code/retriever.py. Grading runs them in
sandboxed workers on inputs only; the trusted parent judges, grades each milestone on its
own and alone writes nbgrader's records of each submission, the feedback and the export,
so the formgrader, hand grading, release_feedback and nbgrader export work on the
sandboxed grades. Laid out by job (tests/test_layers.py holds who may import whom):

    sandbox/     the bubblewrap launcher, seccomp filter, memory cgroup and the worker
    judge/       the trusted parent: one submission's grading, the verdict, fresh inputs,
                 the reference scoring the Milestone 4 run asks for
    course/      the nbgrader course: editions, autograde, nbgrader's records (results,
                 gradebook, queue), preprocessors, reshape
    selfcheck/   the self-check's runner and its catalogue of mistakes and attacks
    layout.py markers.py points.py   the edition's facts, under every job

See docs/instructor-guide.md and docs/several-graders.md.

This package is the instructor's: it is left out of the student edition, since its
self-check holds deliberately wrong copies of the solution.
"""
