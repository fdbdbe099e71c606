"""Sliders that redraw the learner's own functions: the workbook's live pictures.

Each explorer is a plotly FigureWidget driven by ipywidgets sliders. Moving a slider
calls the learner's current function again (re-read from disk when code/scoring.py has
changed, so saving the file is enough) and updates the figure in place.

While a function is still the stub, the explorer says which one to implement instead of
showing a traceback, and comes to life at the first slider move after it works. Outside
a live kernel (HTML export, GitHub) the explorer shows an SVG snapshot of its figure.

Deliberately left out: any formula of the lab itself; every number drawn comes from the
learner's code.

    explorer = DecayCurveExplorer()   # in a notebook cell, as the cell's last line
    explorer
"""

from __future__ import annotations

import html
import importlib
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from base.decay import half_life_hours, min_max
from base.defaults import COURSE_NOW, DECAY_RATE
from base.units import SECONDS_PER_HOUR
from teaching.figures.svg_chart import figure_svg
from teaching.milestones import MILESTONES

if TYPE_CHECKING:  # imported where a picture is built: importing this module stays instant
    import ipywidgets as widgets
    import plotly.graph_objects as go


NOW = COURSE_NOW  # a fixed "now", epoch seconds
HOUR = SECONDS_PER_HOUR
LABEL = {"description_width": "initial"}  # show a control's whole label, never "hours sho..."


class LiveFunction:
    """The learner's function by name, reloaded whenever its file changes on disk."""

    def __init__(self, name: str, module: str | None = None) -> None:
        self.name = name
        self.module = module or MILESTONES[name].module
        self._stamp: int | None = None

    def __call__(self, *args, **kwargs):
        module = sys.modules.get(self.module) or importlib.import_module(self.module)
        stamp = Path(module.__file__).stat().st_mtime_ns
        if self._stamp is not None and stamp != self._stamp:
            module = importlib.reload(module)  # the learner saved a new version
        self._stamp = stamp
        return getattr(module, self.name)(*args, **kwargs)


def todo_message(names: list[str]) -> str:
    """HTML telling the learner which functions to implement first, and where."""
    items = "".join(
        f"<li><code>{n}</code> in <code>{MILESTONES[n].file}</code> "
        f"(Milestone {MILESTONES[n].number})</li>"
        for n in names
    )
    return (
        "<div style='padding:6px;border-left:4px solid #e0a800;background:#fff8e1'>"
        f"<b>Not implemented yet.</b> This picture draws your own code. Implement:<ul>{items}"
        "</ul>save the file, then move a slider.</div>"
    )


def error_message(name: str, error: Exception) -> str:
    text = html.escape(f"{type(error).__name__}: {error}")
    return (
        "<div style='padding:6px;border-left:4px solid #d9534f;background:#fdecea'>"
        f"<b><code>{name}</code> raised an error:</b> <code>{text}</code><br>"
        "Fix it in the file, save, then move a slider.</div>"
    )


class Explorer:
    """A box of controls over a FigureWidget, with an SVG snapshot for static viewers."""

    figure: go.FigureWidget
    box: widgets.Widget

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.box._repr_mimebundle_(**kwargs) or {}
        bundle["image/svg+xml"] = figure_svg(self.figure)
        bundle["text/plain"] = f"{type(self).__name__} (a live figure: open it in Jupyter)"
        return bundle


class Figure(Explorer):
    """Any plotly figure shown live, with its SVG snapshot: `Figure(go.Figure(...))`.

    A FigureWidget is shown as it is, so later updates to it still reach the picture.
    """

    def __init__(self, figure) -> None:
        import plotly.graph_objects as go

        is_widget = isinstance(figure, go.FigureWidget)
        self.figure = figure if is_widget else go.FigureWidget(figure)
        self.box = self.figure


class Live(Explorer):
    """Any box of widgets around a FigureWidget: `Live(widgets.VBox([slider, fig]), fig)`."""

    def __init__(self, box: widgets.Widget, figure: go.FigureWidget) -> None:
        self.box, self.figure = box, figure


