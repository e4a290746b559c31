"""What every exercise kind shares: ``check``/``hint``/``solution``, "not attempted", the registry.

``grade(answer, seed)`` is pure and never raises: it returns a ``Result`` whose status is
"passed", "failed", "not_attempted", "error" or "unchecked". Each kind's ``_grade`` returns a
``Graded`` (results.py). ``check`` = grade + show + record progress.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import numbers
import os
import re
import textwrap
from dataclasses import dataclass

import numpy as np

from .. import _numba
from ..errors import CourseError, shown
from ..tracer.watchdog import HELPERS, LIBRARIES, describe_function, line_text, watchdog
from . import progress as _progress
from .executor import LOCAL, Executor, takes_executor
from .results import Graded, Result, show, show_text

PLACEHOLDER = "YOUR CODE HERE"  # the marker tools/sync_notebooks.py leaves in learners' notebooks
_PLACEHOLDER_COMMENT = re.compile(r"/\*\s*YOUR CODE HERE\s*\*/|//\s*YOUR CODE HERE[^\n]*|#\s*YOUR CODE HERE[^\n]*")
MISSING = object()  # check() called with no answer at all


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little") % 1_000_000  # short enough to retype


def not_attempted(answer) -> bool:
    """True while the answer is still the placeholder: None, ..., or a function whose body is only
    ``pass`` / ``...`` / ``return None`` next to the ``# YOUR CODE HERE`` comment. A real answer that
    kept the comment is graded like any other."""
    if answer is None or answer is Ellipsis or answer is MISSING:
        return True
    if isinstance(answer, str):
        if PLACEHOLDER not in answer:
            return False
        rest = _PLACEHOLDER_COMMENT.sub("", answer).replace(PLACEHOLDER, "")
        if not rest.strip():
            return True
        # CUDA C handed out as a kernel whose whole body is the placeholder: `...) { /* YOUR CODE HERE */ }`
        bodies = re.findall(r"\{([^{}]*)\}", rest)
        return bool(bodies) and not any(body.strip() for body in bodies)
    fn = (
        _numba.python_function(answer)
        or _numba.cpu_jit_function(answer)  # an @njit placeholder (notebook 12)
        or (answer if inspect.isfunction(answer) or _numba.described(answer) is not None else None)
    )
    if fn is not None:
        src = _source_text(fn)
        if src is None:  # source unavailable (exec'd code): judge by running it
            return False
        return PLACEHOLDER in src and _only_placeholder(src)
    return False


def _source_text(fn) -> str | None:
    """The dedented source of a function, or None. A function living in the student's process
    (grading/remote.py) brings its source along, read there."""
    told = _numba.described(fn)
    if told is not None:
        src = told.get("source")
        return textwrap.dedent(src) if isinstance(src, str) else None
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def _only_placeholder(src: str) -> bool:
    """The first function (or lambda) in ``src`` does nothing: pass, ..., a docstring, return None."""
    try:
        tree = ast.parse(src)
    except SyntaxError:  # a lambda cut out of a longer expression: the placeholder comment decides
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return all(_trivial(stmt) for stmt in node.body)
        if isinstance(node, ast.Lambda):
            return isinstance(node.body, ast.Constant) and node.body.value in (None, Ellipsis)
    return True


def _trivial(stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return stmt.value.value is Ellipsis or isinstance(stmt.value.value, str)
    if isinstance(stmt, ast.Return):
        return stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value in (None, Ellipsis))
    return False


@dataclass(eq=False)
class Exercise:
    """Fields common to every kind. ``name`` and ``notebook`` are filled by ``register``."""

    prompt: str = ""
    hints: tuple = ()
    points: float = 1.0
    name: str = ""
    notebook: str = ""

    random = True  # False for exercises with fixed answers: no seed to print
    running = "your code"  # how the watchdog names the learner's code that ran too long

    def __post_init__(self):
        self._hint_level = 0

    @property
    def id(self) -> str:
        return f"{self.notebook}.{self.name}" if self.notebook else self.name

    def __repr__(self) -> str:  # never print the reference or the answer
        return f"<{type(self).__name__} {self.id}: {self.prompt}>"

    # -- learner API
    def grade(
        self,
        answer=MISSING,
        seed: int | None = None,
        watchdog: float | None = None,
        executor: Executor = LOCAL,
        **options,
    ) -> Result:
        """Pure: never prints, never raises (learner and checker problems become status "error").

        ``watchdog`` is the time budget in seconds (default $COURSE_WATCHDOG_S or 20; 0: none).
        ``executor`` is where the check's work on the answer runs (exercises/executor.py): here by
        default; the batch grader passes its judge's (grading/executor.py)."""
        wrong = self._wrong_arguments(seed, options)
        if wrong:
            return self._result("error", wrong, None)
        seed = None if not self.random else fresh_seed() if seed is None else int(seed)
        try:
            if not_attempted(answer):
                return self._result(
                    "not_attempted",
                    f"not attempted yet: replace the `# {PLACEHOLDER}` line with "
                    "your code, run that cell, then run this check again.",
                    seed,
                )
            with _watchdog(watchdog, describe_function(self.running)):
                # Graded(*...): a subclass outside helpers may return a plain 4-tuple in Graded's order
                if takes_executor(self._grade):
                    options = {**options, "executor": executor}
                graded = Graded(*self._grade(answer, np.random.default_rng(seed), **options))
        except KeyboardInterrupt as e:  # the learner pressed stop: one line, not a traceback through helpers
            return self._result("error", stopped_message(e), seed)
        except SystemExit:  # exit() in the learner's function would end the check (and print IPython's warning)
            return self._result(
                "error",
                "your code called exit() (or sys.exit()), which stops the check: return the answer instead.",
                seed,
            )
        except CourseError as e:  # LearnerError, KernelError, UnsupportedByTracer, GPURequired
            return self._result("error", str(e), seed)
        except Exception as e:  # the learner's code may raise anything, anywhere: one sentence, never a traceback
            return self._result("error", f"your code raised {type(e).__name__}: {e}; fix it and check again.", seed)
        return self._result(graded.status, graded.message, seed, graded.picture, graded.metrics)

    def _wrong_arguments(self, seed, options) -> str | None:
        """One sentence for a seed that is not a whole number or an option this check does not take,
        rather than a ValueError, or a TypeError blamed on the learner's code."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
            return f"seed must be a whole number such as seed=3 (or left out for a fresh one), not {shown(seed)}."
        params = inspect.signature(self._grade).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return None
        takes = [p for p in list(params)[2:] if p != "executor"]  # after the answer and the random generator
        unknown = [k for k in options if k not in takes]
        if not unknown:
            return None
        close = difflib.get_close_matches(unknown[0], [*takes, "seed", "watchdog"], n=1)
        also = "".join(f", {k}=" for k in takes)
        return (
            f"{self.id}.check() has no option {unknown[0]}="
            + (f" (did you mean {close[0]}=?)" if close else "")
            + f": it takes your answer, then seed= and watchdog={also}."
        )

    def check(self, answer=MISSING, seed: int | None = None, watchdog: float | None = None, **options) -> None:
        """Grade, show one green/red line (and a picture where it helps), record progress."""
        result = self.grade(answer, seed=seed, watchdog=watchdog, **options)
        self.last_result = result
        show(result)
        _progress.record_result(self.id, result)

    def nudge(self) -> str:
        """The end of a failure message: where the learner's next hint is, named as they call it."""
        return f"{self.id}.hint() gives a nudge." if self.hints else f"{self.id}.solution() shows an answer."

    def hint(self) -> None:
        if not self.hints:
            show_text(f"{self.id}: no hints", f"This exercise has no hints; {self.id}.solution() shows the answer.")
            return
        level = min(self._hint_level, len(self.hints) - 1)
        self._hint_level = level + 1
        more = "" if level + 1 < len(self.hints) else f"  (last hint; {self.id}.solution() shows the answer)"
        show_text(f"Hint {level + 1}/{len(self.hints)} for {self.id}{more}", textwrap.dedent(self.hints[level]).strip())
        _progress.record_hint(self.id, level + 1)

    def solution(self) -> None:
        show_text(f"Solution for {self.id}", self._solution_text(), code=True)
        _progress.record_solution(self.id)

    # -- for subclasses
    def _result(self, status, message, seed, picture=None, metrics=None) -> Result:
        points = float(self.points) if status == "passed" else 0.0
        # The learner has no `ex`: whichever layer wrote the sentence, it names the object they call.
        message = _GENERIC_EX.sub(lambda m: f"{self.id}.{m.group(1)}()", str(message))
        return Result(self.id, status, message, seed, picture, dict(metrics or {}), points, float(self.points))

    def _grade(self, answer, rng, **options) -> Graded:
        raise NotImplementedError

    def _solution_text(self) -> str:
        raise NotImplementedError

    def reference_answer(self):
        """What a correct learner would pass to ``check`` (used by the tests)."""
        raise NotImplementedError


