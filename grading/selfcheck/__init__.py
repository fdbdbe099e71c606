"""The self-check: `python -m grading selfcheck` and its catalogue of known submissions.

    runner.py     builds the editions and grades the catalogue, each against the grade it
                  must get
    mistakes.py   the catalogue's right, untouched and one-mistake submissions
    attacks.py    the catalogue's attacks on the grader

The catalogue (mistakes.py, attacks.py) imports nothing of its runner or of the grader it
tests; nothing but the runner and the command line imports the self-check
(tests/test_layers.py holds it).
"""