class DecayCurveExplorer(Explorer):
    """recency_score over the last hours, with sliders for the decay rate and the span."""

    def __init__(self, decay_rate: float = DECAY_RATE, hours: int = 168) -> None:
        import ipywidgets as widgets
        import plotly.graph_objects as go

        self.recency = LiveFunction("recency_score")
        self.rate = widgets.FloatSlider(
            value=decay_rate,
            min=0.90,
            max=1.0,  # 1.0: never fades
            step=0.001,
            readout_format=".3f",
            description="decay_rate",
            style=LABEL,
            continuous_update=True,
        )
        self.span = widgets.IntSlider(
            value=hours, min=24, max=24 * 30, step=24, description="hours shown", style=LABEL
        )
        self.status = widgets.HTML()
        self.figure = go.FigureWidget(
            layout=go.Layout(
                title="Your recency_score: recency against hours since last access",
                xaxis_title="hours since last access",
                yaxis=dict(title="recency", range=[0, 1.05]),
                height=360,
                margin=dict(l=60, r=20, t=50, b=50),
            )
        )
        self.figure.add_scatter(name="your recency_score", mode="lines")
        self.figure.add_scatter(name="half-life", mode="lines", line=dict(dash="dash"))
        self.figure.add_scatter(name="recency 0.5", mode="lines", line=dict(dash="dot"))
        for slider in (self.rate, self.span):
            slider.observe(lambda _change: self.update(), names="value")
        self.box = widgets.VBox([widgets.HBox([self.rate, self.span]), self.status, self.figure])
        self.update()

    def update(self) -> None:
        rate, span = self.rate.value, self.span.value
        hours = [span * i / 120 for i in range(121)]
        half_life = half_life_hours(rate)  # rate ** half_life == 0.5; inf for 1.0
        try:
            values = [self.recency(NOW, NOW - h * HOUR, decay_rate=rate) for h in hours]
            at_half_life = self.recency(NOW, NOW - min(half_life, 1e6) * HOUR, decay_rate=rate)
        except NotImplementedError:
            self.status.value = todo_message(["recency_score"])
            hours = values = []
        except Exception as error:  # shown to the learner, not raised into the widget
            self.status.value = error_message("recency_score", error)
            hours = values = []
        else:
            self.status.value = self.readout(rate, half_life, at_half_life, values[-1], span)
        marker = hours and half_life <= span
        with self.figure.batch_update():
            curve, half, level = self.figure.data
            curve.x, curve.y = hours, values
            half.x, half.y = ([half_life] * 2, [0, 1]) if marker else ([], [])
            level.x, level.y = ([0, span], [0.5, 0.5]) if hours else ([], [])
            self.figure.layout.xaxis.range = [0, span]

    @staticmethod
    def readout(rate, half_life, at_half_life, at_end, span) -> str:
        if math.isinf(half_life):
            return f"decay_rate 1.0: recency never fades; your function gives {at_end:.4f}."
        verdict = " (as it should)" if abs(at_half_life - 0.5) < 1e-6 else " (expected 0.5000)"
        return (
            f"decay_rate <b>{rate:.3f}</b> per hour: half-life <b>{half_life:.1f} hours</b> "
            f"({half_life / 24:.1f} days), since {rate:.3f} ** {half_life:.1f} = 0.5. "
            f"Your function gives <b>{at_half_life:.4f}</b> there{verdict}, and "
            f"<b>{at_end:.4f}</b> after {span} hours."
        )


