"""The judge: the trusted parent's side of grading, learner code never runs here.

    grader.py    one submission: stage its two files, run sandboxed workers, grade each
                 milestone on its own
    verdict.py   every grade cell's cases, sent to a worker as inputs, judged here
    fresh.py     fresh inputs for every graded cell, drawn per grading from a secret
    oracle.py    the reference scoring the Milestone 4 run asks for, answered here

It uses the sandbox and never the nbgrader course's records or the self-check
(tests/test_layers.py holds it).
"""