_watchdog = watchdog  # grade's keyword of the same name shadows it


_GENERIC_EX = re.compile(r"(?<![\w.])ex\.(hint|solution|check)\(\)")


def stopped_message(exc) -> str:
    """The one line for a check the learner stopped, naming their line that was running if it can."""
    where, tb, seen_helpers = None, exc.__traceback__, False
    while tb is not None:  # the innermost learner frame below the course's own frames
        name = tb.tb_frame.f_code.co_filename
        seen_helpers = seen_helpers or name.startswith(HELPERS)
        if seen_helpers and not name.startswith((HELPERS, *LIBRARIES)):
            where = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    at = f" while your code was running {line_text(*where)}" if where else ""
    return f"check stopped: you interrupted it{at}; fix or wait, then run the check again."


def source(fn) -> str:
    fn = _numba.python_function(fn) or fn
    src = _source_text(fn)
    return src if src is not None else f"(source not available for {getattr(fn, '__name__', fn)!r})"


def fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        text = f"{float(v):.6g}"
        return text if any(c in text for c in ".en") else text + ".0"  # 4.0 must not read as the int 4
    # shown(): a learner's object whose __repr__ raises, or an int of 10**5000, still gets a short text
    return shown(v.item() if isinstance(v, np.generic) else v, limit=FMT_LIMIT)


