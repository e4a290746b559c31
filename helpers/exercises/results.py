"""The outcome of one check, and how it is shown: one green or red line, a picture where it helps.

``Graded`` is what an exercise kind's ``_grade`` finds; ``Exercise.grade`` turns it into the
``Result`` the learner sees, adding the exercise, the seed and the points.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Graded(NamedTuple):
    """What one exercise kind's check found: the status ("passed", "failed", "not_attempted",
    "unchecked"), one sentence for the learner, a matplotlib Figure where a picture explains more
    than words, and the numbers the check measured (the tracer's metrics for a kernel)."""

    status: str
    message: str
    picture: Any = None
    metrics: dict | None = None  # None: nothing measured


@dataclass
class Result:
    """The outcome of one check: a status, one sentence, and an optional matplotlib Figure
    (``picture``) where a picture explains more than words."""

    exercise: str
    status: str  # "passed" | "failed" | "not_attempted" | "error" | "unchecked" (ran nothing: not passed)
    message: str
    seed: int | None = None
    picture: Any = None
    metrics: dict = field(default_factory=dict)
    points: float = 0.0
    max_points: float = 1.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def line(self) -> str:
        mark = {"passed": "✓", "failed": "✗", "error": "✗", "not_attempted": "·", "unchecked": "?"}[self.status]
        seed = (
            f"  [seed {self.seed}: check(..., seed={self.seed}) repeats it]"
            if self.seed is not None and self.status == "failed"
            else ""
        )
        return f"{mark} {self.exercise}: {self.message}{seed}"

    def __str__(self) -> str:
        return self.line()

    def _repr_html_(self) -> str:
        color = {"passed": "#1a7f37", "not_attempted": "#6e7781", "unchecked": "#9a6700"}.get(self.status, "#cf222e")
        out = f"<div style='color:{color};font-weight:600'>{html.escape(self.line())}</div>"
        if self.picture is not None:
            out += f"<img src='data:image/png;base64,{png_base64(self.picture)}'/>"
        return out


def png_base64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=90)
    return base64.b64encode(buf.getvalue()).decode()


def in_jupyter() -> bool:
    try:
        from IPython import get_ipython

        ip = get_ipython()
    except ImportError:
        return False
    return ip is not None and hasattr(ip, "kernel")


def show(result: Result) -> None:
    if in_jupyter():
        from IPython.display import HTML, display

        display(HTML(result._repr_html_()))
    else:
        print(result.line())


def show_text(title: str, body: str, code: bool = False) -> None:
    if in_jupyter():
        from IPython.display import HTML, display

        tag = "pre" if code else "div"
        display(HTML(f"<b>{html.escape(title)}</b><{tag}>{html.escape(body)}</{tag}>"))
    else:
        print(f"{title}\n{body}")
