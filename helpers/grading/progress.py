"""What the grader shows while it works: a progress bar on a terminal, one line per submission
in a log.

``--progress auto`` (the default) draws the bar only when its stream (stderr) is a terminal, and
otherwise writes one plain line per finished submission (``[12/300] alice/02_first_kernels on
GPU 1: completed (42 s)``), so a log or CI output has no carriage returns or escape codes in it.
``bar`` and ``log`` choose one whatever the stream is; ``off`` shows nothing (the summary is
still printed).

The bar: submissions done of all, how many failed (crashed, timed out, unreadable, or the
grader's own error; a notebook not handed in is not a failure), time so far and the estimate
of what is left, and with several GPUs one line per GPU: what it finished and what it grades now.
Standard library only: ``\\r`` and two ANSI codes (cursor up, clear line), kept within the
terminal's width so nothing wraps.
"""

from __future__ import annotations

import shutil
import threading
import time

MODES = ("auto", "bar", "log", "off")
WIDTH = 30  # characters of the bar itself
NOT_FAILED = ("completed", "missing")


def clock_text(seconds: float) -> str:
    """'42 s', '3:05', '1:02:07'."""
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s} s"
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Told when each submission starts and finishes; thread-safe (workers call ``start``)."""

    def __init__(
        self,
        total: int,
        stream,
        mode: str = "auto",
        gpus=(),
        clock=time.monotonic,
        columns=None,
        tick: float | None = 1.0,
    ):
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {MODES}, not {mode!r}")
        self.total, self.stream, self.clock = total, stream, clock
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self.mode = ("bar" if tty else "log") if mode == "auto" else mode
        self.gpus = [str(g) for g in gpus] if len(gpus) > 1 else []
        self.done = self.failed = 0
        self.per_gpu = {g: {"done": 0, "failed": 0, "now": ""} for g in self.gpus}
        self.started = clock()
        self.columns = columns
        self._drawn = 0  # lines of the last drawing
        self._lock = threading.Lock()
        # The bar is redrawn every ``tick`` seconds too, so its clock moves while a long submission runs.
        self.tick, self._stop, self._ticker = tick, threading.Event(), None

    # -- events

    def start(self, label: str, gpu=None) -> None:
        with self._lock:
            if gpu is not None and str(gpu) in self.per_gpu:
                self.per_gpu[str(gpu)]["now"] = label
            if self.mode == "bar":
                self._draw()
                self._start_ticker()

    def update(self, label: str, outcome: str, gpu=None) -> None:
        """One submission finished with ``outcome`` (the record's)."""
        with self._lock:
            self.done += 1
            failed = outcome not in NOT_FAILED
            self.failed += failed
            mine = self.per_gpu.get(str(gpu)) if gpu is not None else None
            if mine is not None:
                mine["done"] += 1
                mine["failed"] += failed
                if mine["now"] == label:
                    mine["now"] = ""
            if self.mode == "bar":
                self._draw()
                self._start_ticker()
                if self.done >= self.total:
                    self.stream.write("\n")
                    self._drawn = 0
                    self._stop.set()
            elif self.mode == "log":
                where = f" on GPU {gpu}" if gpu is not None else ""
                elapsed = self.clock() - self.started
                self.stream.write(f"[{self.done}/{self.total}] {label}{where}: {outcome} ({elapsed:.0f} s)\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop redrawing (the run ended or was interrupted); the bar's last line is left as it is."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self._drawn:
                self.stream.write("\n")
                self._drawn = 0
                self.stream.flush()

    def _start_ticker(self) -> None:
        if self.tick and self._ticker is None and not self._stop.is_set():
            self._ticker = threading.Thread(target=self._tick, name="grade-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.tick):
            with self._lock:
                if self._drawn and not self._stop.is_set():
                    self._draw()

    # -- the bar

    def lines(self) -> list[str]:
        """What the bar shows now (without escape codes)."""
        elapsed = self.clock() - self.started
        filled = int(WIDTH * self.done / max(self.total, 1))
        left = elapsed / self.done * (self.total - self.done) if self.done else None
        eta = "ETA –" if left is None else ("done" if self.done >= self.total else f"ETA {clock_text(left)}")
        out = [
            f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} graded, {self.failed} failed, "
            f"{clock_text(elapsed)}, {eta}"
        ]
        for g in self.gpus:
            mine = self.per_gpu[g]
            now = f", grading {mine['now']}" if mine["now"] else ", idle"
            out.append(f"  GPU {g}: {mine['done']} graded, {mine['failed']} failed{now}")
        return out

    def _draw(self) -> None:
        width = self.columns or shutil.get_terminal_size((100, 24)).columns
        text = [line[: max(width - 1, 10)] for line in self.lines()]
        up = f"\x1b[{self._drawn - 1}A" if self._drawn > 1 else ""
        self.stream.write(up + "\r" + "\n".join("\x1b[2K" + line for line in text))
        self._drawn = len(text)
        self.stream.flush()