FMT_LIMIT = 300  # characters of a value in a message: a giant answer must not fill the screen


def fmt_pair(got, want) -> tuple[str, str]:
    """``fmt`` of two numbers, with as many digits as it takes to tell them apart: a message must never
    say "returned 0.004 but should return 0.004"."""
    a, b = fmt(got), fmt(want)
    if a != b or not all(isinstance(v, (float, np.floating, int, np.integer)) for v in (got, want)):
        return a, b
    for digits in (9, 12, 17):
        a, b = f"{float(got):.{digits}g}", f"{float(want):.{digits}g}"
        if a != b:
            return a, b
    return a, b


def rounding_note(got, want) -> str | None:
    """The cause when ``got`` differs from ``want`` only by float32 rounding: ``got`` is a float32 (by its
    type, or a float that a float32 holds exactly, as one converted back does, and not a whole number)
    within a float32 sum's error of ``want`` (relative 1e-3). None for any other difference."""
    numbers = (float, np.floating)
    if not isinstance(got, numbers) or not isinstance(want, numbers):
        return None
    g, w = float(got), float(want)
    if not (np.isfinite(g) and np.isfinite(w)) or g == w or abs(g - w) > 1e-3 * abs(w):
        return None
    low = isinstance(got, np.floating) and np.dtype(type(got)).itemsize < 8
    if not low and (g == round(g) or float(np.float32(g)) != g):
        return None
    kind = np.dtype(type(got)).name if low else "float32"
    precision = np.dtype(type(want)).name if isinstance(want, np.floating) else "float64"
    return (
        f"the difference is {kind} rounding: your result was computed in {kind}, which keeps only about "
        f"{np.finfo(kind).precision + 1} significant digits, so compute (and accumulate) in {precision}, the "
        f"precision of the answer (e.g. total = 0.0, not np.{kind}(0.0))."
    )


def register(module_name: str, namespace: dict) -> dict:
    """Name every Exercise in a problems module after its variable; returns {name: exercise}."""
    notebook = module_name.rsplit(".", 1)[-1]
    found = {}
    for var, obj in namespace.items():
        if isinstance(obj, Exercise) and not var.startswith("_"):
            obj.name, obj.notebook = var, notebook
            found[var] = obj
    return found
