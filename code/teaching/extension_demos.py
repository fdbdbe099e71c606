"""What the extension notebooks (07a-07h) share: a fixed clock, a demo store, two displays.

    from teaching.extension_demos import W, compare, embedder, make_store, now, table
    store = make_store()                   # two facts, a skill and four episodes
    table(rank_by_kind(store, query, now, weights=W), k=3)

Everything is offline and fixed, so every run prints the same: the clock is a date in
2026, the embedder is the word toy (memorylab/hashed-bow-384) whatever is configured, and
the weights are the 0.55 / 0.25 / 0.20 of the course's retrieval-augmented-memory reading
(relevance leads, recency and importance break its ties; the lab's default is the equal
weights of the project brief, base/defaults.py). CHAT_MODEL pins the offline stand-ins for
rating, summarising and distilling; set it to None to ask MEMORY_LAB_CHAT_MODEL instead.

Also here: the two sliders of those notebooks, half_life_explorer (07a) and budget_explorer
(07g), drawn with the learner's own recency_score and the context budget.

Deliberately left out: the extensions themselves (extensions/).
"""

from __future__ import annotations

from datetime import UTC, datetime

from base.units import SECONDS_PER_DAY as DAY
from base.units import SECONDS_PER_HOUR as HOUR
from embedding_helpers import Embedder
from llm.memory_block import format_age
from memory_store import MemoryStore

now = datetime(2026, 3, 20, 9, 0, tzinfo=UTC).timestamp()  # the notebooks' fixed "now"
embedder = Embedder("memorylab/hashed-bow-384")  # the word toy, always
W = (0.55, 0.25, 0.20)  # weights: relevance, recency, importance
# The model for rating, summarising and distilling. "memorylab/offline-chat" pins the offline
# versions; None asks MEMORY_LAB_CHAT_MODEL (a real model through litellm, if you set one).
CHAT_MODEL = "memorylab/offline-chat"
QUESTION = "which API should I default to?"

SEED = (  # id, kind, age in seconds, importance, text
    ("f1", "semantic", 120 * DAY, 8, "Eric prefers Groq as the default API for new projects"),
    ("f2", "semantic", 200 * DAY, 9, "deploys on Fridays are forbidden"),
    ("p1", "procedural", 300 * DAY, 6,
     "to rotate an API key: revoke the old key, then update the vault"),
    ("e1", "episodic", 2 * HOUR, 3, "looked at API pricing pages over coffee"),
    ("e2", "episodic", 1 * DAY, 4, "read a blog post about default API latency"),
    ("e3", "episodic", 60 * DAY, 5, "tried the Groq API for the first time"),
    ("e4", "episodic", 3 * DAY, 2, "lunch with Maya"),
)  # fmt: skip


def make_store() -> MemoryStore:
    """A fresh copy of the demo store (recall changes last_accessed, so each demo starts anew)."""
    store = MemoryStore()
    for memory_id, kind, age, importance, text in SEED:
        embedder.remember(
            store, text, kind=kind, importance=importance, now=now - age, memory_id=memory_id
        )
    return store


def short(text: str, width: int = 52) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def table(rows, k: int | None = None) -> None:
    """Print ScoredMemory rows: the three signals and the score behind each rank."""
    print(f"{'#':>2}  {'id':4} {'kind':10} {'age':>13}  rel   rec   imp   score  text")
    for rank, r in enumerate(rows[:k], 1):
        m = r.memory
        signals = f"{r.relevance:.2f}  {r.recency:.2f}  {r.importance:.2f}  {r.score:.3f}"
        age = format_age(now, m.created_at)
        print(f"{rank:>2}  {m.id:4} {m.kind:10} {age:>13}  {signals}  {short(m.text)}")