class WeightsExplorer(Explorer):
    """Re-rank a store live as the three weights move; bars show each signal's share."""

    SIGNALS = ("relevance", "recency", "importance")

    def __init__(self, store, query_embedding, now, decay_rate: float = DECAY_RATE) -> None:
        import ipywidgets as widgets
        import plotly.graph_objects as go

        self.store, self.query, self.now, self.decay_rate = store, query_embedding, now, decay_rate
        self.functions = {
            name: LiveFunction(name)
            for name in ("relevance_score", "recency_score", "importance_score", "retrieval_score")
        }
        self.sliders = [
            widgets.FloatSlider(
                value=1.0, min=0.0, max=3.0, step=0.05, description=f"w_{s[:3]}", style=LABEL
            )
            for s in self.SIGNALS
        ]
        self.normalise = widgets.Checkbox(
            value=False,
            description="min-max normalise each signal (Generative Agents)",
            style=LABEL,
            layout=widgets.Layout(width="auto"),  # a checkbox truncates its label otherwise
        )
        self.status = widgets.HTML()
        self.table = widgets.HTML()
        self.figure = go.FigureWidget(
            layout=go.Layout(
                title="Each memory's score, split into its weighted signals",
                barmode="relative",
                xaxis_title="score (weight x signal, stacked)",
                yaxis=dict(autorange="reversed"),
                height=340,
                margin=dict(l=120, r=20, t=50, b=50),
            )
        )
        for signal in self.SIGNALS:
            self.figure.add_bar(name=signal, orientation="h")
        for control in (*self.sliders, self.normalise):
            control.observe(lambda _change: self.update(), names="value")
        self.box = widgets.VBox(
            [widgets.HBox(self.sliders), self.normalise, self.status, self.figure, self.table]
        )
        self.update()

    @property
    def weights(self) -> tuple[float, float, float]:
        return tuple(s.value for s in self.sliders)

    def signals(self) -> list[tuple]:
        """(memory, relevance, recency, importance) for every live memory, from your code."""
        f = self.functions
        rows = [
            (
                m,
                f["relevance_score"](self.query, m.embedding),
                f["recency_score"](self.now, m.last_accessed, decay_rate=self.decay_rate),
                f["importance_score"](m.importance),
            )
            for m in self.store.live()
        ]
        if self.normalise.value:
            columns = [min_max([row[i] for row in rows]) for i in (1, 2, 3)]
            rows = [(row[0], *values) for row, values in zip(rows, zip(*columns))]
        return rows

    def ranking(self) -> list[tuple]:
        """(memory, relevance, recency, importance, score) best first, ties in store order."""
        rows = self.signals()
        scored = [
            (*row, self.functions["retrieval_score"](*row[1:], weights=self.weights))
            for row in rows
        ]
        return sorted(scored, key=lambda row: row[4], reverse=True)

    def update(self) -> None:
        try:
            ranked = self.ranking()
        except NotImplementedError:
            self.status.value = todo_message(self._missing())
            ranked = []
        except Exception as error:  # shown to the learner, not raised into the widget
            self.status.value = error_message("a scoring function", error)
            ranked = []
        else:
            self.status.value = ""
        labels = [row[0].id for row in ranked]
        with self.figure.batch_update():
            for i, trace in enumerate(self.figure.data):
                trace.y = labels
                trace.x = [self.weights[i] * row[1 + i] for row in ranked]
        self.table.value = ranking_table(ranked) if ranked else ""

    def _missing(self) -> list[str]:
        """The scoring functions that are still stubs, in milestone order."""
        probes = {
            "recency_score": lambda f: f(NOW, NOW),
            "importance_score": lambda f: f(5),
            "relevance_score": lambda f: f([1.0], [1.0]),
            "retrieval_score": lambda f: f(0.5, 0.5, 0.5),
        }
        missing = []
        for name, probe in probes.items():
            try:
                probe(self.functions[name])
            except NotImplementedError:
                missing.append(name)
            except Exception:  # broken, not missing: update() reports errors separately
                pass
        return missing


def ranking_table(rows: list[tuple]) -> str:
    """An HTML table of (memory, relevance, recency, importance, score) rows."""
    head = "".join(
        f"<th style='padding:2px 8px'>{h}</th>"
        for h in ("#", "id", "text", "relevance", "recency", "importance", "score")
    )
    body = "".join(
        f"<tr><td>{rank}</td><td>{html.escape(m.id)}</td><td>{html.escape(m.text[:48])}</td>"
        + "".join(f"<td style='text-align:right'>{x:.3f}</td>" for x in numbers)
        + "</tr>"
        for rank, (m, *numbers) in enumerate(rows, 1)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
