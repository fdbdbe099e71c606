"""The live pictures draw the learner's own functions, and degrade politely."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET

import plotly.graph_objects as go
import pytest

import scoring
from base.decay import min_max
from memory_store import Memory, MemoryStore
from teaching.figures import widgets as lab_widgets
from teaching.figures.svg_chart import figure_svg
from teaching.figures.widgets import DecayCurveExplorer, LiveFunction, WeightsExplorer

NOW = 1_000_000.0
HOUR = 3600.0


def stub(*args, **kwargs):
    raise NotImplementedError()


@pytest.mark.needs_milestones(1)
def test_the_decay_curve_is_the_learners_recency_score_and_follows_the_slider():
    explorer = DecayCurveExplorer()
    curve = explorer.figure.data[0]
    assert curve.y[0] == pytest.approx(1.0)
    assert curve.y[-1] == pytest.approx(0.995**168)
    explorer.rate.value = 0.9
    assert explorer.figure.data[0].y[-1] == pytest.approx(0.9**168)
    assert "half-life <b>6.6 hours</b>" in explorer.status.value
    assert "(as it should)" in explorer.status.value


@pytest.mark.needs_milestones(1)
def test_a_stub_shows_what_to_implement_and_the_curve_returns_once_it_works(monkeypatch):
    monkeypatch.setattr(scoring, "recency_score", stub)
    explorer = DecayCurveExplorer()
    assert "Not implemented yet" in explorer.status.value
    assert "recency_score" in explorer.status.value and "Milestone 1" in explorer.status.value
    assert explorer.figure.data[0].y in (None, ())
    monkeypatch.undo()
    explorer.rate.value = 0.99  # the learner moves a slider after implementing it
    assert "Not implemented" not in explorer.status.value
    assert len(explorer.figure.data[0].y) == 121


def test_a_broken_function_is_reported_in_the_widget_not_raised(monkeypatch):
    monkeypatch.setattr(scoring, "recency_score", lambda *a, **k: 1 / 0)
    explorer = DecayCurveExplorer()
    assert "ZeroDivisionError" in explorer.status.value


def test_live_function_rereads_a_module_when_its_file_changes(tmp_path, monkeypatch):
    source = tmp_path / "draft_scoring.py"
    source.write_text("def recency_score(*a, **k):\n    raise NotImplementedError()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    live = LiveFunction("recency_score", module="draft_scoring")
    with pytest.raises(NotImplementedError):
        live(NOW, NOW)
    source.write_text("def recency_score(now, last, decay_rate=0.995):\n    return 0.25\n")
    stamp = source.stat().st_mtime_ns + 1_000_000_000
    os.utime(source, ns=(stamp, stamp))
    assert live(NOW, NOW) == 0.25
    sys.modules.pop("draft_scoring", None)


def course_store() -> MemoryStore:
    store = MemoryStore()
    store.add(Memory("m0", "brushed teeth", created_at=NOW - 1e6, importance=1,
                     embedding=[1.0, 0.0, 0.0]))  # fmt: skip
    store.add(Memory("m1", "decided to default to Groq", created_at=NOW - 10, importance=8,
                     embedding=[1.0, 0.0, 0.0]))  # fmt: skip
    store.add(Memory("m2", "likes dark mode", created_at=NOW - HOUR, importance=3,
                     embedding=[0.0, 1.0, 0.0]))  # fmt: skip
    return store


def test_the_weights_explorer_ranks_with_the_learners_functions_and_the_sliders():
    explorer = WeightsExplorer(course_store(), [1.0, 0.0, 0.0], NOW)
    assert [row[0].id for row in explorer.ranking()] == ["m1", "m0", "m2"]
    assert list(explorer.figure.data[0].y) == ["m1", "m0", "m2"]
    explorer.sliders[1].value = 0.0  # no recency
    explorer.sliders[2].value = 0.0  # no importance: relevance alone ties m0 and m1
    assert [row[0].id for row in explorer.ranking()] == ["m0", "m1", "m2"]
    assert "brushed teeth" in explorer.table.value


@pytest.mark.needs_milestones(3)
def test_the_weights_explorer_names_every_unimplemented_function(monkeypatch):
    monkeypatch.setattr(scoring, "importance_score", stub)
    monkeypatch.setattr(scoring, "retrieval_score", stub)
    explorer = WeightsExplorer(course_store(), [1.0, 0.0, 0.0], NOW)
    assert "importance_score" in explorer.status.value
    assert "retrieval_score" in explorer.status.value
    assert "recency_score" not in explorer.status.value
    assert explorer.table.value == ""


@pytest.mark.parametrize(
    ("values", "expected"),
    [([1.0, 3.0, 2.0], [0.0, 1.0, 0.5]), ([0.7, 0.7], [0.5, 0.5]), ([], [])],
)
def test_min_max_rescales_to_zero_one_and_maps_no_spread_to_one_half(values, expected):
    assert min_max(values) == pytest.approx(expected)


@pytest.mark.needs_milestones(3)
def test_an_explorer_carries_an_svg_snapshot_for_viewers_without_a_kernel():
    bundle = DecayCurveExplorer()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    ET.fromstring(bundle["image/svg+xml"])  # well-formed
    assert "<polyline" in bundle["image/svg+xml"]


def test_the_svg_of_a_bar_chart_has_one_bar_per_value_and_escapes_text():
    figure = go.Figure(
        [go.Bar(x=["a<b", "c"], y=[1.0, -0.5], name="R&D"), go.Bar(x=["a<b", "c"], y=[2, 1])],
        layout=dict(title="t", barmode="group"),
    )
    svg = figure_svg(figure)
    root = ET.fromstring(svg)
    bars = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("fill") != "white"]
    assert len(bars) == 1 + 4 + 1  # the plot area, four bars, one legend swatch
    assert "a&lt;b" in svg and "R&amp;D" in svg


def test_figure_wraps_any_plotly_figure_live_with_a_snapshot():
    shown = lab_widgets.Figure(go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="markers")))
    bundle = shown._repr_mimebundle_()
    assert bundle["image/svg+xml"].count("<circle") == 2


def test_live_wraps_a_box_and_keeps_the_same_figure_widget():
    import ipywidgets as widgets

    figure = go.FigureWidget(go.Scatter(x=[1, 10, 100], y=[1, 10, 100], mode="lines"))
    figure.update_layout(xaxis_type="log", yaxis_type="log")
    shown = lab_widgets.Live(widgets.VBox([widgets.IntSlider(), figure]), figure)
    assert lab_widgets.Figure(figure).figure is figure
    figure.data[0].y = [100, 10, 1]  # an update after display still reaches the snapshot
    svg = shown._repr_mimebundle_()["image/svg+xml"]
    ET.fromstring(svg)
    assert ">100</text>" in svg and ">10</text>" in svg  # whole powers of ten as ticks


@pytest.mark.needs_milestones(1)
def test_the_decay_slider_reaches_one_where_recency_never_fades():
    explorer = DecayCurveExplorer(decay_rate=1.0)
    assert explorer.rate.value == 1.0
    assert "never fades" in explorer.status.value
    assert set(explorer.figure.data[0].y) == {1.0}
    assert not explorer.figure.data[1].x  # no half-life marker: there is no half-life


def run_python(code: str) -> str:
    """What `code` prints, run in a fresh Python in code/ (nothing imported yet)."""
    import subprocess

    from conftest import CODE

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=CODE, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_importing_the_widgets_loads_neither_plotly_nor_ipywidgets():
    """A notebook's first cell imports teaching.figures.widgets: plotly waits for a picture."""
    loaded = run_python(
        "import sys, teaching.figures.widgets\n"
        "print([m for m in ('plotly', 'ipywidgets') if m in sys.modules])"
    )
    assert loaded == "[]"


@pytest.mark.slow
def test_a_notebook_kernel_builds_no_iri_grammar_for_its_first_figure():
    """show_stubs_as_messages() in a kernel: the first FigureWidget compiles no Lark grammar."""
    compiled = run_python(
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance()\n"
        "from teaching.notebook import show_stubs_as_messages\n"
        "assert show_stubs_as_messages()\n"
        "import plotly.graph_objects as go\n"
        "from teaching.figures.widgets import DecayCurveExplorer\n"
        "DecayCurveExplorer()\n"
        "print('lark' in sys.modules)"
    )
    assert compiled == "False"
