"""Recency over days: one line per memory, a dot on each day it was recalled.

    recency_timeline(recency, recalled)   # -> a teaching.figures.widgets.Figure

`recency` maps a memory id to its recency each morning (day 1, 2, ...), as computed by the
learner's recency_score; `recalled` maps the id to the days it was returned. Memories that
are recalled together have identical lines, so the styles alternate solid and dashed
within each colour pair, and a dot marks every recall. Notebook 04 draws a month of
questions with it.

Deliberately left out: the simulation itself, which stays in the notebook where a
learner can read and change it.
"""

from __future__ import annotations

PALETTE = ("#636efa", "#19d3f3", "#ef553b", "#ffa15a", "#00cc96", "#ab63fa", "#ff6692")


def recency_timeline(
    recency: dict[str, list[float]],
    recalled: dict[str, list[int]],
    title: str = "Recency each morning: recalled memories stay warm, the rest fade",
):
    """The figure of `recency` (id -> one value per day) with `recalled` days marked."""
    import plotly.graph_objects as go  # here: importing this module stays light

    from teaching.figures.widgets import Figure

    days = list(range(1, 1 + max((len(v) for v in recency.values()), default=0)))
    figure = go.Figure(
        layout=dict(
            title=title,
            xaxis_title="day",
            yaxis=dict(title="recency before the question", range=[0, 1.05]),
            height=380,
        )
    )
    for i, (memory_id, values) in enumerate(recency.items()):
        colour = PALETTE[i % len(PALETTE)]
        dash = ("solid", "dash")[i % 2] if i < 4 else "dot"  # two pairs, then dotted
        figure.add_scatter(
            x=days, y=values, name=memory_id, mode="lines", line=dict(color=colour, dash=dash)
        )
        on_days = recalled.get(memory_id, [])
        figure.add_scatter(
            x=on_days,
            y=[values[d - 1] for d in on_days],
            mode="markers",
            marker=dict(color=colour, size=6),
            showlegend=False,
        )
    return Figure(figure)