def compare(label_a: str, memories_a: list, label_b: str, memories_b: list, k: int = 3) -> None:
    """Two top-k lists side by side."""
    print(f"{'#':>2}  {label_a:48}  {label_b}")
    for rank in range(k):
        a = memories_a[rank] if rank < len(memories_a) else None
        b = memories_b[rank] if rank < len(memories_b) else None
        left = f"{a.id} {short(a.text, 44)}" if a else "-"
        right = f"{b.id} {short(b.text, 44)}" if b else "-"
        print(f"{rank + 1:>2}  {left:48}  {right}")


# --- the two sliders ----------------------------------------------------------------------


def half_life_explorer(days: int = 180, half_life_days: int = 45):
    """Recency over `days` for an episode with a slider-set half-life, a fact, and the core."""
    import ipywidgets as widgets  # here: importing this module stays light
    import plotly.graph_objects as go

    from base.decay import decay_rate_for_half_life
    from teaching.figures.widgets import LABEL, Live, LiveFunction

    recency = LiveFunction("recency_score")  # the learner's own, reloaded when saved
    x = list(range(0, days + 1, 2))

    def curve(rate: float) -> list[float]:
        return [recency(now, now - d * DAY, decay_rate=rate) for d in x]

    fig = go.FigureWidget(
        layout=dict(
            height=300, width=640, margin=dict(l=50, r=10, t=30, b=40),
            xaxis_title="days since last access", yaxis_title="recency",
            yaxis_range=[0, 1.05], legend=dict(x=0.45, y=0.95),
        )
    )  # fmt: skip
    episodic = decay_rate_for_half_life(half_life_days * 24)
    fig.add_scatter(x=x, y=curve(episodic), name=f"episodic: half-life {half_life_days} days")
    fig.add_scatter(x=x, y=curve(1.0), name="semantic and procedural: never fade")
    core = dict(name="the core: 0.995 per hour for all", line=dict(dash="dot"))
    fig.add_scatter(x=x, y=curve(0.995), **core)
    slider = widgets.IntSlider(
        value=half_life_days, min=1, max=365, description="episodic half-life (days)",
        style=LABEL, layout={"width": "420px"},
    )  # fmt: skip

    def redraw(change) -> None:
        with fig.batch_update():  # update the one curve in place
            fig.data[0].y = curve(decay_rate_for_half_life(change["new"] * 24))
            fig.data[0].name = f"episodic: half-life {change['new']} days"

    slider.observe(redraw, names="value")
    return Live(widgets.VBox([slider, fig]), fig)


def budget_explorer(recalled: list, budget: int = 160):
    """Each recalled memory's token cost, green when shown in full, orange when summarised."""
    import ipywidgets as widgets
    import plotly.graph_objects as go

    from extensions.context_budget import count_tokens, fit_to_budget
    from llm.memory_block import render_memory_block
    from teaching.figures.widgets import LABEL, Live

    overhead = count_tokens(render_memory_block([], now))
    costs = [count_tokens(render_memory_block([m], now)) - overhead for m in recalled]
    fig = go.FigureWidget(
        layout=dict(
            height=280, width=640, margin=dict(l=50, r=10, t=40, b=40),
            xaxis_title="recalled memory, best first", yaxis_title="tokens",
        )
    )  # fmt: skip
    fig.add_bar(x=[m.id for m in recalled], y=costs)
    slider = widgets.IntSlider(
        value=budget, min=60, max=400, step=10, description="budget (tokens)",
        style=LABEL, layout={"width": "420px"},
    )  # fmt: skip

    def refit(change) -> None:
        try:
            fitted = fit_to_budget(recalled, change["new"], now)
        except ValueError:
            colors, title = ["lightgray"] * len(recalled), "too small even for the summary"
        else:
            colors = ["seagreen" if m in fitted.included else "darkorange" for m in recalled]
            title = (
                f"{len(fitted.included)} shown, {len(fitted.summarised)} summarised: "
                f"{fitted.tokens} of {change['new']} tokens"
            )
        with fig.batch_update():
            fig.data[0].marker.color = colors
            fig.layout.title.text = title

    slider.observe(refit, names="value")
    refit({"new": slider.value})
    return Live(widgets.VBox([slider, fig]), fig)
