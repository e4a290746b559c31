"""The grader's side of a judged submission: the exercises, references, seeds and verdicts stay
here; the student's process only runs code on inputs it is given (``serve.py``).

Protocol (one JSON line per message, values inside encoded by ``helpers._wire``):

- child -> judge: ``ready``, ``device``, ``cell``, ``between``, ``cell_error``, ``done``, ``idle``
  after each cell with the checks it recorded, ``end`` after the last cell, and ``reply`` to each request;
- judge -> child (on its stdin): ``continue`` after an ``idle``; requests ``call``, ``trace``,
  ``gpu``, ``compile``, ``show``, ``resolve``; ``quit`` after ``end``.

Nothing the child says is believed except the outputs it returns: a "result" line from the child
is dropped, and a pass needs outputs that match what the judge computed on its side.
"""

from __future__ import annotations

import os
import select
import threading
import time

from .. import _wire
from ..exercises.base import MISSING
from ..exercises.executor import RemoteFailure, raised
from . import remote
from .cells import course_code, jsonable, short, unread_answer
from .executor import JudgedExecutor

MAX_LINE = 64 << 20  # one message: arrays of a few million elements travel in one
MAX_TOTAL = 512 << 20  # everything one child may send
MAX_NOISE = 64 << 20  # lines that are not messages: past this the channel counts as flooded
GRACE = 3.0
_EVENTS = {"ready", "device", "cell", "between", "cell_error", "done", "tamper"}
NO_INPUTS = {"resolve", "show"}  # requests that carry nothing of a check's inputs
_PICTURES = threading.Lock()  # matplotlib's pyplot is not thread-safe: one picture saved at a time


class ChildGone(BaseException):  # noqa: N818 - not an error of the student's code: the run ends here
    """The student's process died, flooded the channel or stopped answering in time.
    A BaseException so that no check's ``except Exception`` turns it into a grade."""

    def __init__(self, why: str, stuck: str | None = None, killed: bool = False, flooded: str | None = None):
        super().__init__(why)
        self.stuck, self.killed, self.flooded = stuck, killed, flooded


def judgeable(exercises) -> bool:
    """True when every exercise of the notebook is of a kind the judge can grade from outside."""
    from ..exercises import DevicePipelineExercise, FunctionExercise, KernelExercise, ValueExercise
    from ..exercises.libraries import ArrayExercise, CudaCExercise

    kinds = (ValueExercise, FunctionExercise, KernelExercise, DevicePipelineExercise, ArrayExercise, CudaCExercise)
    return bool(exercises) and all(isinstance(ex, kinds) or getattr(ex, "remote_ok", False) for ex in exercises)


def want(ex) -> str:
    from ..exercises import KernelExercise, ValueExercise
    from ..exercises.libraries import CudaCExercise

    if isinstance(ex, (ValueExercise, CudaCExercise)):  # CUDA C arrives as its source text
        return "value"
    return "kernel" if isinstance(ex, KernelExercise) else "function"


def public_spec(modules) -> dict:
    """What the student's process may know of each problems module: exercise names and prompts,
    and the constants a notebook uses (plain numbers and strings in UPPER_CASE)."""
    import importlib

    from ..exercises import Exercise

    out = {}
    for module in modules:
        mod = importlib.import_module(f"helpers.problems.{module}")
        exercises, constants = {}, {}
        for name, value in vars(mod).items():
            if isinstance(value, Exercise) and not name.startswith("_"):
                exercises[name] = {"prompt": value.prompt, "want": want(value)}
            elif name.isupper() and not name.startswith("_") and name not in ("EXERCISES", "MODULES"):
                if _plain_constant(value):
                    constants[name] = value
        out[module] = {"exercises": exercises, "constants": constants}
    return out


def _plain_constant(v, depth=0) -> bool:
    if type(v) in (int, float, str, bool):
        return True
    return type(v) is tuple and depth < 3 and all(_plain_constant(x, depth + 1) for x in v)


