"""A plotly figure drawn as a small static SVG, for places where no kernel is running.

Live figures in the workbook are plotly FigureWidgets, which need a running kernel and
the widget JavaScript. A notebook exported to HTML (nbgrader feedback, nbconvert) or
viewed on GitHub has neither, so every live figure also carries this SVG snapshot as a
fallback: JupyterLab shows the live widget, everything else shows the picture.

Handles what the workbook draws: line/marker scatter traces and bar traces (vertical or
horizontal, stacked or grouped), on linear or log axes, with a title, axis titles and a
legend. Deliberately left out: everything else plotly can do (hover, subplots, dates).

    >>> svg = figure_svg(go.Figure(go.Scatter(x=[0, 1], y=[1, 0.5])))
    >>> svg.startswith("<svg")
    True
"""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692")
WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 50  # margins in pixels; the legend sits right


def _colour(trace, index: int) -> str:
    for part in ("line", "marker"):
        colour = getattr(getattr(trace, part, None), "color", None)
        if isinstance(colour, str):
            return colour
    return PALETTE[index % len(PALETTE)]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round numbers spanning [low, high]."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    start = math.ceil(low / step - 1e-9) * step
    return [start + i * step for i in range(int((high - start) / step + 1e-9) + 1)]


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _scale(axis) -> tuple:
    """(value -> position, position -> tick label, tick positions) for a linear or log axis."""
    if axis.type != "log":
        return (lambda v: v), _fmt, _ticks
    # plotly gives a log axis's range in powers of ten; ticks go at the whole powers
    return (
        (lambda v: math.log10(v) if v > 0 else math.nan),
        (lambda t: _fmt(10**t)),
        (lambda low, high: list(range(math.ceil(low), math.floor(high) + 1)) or _ticks(low, high)),
    )


def _bar_extents(bars, stacked: bool) -> tuple[list[str], dict, float, float]:
    """Categories in first-seen order, each bar's (category, start, end), and the value range."""
    categories: list[str] = []
    spans = {}
    positive: dict[str, float] = {}
    negative: dict[str, float] = {}
    for index, trace in bars:
        horizontal = trace.orientation == "h"
        cats = trace.y if horizontal else trace.x
        values = trace.x if horizontal else trace.y
        for cat, value in zip(cats, values):
            cat, value = str(cat), float(value)
            if cat not in categories:
                categories.append(cat)
            pile = positive if value >= 0 else negative
            base = pile.get(cat, 0.0) if stacked else 0.0
            pile[cat] = base + value
            spans[(index, cat)] = (base, base + value)
    ends = [v for span in spans.values() for v in span] or [0.0]
    return categories, spans, min(0.0, *ends), max(0.0, *ends)


