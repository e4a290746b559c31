"""What one run of a submission's child process left behind, and what went wrong, in words.

``execute.py`` fills an ``Attempt`` while the child runs (its messages to the judge, exit status,
the head and tail of its output); ``records.py`` turns it into the record of the submission.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

from .cells import GPU_POISONED


@dataclass
class Attempt:
    skip: list
    returncode: int | None = None
    killed: bool = False  # by the notebook timeout
    stuck: str | None = None  # killed by the watchdog: what was stuck
    seconds: float = 0.0
    lines: list = field(default_factory=list)
    forged: int = 0
    head: bytes = b""
    tail: bytes = b""
    output_bytes: int = 0
    flooded: str | None = None  # the results file was over the caps: why

    @property
    def done(self) -> bool:
        return any(m.get("type") == "done" for m in self.lines)

    @property
    def last_phase(self) -> dict:
        """The last thing the child said it was doing: a cell, the time after one, or a grade."""
        phases = [m for m in self.lines if m.get("type") in ("ready", "cell", "between", "grading")]
        return phases[-1] if phases else {}

    def failure(self, timeout: float) -> str | None:
        """None when the child finished; else what happened, in words."""
        if self.done:
            return None
        if self.killed:
            return f"the notebook ran longer than {timeout:g} s and was stopped"
        if self.stuck:
            return self.stuck
        rc = self.returncode
        if rc is not None and rc < 0:
            name = {
                signal.SIGSEGV: "a segmentation fault",
                signal.SIGABRT: "an abort",
                signal.SIGBUS: "a bus error",
                signal.SIGFPE: "a floating-point exception",
                signal.SIGILL: "an illegal instruction",
                signal.SIGKILL: "being killed (out of memory?)",
                signal.SIGXFSZ: "writing a file that was too large",
            }
            return f"the notebook's process crashed ({name.get(-rc, f'signal {-rc}')})"
        if rc == GPU_POISONED:
            return (
                "the code left the GPU unusable (an illegal memory access or a failed launch: "
                "an index past the end of an array?)"
            )
        if not any(m.get("type") == "ready" for m in self.lines):
            return (
                f"the grader's process did not start (exit code {rc})" if rc else "the grader's process did not start"
            )
        return f"the notebook's process ended early (exit code {rc}: os._exit or a fatal error)"
