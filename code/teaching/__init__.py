"""What helps a learner learn: the milestones, the checks that teach, progress, pictures.

    milestones.py   the one table of learner functions, files, notebooks and grade cells
    checks/         the checks, one module per milestone, and what they share
    progress.py     python code/run.py progress: every milestone's check, and what next
    notebook.py     notebook set-up: an unfinished stub shows as a message
    widgets.py      sliders and figures drawn by the learner's own functions
    timelines.py    recency over days, a dot on each recall (notebook 04)
    contributions.py  a ranking taken apart into its signals, with weight sliders (06)
    extension_demos.py  the clock, demo store and sliders notebooks 07a-07h share
    tuning.py       weights and half-lives by hand, MRR against the course (08)
    svg_chart.py    static pictures of those figures, for outputs without a live kernel
    mentor.py       python code/run.py mentor: feedback on UNDERSTANDING.md

The features (extensions/, evaluation/, scale/) never import this package.
"""
