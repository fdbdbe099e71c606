"""A ranking taken apart: each memory's score as the stacked contributions of its signals.

    contribution_explorer(store, query_embedding, now, k=2)

draws one horizontal bar per memory, split into weight x relevance, weight x recency and
weight x importance, with a slider per weight. The title names the k memories that make
the prompt's budget, ranked by the learner's own rank_memories, so moving a weight shows
which signal decides. Notebook 06a uses it to show when recency and importance must help.

Deliberately left out: any scoring of its own; every number comes from the learner's
functions (the signals from one rank_memories call, the top k from one per move).
"""

from __future__ import annotations

import textwrap

from base.validation import Weights
from memory_store import MemoryStore

SIGNALS = ("relevance", "recency", "importance")


def contribution_explorer(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    k: int = 2,
    weights: Weights = (1.0, 0.0, 0.0),
    x_range: tuple[float, float] = (0.0, 3.0),
):
    """The live figure (a teaching.figures.widgets.Live) for `store` and one query at `now`."""
    import ipywidgets as widgets  # here: importing this module stays light
    import plotly.graph_objects as go

    from teaching.figures.widgets import Live, LiveFunction

    rank = LiveFunction("rank_memories")  # the learner's own, reloaded when saved
    notes = list(store.live())
    signals = {row.memory.id: row for row in rank(store, query_embedding, now)}
    figure = go.FigureWidget(
        layout=dict(
            width=680, height=280, margin=dict(l=330, r=20, t=40, b=40), barmode="stack",
            xaxis=dict(title="weight x signal", range=list(x_range)),
            legend=dict(orientation="h", y=-0.25),
        )
    )  # fmt: skip
    for name in SIGNALS:
        figure.add_bar(y=[m.text for m in notes], x=[0] * len(notes), name=name, orientation="h")
    sliders = {
        name: widgets.FloatSlider(value=value, min=0, max=1, step=0.1, description=name)
        for name, value in zip(SIGNALS, weights)
    }

    def redraw(_=None) -> None:
        chosen = tuple(slider.value for slider in sliders.values())
        top = rank(store, query_embedding, now, weights=chosen)[:k]
        with figure.batch_update():
            for trace, name, w in zip(figure.data, SIGNALS, chosen):
                trace.x = [w * getattr(signals[m.id], name) for m in notes]
            figure.layout.title = f"top {k}: " + " | ".join(
                textwrap.shorten(row.memory.text, 30, placeholder="...") for row in top
            )

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    return Live(widgets.VBox([widgets.HBox(list(sliders.values())), figure]), figure)
