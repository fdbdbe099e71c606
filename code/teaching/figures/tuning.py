"""Tune a strategy by hand: sliders for the weights and half-lives, MRR bars against the course.

    tuning_explorer(year, course_report)

shows three weight sliders, two half-life sliders on a log scale (days, from 0.1 to
1,000), "facts never fade" and "drop superseded facts"; every change evaluates the
strategy those controls describe on the whole evaluation set and redraws its MRR per
category beside the course's. Notebook 08 uses it to let a learner beat the course.

Deliberately left out: any search for the best setting (tools/tune_hybrid.py does that
for the embedding; here a person turns the knobs).
"""

from __future__ import annotations

import math

from base.decay import half_life_hours
from base.defaults import DECAY_RATE
from evaluation.metrics import Report, evaluate
from evaluation.strategies import Strategy, decay_from_half_lives


def tuning_explorer(evalset, course: Report):
    """The live figure (a teaching.figures.widgets.Live) comparing your settings with `course`."""
    import ipywidgets as widgets  # here: importing this module stays light
    import plotly.graph_objects as go

    from teaching.figures.widgets import LABEL, Live

    categories = list(course.by_category)
    start_days = half_life_hours(DECAY_RATE) / 24  # the course's decay as a half-life: 5.76 d

    def weight(name):
        return widgets.FloatSlider(
            1.0, min=0, max=3, step=0.05, description=name, continuous_update=False
        )

    def half_life(name):
        return widgets.FloatLogSlider(
            start_days, base=10, min=-1, max=3, step=0.05, description=name,
            readout_format=".1f", continuous_update=False,
            style=LABEL,  # "episodes (d)" in full, not "episodes (…"
        )  # fmt: skip

    w_rel, w_rec, w_imp = weight("relevance"), weight("recency"), weight("importance")
    days_episodic, days_semantic = half_life("episodes (d)"), half_life("facts (d)")
    never_fade = widgets.Checkbox(False, description="facts never fade")
    drop_old = widgets.Checkbox(False, description="drop superseded facts")
    summary = widgets.HTML()
    course_mrr = [course.by_category[c]["MRR"] for c in categories]
    figure = go.FigureWidget(
        data=[
            go.Bar(name="course", x=categories, y=course_mrr, marker_color="lightgrey"),
            go.Bar(name="yours", x=categories, y=[0] * len(categories), marker_color="royalblue"),
        ],
        layout=dict(
            barmode="group", height=300, margin=dict(l=40, r=10, t=40, b=40),
            title="MRR by category: yours vs the course", yaxis=dict(range=[0, 1]),
        ),
    )  # fmt: skip

    def strategy() -> Strategy:
        fact_days = math.inf if never_fade.value else days_semantic.value
        hours = {"episodic": days_episodic.value * 24, "semantic": fact_days * 24,
                 "procedural": fact_days * 24}  # fmt: skip
        weights = (w_rel.value, w_rec.value, w_imp.value)
        return Strategy(
            "yours", weights, decay_from_half_lives(hours), exclude_superseded=drop_old.value
        )

    def update(_=None) -> None:
        mine = evaluate(evalset, strategy())
        with figure.batch_update():
            figure.data[1].y = [mine.by_category[c]["MRR"] for c in categories]
        yours, theirs = mine.overall, course.overall
        summary.value = (
            f"<b>overall MRR</b> yours {yours['MRR']:.3f} vs course {theirs['MRR']:.3f} &nbsp; "
            f"<b>recall@3</b> yours {yours['R@3']:.3f} vs course {theirs['R@3']:.3f}"
        )

    controls = [w_rel, w_rec, w_imp, days_episodic, days_semantic, never_fade, drop_old]
    for control in controls:
        control.observe(update, names="value")
    update()
    columns = widgets.HBox([widgets.VBox(controls[:3]), widgets.VBox(controls[3:])])
    return Live(widgets.VBox([columns, summary, figure]), figure)
