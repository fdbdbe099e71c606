"""The sandbox: where learner code runs, and nothing else of the grader does.

    launcher.py   one worker in a bubblewrap sandbox, its slot (a uid of its own) and the
                  JSON lines spoken to it
    seccomp.py    the worker's seccomp filter: kernel channels that outlive a sandbox, refused
    cgroup.py     a memory cgroup per worker: one cap on all its processes together
    worker.py     the worker itself, staged read-only into the sandbox: it runs a learner's
                  functions on inputs and imports nothing of grading/

It stands on grading/layout.py alone: never the judge, the nbgrader course or the
self-check (tests/test_layers.py holds it).
"""
