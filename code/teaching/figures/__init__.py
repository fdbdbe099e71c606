"""The workbook's pictures: sliders and figures drawn by the learner's own functions.

widgets.py        the explorers: decay curve, weight sliders, chat widget, Figure
timelines.py      recency over days, a dot on each recall (notebook 04)
contributions.py  a ranking taken apart into its signals, with weight sliders (06a)
tuning.py         weights and half-lives by hand, MRR against the course (08)
svg_chart.py      static pictures of those figures, for outputs without a live kernel
"""
