"""What helps a learner learn: the milestones, the checks that teach, progress, pictures.

    milestones.py   the one table of learner functions, files, notebooks and grade cells
    checks/         the checks, one module per milestone, and what they share
    progress.py     python code/run.py progress: every milestone's check, and what next
    notebook.py     notebook set-up: an unfinished stub shows as a message
    figures/        sliders and figures drawn by the learner's own functions
    extension_demos.py  the clock, demo store and sliders notebooks 07a-07h share
    failure_demos.py    the assistants, chat turn and ranking table notebooks 06a-06b share
    mentor.py       python code/run.py mentor: feedback on UNDERSTANDING.md

The features (extensions/, evaluation/, scale/) never import this package.
"""
