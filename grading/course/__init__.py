"""The nbgrader course: the editions, and the grades as nbgrader's own records.

    editions.py        `python -m grading release`: the student edition and dist/course/
    autograde.py       `python -m grading autograde DIR`: grade a folder of submissions
    results.py         gradebook rows, autograded notebooks, feedback and export
    gradebook.py       which database the gradebook is; one transaction per submission
    queue.py           several graders sharing a PostgreSQL gradebook and its queue
    preprocessors.py   what this course adds to nbgrader (named in its nbgrader_config.py)
    reshape.py         `python -m grading reshape`: a graded cell added or removed late

It never imports the self-check (tests/test_layers.py holds it).
"""