class Channel:
    """The pipe pair to one child, with the limits: a deadline per wait, a cap per line and in all."""

    def __init__(self, proc, settings, started: float, lines: list):
        self.proc, self.settings, self.started, self.lines = proc, settings, started, lines
        self.fd = proc.judge_fd
        self.buf = b""
        self.total = 0
        self.next_id = 0
        self.eof = False
        self.forged = 0  # lines that are not the grader's messages: written by the student's code
        self.noise = 0  # and their bytes
        self.sent_inputs = False  # a request carried a check's inputs to the student's process

    def send(self, obj) -> None:
        try:
            self.proc.stdin.write(_wire.dumps(obj))
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise ChildGone("the notebook's process stopped listening") from None

    def message(self, limit: float, phase: str):
        """The next message, or None at the end of the child's output. Raises ChildGone past
        ``limit`` seconds (or the notebook's wall clock) and on a flood."""
        deadline = time.monotonic() + limit
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1 :]
                try:
                    msg = _wire.loads(line)
                except _wire.WireError:
                    self.channel_noise(len(line))  # not a message of ours: the student wrote to the channel
                    continue
                if isinstance(msg, dict):
                    return msg
                self.channel_noise(len(line))
                continue
            if len(self.buf) > MAX_LINE:
                raise self._flood(f"a line of more than {MAX_LINE >> 20} MB")
            if self.eof:
                return None
            now = time.monotonic()
            if now - self.started > self.settings.timeout:
                raise ChildGone("the notebook ran out of time", killed=True)
            if now > deadline:
                raise ChildGone(
                    "stuck",
                    stuck=f"the code kept running after its time was up ({phase}) and was stopped",
                )
            ready, _, _ = select.select([self.fd], [], [], min(0.25, max(deadline - now, 0.01)))
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
                continue
            self.total += len(chunk)
            if self.total > MAX_TOTAL:
                raise self._flood(f"more than {MAX_TOTAL >> 20} MB in all")
            self.buf += chunk

    def channel_noise(self, size: int = 0) -> None:
        """A line that is not one of the grader's messages (written by the student's code)."""
        self.forged += 1
        self.noise += size
        if self.noise > MAX_NOISE:
            raise self._flood(f"more than {MAX_NOISE >> 20} MB of lines the grader did not send")

    @staticmethod
    def _flood(what: str) -> ChildGone:
        why = f"the notebook's process flooded the grader's channel ({what}); the rest was not read"
        return ChildGone(why, flooded=why)

    def request(self, op: str, **fields):
        """One operation in the child; its value, or the student's exception rebuilt here."""
        self.next_id += 1
        rid = self.next_id
        if op not in NO_INPUTS:
            self.sent_inputs = True
        self.send({"op": op, "id": rid, "body": _wire.encode(fields)})
        limit = self.settings.grade_timeout + GRACE
        while True:
            msg = self.message(limit, "while being graded")
            if msg is None:
                raise ChildGone("the notebook's process ended while being graded")
            if msg.get("type") != "reply" or msg.get("id") != rid:
                self.channel_noise()
                continue
            if isinstance(msg.get("error"), dict):
                raise raised(msg["error"])
            try:
                return _wire.decode(msg.get("ok"))
            except (_wire.WireError, RecursionError, TypeError, ValueError):
                raise RemoteFailure("your code returned something the grader cannot read as plain data") from None