def figure_svg(figure) -> str:
    """An SVG string of `figure` (a plotly Figure or FigureWidget)."""
    layout = figure.layout
    traces = list(figure.data)
    bars = [(i, t) for i, t in enumerate(traces) if t.type == "bar"]
    lines = [(i, t) for i, t in enumerate(traces) if t.type == "scatter"]
    horizontal = bool(bars) and all(t.orientation == "h" for _, t in bars)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
    ]
    title = layout.title.text if layout.title and layout.title.text else ""
    out.append(
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>'
    )

    if bars:
        stacked = layout.barmode in ("stack", "relative")
        categories, spans, low, high = _bar_extents(bars, stacked)
        pad = 0.05 * (high - low)  # a little air beyond the longest bar
        fixed = layout.xaxis.range if horizontal else layout.yaxis.range
        low, high = fixed if fixed else (low - pad if low < 0 else low, high + pad)
    else:
        to_x, x_label, x_ticks = _scale(layout.xaxis)
        to_y, y_label, y_ticks = _scale(layout.yaxis)
        points_of = {
            index: [
                (to_x(float(x)), to_y(float(y)))
                for x, y in zip(trace.x or [], trace.y or [])
                if x is not None and y is not None
            ]
            for index, trace in lines
        }
        finite = [p for ps in points_of.values() for p in ps if all(map(math.isfinite, p))]
        xs = [x for x, _ in finite] or [0.0, 1.0]
        ys = [y for _, y in finite] or [0.0, 1.0]
        x_low, x_high = layout.xaxis.range or (min(xs), max(xs))
        low, high = layout.yaxis.range or (min(ys), max(ys))
        if x_high == x_low:
            x_high = x_low + 1
    if high == low:
        high = low + 1

    def along(value: float) -> float:  # value axis -> pixels
        share = (value - low) / (high - low)
        return LEFT + share * plot_w if horizontal else TOP + plot_h - share * plot_h

    # axes, value ticks and grid
    out.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="#f4f6fa" stroke="#ccc"/>'
    )
    value_ticks, value_label = (_ticks, _fmt) if bars else (y_ticks, y_label)
    for tick in value_ticks(low, high):
        p = along(tick)
        if horizontal:
            out.append(
                f'<line x1="{p:.1f}" y1="{TOP}" x2="{p:.1f}" y2="{TOP + plot_h}" stroke="#ddd"/>'
            )
            out.append(
                f'<text x="{p:.1f}" y="{TOP + plot_h + 14}" text-anchor="middle">'
                f"{value_label(tick)}</text>"
            )
        else:
            out.append(
                f'<line x1="{LEFT}" y1="{p:.1f}" x2="{LEFT + plot_w}" y2="{p:.1f}" stroke="#ddd"/>'
            )
            out.append(
                f'<text x="{LEFT - 6}" y="{p + 4:.1f}" text-anchor="end">{value_label(tick)}</text>'
            )

    if bars:
        slot = (plot_h if horizontal else plot_w) / max(1, len(categories))
        groups = 1 if stacked else len(bars)
        for n, cat in enumerate(categories):
            centre = TOP + (n + 0.5) * slot if horizontal else LEFT + (n + 0.5) * slot
            if horizontal:
                out.append(
                    f'<text x="{LEFT - 6}" y="{centre + 4:.1f}" text-anchor="end">'
                    f"{escape(cat[:18])}</text>"
                )
            else:
                out.append(
                    f'<text x="{centre:.1f}" y="{TOP + plot_h + 14}" '
                    f'text-anchor="middle">{escape(cat[:14])}</text>'
                )
        for g, (index, trace) in enumerate(bars):
            colour = _colour(trace, index)
            for n, cat in enumerate(categories):
                if (index, cat) not in spans:
                    continue
                start, end = spans[(index, cat)]
                a, b = sorted((along(start), along(end)))
                thick = 0.7 * slot / groups
                offset = n * slot + 0.15 * slot + (0 if stacked else g * thick)
                if horizontal:
                    x, y, w, h = a, TOP + offset, b - a, thick
                else:
                    x, y, w, h = LEFT + offset, a, thick, b - a
                out.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                    f'fill="{colour}"/>'
                )
    else:
        for tick in x_ticks(x_low, x_high):
            p = LEFT + (tick - x_low) / (x_high - x_low) * plot_w
            out.append(
                f'<text x="{p:.1f}" y="{TOP + plot_h + 14}" text-anchor="middle">'
                f"{x_label(tick)}</text>"
            )
        out.append(
            f'<clipPath id="plot"><rect x="{LEFT}" y="{TOP}" width="{plot_w}" '
            f'height="{plot_h}"/></clipPath>'
        )
        for index, trace in lines:
            points = [
                (LEFT + (x - x_low) / (x_high - x_low) * plot_w, along(y))
                for x, y in points_of[index]
                if math.isfinite(x) and math.isfinite(y)
            ]
            colour, mode = _colour(trace, index), trace.mode or "lines"
            dash = ' stroke-dasharray="5,4"' if trace.line and trace.line.dash else ""
            if "lines" in mode and len(points) > 1:
                path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
                out.append(
                    f'<polyline points="{path}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"{dash} clip-path="url(#plot)"/>'
                )
            if "markers" in mode:
                out.extend(
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>' for x, y in points
                )

    # axis titles and legend
    x_title = layout.xaxis.title.text if layout.xaxis.title else None
    y_title = layout.yaxis.title.text if layout.yaxis.title else None
    if x_title:
        out.append(
            f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">'
            f"{escape(x_title)}</text>"
        )
    if y_title:
        out.append(
            f'<text transform="translate(16,{TOP + plot_h / 2}) rotate(-90)" '
            f'text-anchor="middle">{escape(y_title)}</text>'
        )
    named = [(i, t) for i, t in enumerate(traces) if t.name and t.showlegend is not False]
    for row, (index, trace) in enumerate(named):
        y = TOP + 10 + row * 18
        out.append(
            f'<rect x="{WIDTH - RIGHT + 12}" y="{y - 8}" width="12" height="10" '
            f'fill="{_colour(trace, index)}"/>'
        )
        out.append(f'<text x="{WIDTH - RIGHT + 30}" y="{y + 1}">{escape(trace.name[:22])}</text>')
    out.append("</svg>")
    return "\n".join(out)