class Judge:
    """Grades one submission's recorded answers with the exercises held in this process."""

    def __init__(self, specs: list, exercises: dict, channel: Channel, pictures: str | None, shown=None):
        self.specs = {s["id"]: s for s in specs}
        self.exercises = exercises  # id -> Exercise (imported here, never in the child)
        self.channel, self.pictures = channel, pictures
        self.graded = set()
        # id -> how many of its gradings sent inputs to the student's process (kept across a
        # submission's runs: a file written in one run is there in the next)
        self.shown = shown if shown is not None else {}

    def converse(self, lines: list, cell_timeout: float) -> None:
        """Follow the child from its start to its end, grading as checks arrive."""
        limits = {"cell": cell_timeout + GRACE, "between": max(15.0, cell_timeout) + GRACE}
        phase = "ready"
        while True:
            msg = self.channel.message(limits.get(phase, max(60.0, cell_timeout) + GRACE), f"in {phase}")
            if msg is None:
                return
            kind = msg.get("type")
            if kind in _EVENTS:
                lines.append(_event(msg))
                phase = kind if kind in limits else "ready"
            elif kind == "idle":
                self.grade_pending(msg.get("pending"), lines)
                self.channel.send({"op": "continue"})
                phase = "ready"
            elif kind == "end":
                self.grade_pending(msg.get("pending"), lines)
                self.grade_rest(lines)
                self.channel.send({"op": "quit"})
                phase = "ready"
            else:  # a "result" line or anything else: never believed, counted for the instructor
                self.channel.channel_noise()

    def grade_pending(self, pending, lines) -> None:
        try:
            items = _wire.decode(pending) if pending is not None else []
        except _wire.WireError:
            items = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            ex_id = item.get("exercise")
            if ex_id not in self.exercises:
                continue
            # Graded again when checked again (a wrong answer fixed later): the last check counts.
            cell = item.get("cell")
            cell = cell if isinstance(cell, int) and not isinstance(cell, bool) else None
            where = f"your check call in cell {cell + 1}" if cell is not None else "your check call"
            self.grade_one(ex_id, item.get("answer"), item.get("options"), where, lines, cell)

    def grade_rest(self, lines) -> None:
        """Exercises never checked: their answers read from the final namespace, by expression."""
        for ex_id, spec in self.specs.items():
            if ex_id in self.graded or ex_id not in self.exercises:
                continue
            lines.append({"type": "grading", "exercise": ex_id})
            if spec.get("answer") is None:
                self.grade_one(ex_id, {"kind": "missing"}, {}, "the end of the notebook", lines)
                continue
            got = self.channel.request(
                "resolve", exercise=ex_id, expr=spec["answer"], options=dict(spec.get("options") or {})
            )
            if not isinstance(got, dict):
                got = {"error": "the answer could not be read"}
            if got.get("error"):
                points = getattr(self.exercises[ex_id], "points", 1.0)
                why = str(got["error"])[:300]
                lines.append(unread_answer(ex_id, spec["answer"], points, bool(got.get("missing")), why))
                self.graded.add(ex_id)
                continue
            self.grade_one(
                ex_id, got.get("answer"), got.get("options"), f"`{spec['answer']}` at the end of the notebook", lines
            )

    def grade_one(self, ex_id, answer_desc, options_desc, source, lines, cell=None) -> None:
        """``cell``: the index of the cell whose check is graded (None: the end of the notebook)."""
        ex, spec = self.exercises[ex_id], self.specs[ex_id]
        if not lines or lines[-1] != {"type": "grading", "exercise": ex_id}:
            lines.append({"type": "grading", "exercise": ex_id})
        row = {
            "type": "result",
            "exercise": ex_id,
            "graded_from": source,
            "cell": cell,
            "max_points": float(ex.points),
        }
        self.graded.add(ex_id)
        try:
            answer = remote.answer_from(self.channel, answer_desc)
            options = {
                str(k): remote.answer_from(self.channel, v)
                for k, v in (options_desc or {}).items()
                if str(k) in (spec.get("options") or {})
            }
        except RemoteFailure as e:
            lines.append({**row, "status": "error", "message": str(e)})
            return
        options = {k: v for k, v in options.items() if v is not MISSING}
        foreign = _foreign(answer)
        if foreign:
            lines.append(
                {
                    **row,
                    "status": "failed",
                    "review": foreign,
                    "message": f"your answer is {foreign}, not code written in your notebook.",
                }
            )
            return
        # A check after the student's process saw this exercise's inputs is graded on fresh ones: its
        # answer was described after them and could hold their outputs (a table, a memo).
        shown = self.shown.get(ex_id, 0)
        seed = spec["seed"] if not shown else recheck_seed(spec, shown)
        self.channel.sent_inputs = False
        try:
            # ChildGone passes through: the run ends there, no grade
            result = ex.grade(answer, seed=seed, watchdog=0, executor=JudgedExecutor(self.channel), **options)
        finally:
            if self.channel.sent_inputs:
                self.shown[ex_id] = shown + 1
        out = {
            **row,
            "status": str(result.status),
            "message": short(result.message),
            "seed": result.seed,
            "points": float(result.points),
            "max_points": float(result.max_points),
            "metrics": jsonable(result.metrics),
        }
        if result.picture is not None and self.pictures:
            path = os.path.join(self.pictures, f"{ex_id}.png")
            try:
                with _PICTURES:
                    result.picture.savefig(path, dpi=80, bbox_inches="tight")
                    if not isinstance(result.picture, remote.Picture):
                        import matplotlib.pyplot as plt

                        plt.close(result.picture)
                out["picture"] = path
            except Exception:  # any failure: a picture is a bonus; the sentence says it all
                pass
        lines.append(out)


def recheck_seed(spec: dict, k: int) -> int:
    """The seed of the k-th check graded after the student's process saw the exercise's inputs: from
    the run's secret (``spec["recheck"]``, cli.py), so that knowing every earlier seed, which the inputs
    give away, does not give this one."""
    import hashlib

    key = str(spec.get("recheck") or f"{spec['seed']}\0{spec['id']}")
    return int.from_bytes(hashlib.sha256(f"{key}\0{k}".encode()).digest()[:8], "little") % 1_000_000


def _event(msg: dict) -> dict:
    """A phase message from the child, cut down to the fields the records read."""
    out = {"type": msg["type"]}
    for key in ("cell", "error", "timeout", "name", "uuid", "index", "memory_mb", "visible"):
        if key in msg and isinstance(msg[key], (int, str, bool, float)) or msg.get(key) is None and key in msg:
            out[key] = msg[key] if not isinstance(msg.get(key), str) else msg[key][:2000]
    if msg["type"] == "tamper":  # reported by the student's process: it can only cost that student
        what = msg.get("what")
        out["what"] = [str(w)[:300] for w in what[:5]] if isinstance(what, list) else []
    if msg["type"] == "device":
        out.update({k: v for k, v in msg.items() if isinstance(v, (int, str, bool, float)) and k != "type"})
    return out


def _foreign(answer) -> str | None:
    """The course's own code handed in as an answer (possible only where the files are readable)."""
    if not isinstance(answer, remote.RemoteFunction):
        return None
    return course_code(answer.course_file, answer.__qualname__)
