"""One real ipykernel (the kernel nbval uses) that runs learner cells and collects what a learner sees.

``Kernel.run(code, timeout)`` returns an ``Output``: every stream, display and error message the
cell sent on IOPub, as the notebook would show them (HTML reduced to its text). Used by
``tests/e2e/test_fuzz.py``; ``python tests/fuzz/kernel.py 'code' ...`` runs cells by hand.
"""

from __future__ import annotations

import html
import os
import queue
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TAG = re.compile(r"<[^>]+>")
TRACEBACK = "Traceback (most recent call last)"
BUG_LINE = "this is a bug in the course's helpers"  # helpers/_safety.py's safety net


def plain(text: str) -> str:
    return ANSI.sub("", text)


def html_text(markup: str) -> str:
    return html.unescape(TAG.sub(" ", markup))


@dataclass
class Output:
    streams: list = field(default_factory=list)  # (name, text)
    displays: list = field(default_factory=list)  # text of display_data / execute_result
    errors: list = field(default_factory=list)  # (ename, evalue, traceback text)
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def text(self) -> str:
        parts = [t for _, t in self.streams] + self.displays
        parts += [f"{name}: {value}\n{tb}" for name, value, tb in self.errors]
        return "\n".join(plain(p) for p in parts)

    def helpers_tracebacks(self, helpers_dir: str) -> list[str]:
        """Tracebacks the learner sees that go through helpers: an error message whose frames name
        a file in helpers/, or printed text with a traceback header and a helpers path."""
        found = []
        for name, value, tb in self.errors:
            if "/helpers/" in tb or helpers_dir in tb:
                found.append(f"{name}: {value}\n{tb}")
        for text in [t for _, t in self.streams] + self.displays:
            text = plain(text)
            if TRACEBACK in text and ("/helpers/" in text or helpers_dir in text):
                found.append(text)
        return found


class Kernel:
    """A python3 ipykernel in ``cwd`` with ``env`` added to this process's environment; ``prelude`` is run
    first, and again whenever a hung cell forces a restart."""

    def __init__(self, env: dict, cwd: Path = ROOT / "notebooks", kernel_name: str = "python3", prelude: str = ""):
        from jupyter_client import KernelManager

        self.prelude = prelude

        self.km = KernelManager(kernel_name=kernel_name)
        # A learner's environment: the test run's own switches (conftest.py sets NUMBA_ENABLE_CUDASIM) stay out.
        base = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COURSE_"))}
        self.km.start_kernel(cwd=str(cwd), env={**base, **env}, extra_arguments=[])
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.started = self.run(prelude, timeout=120) if prelude else Output()

    def run(self, code: str, timeout: float = 60) -> Output:
        out, start = Output(), time.monotonic()
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False)
        deadline = start + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                out.timed_out = True
                self._recover()
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.streams.append((content["name"], content["text"]))
            elif kind in ("display_data", "execute_result", "update_display_data"):
                data = content.get("data", {})
                if "text/html" in data:
                    out.displays.append(html_text(data["text/html"]))
                elif "text/plain" in data:
                    out.displays.append(data["text/plain"])
            elif kind == "error":
                out.errors.append((content["ename"], content["evalue"], plain("\n".join(content["traceback"]))))
            elif kind == "status" and content["execution_state"] == "idle":
                break
        self._drain_reply(msg_id)
        out.seconds = time.monotonic() - start
        return out

    def _drain_reply(self, msg_id) -> None:
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=5)
            except queue.Empty:
                return
            if reply["parent_header"].get("msg_id") == msg_id:
                return

    def _recover(self) -> None:
        """A cell ran past its time: interrupt it; if the kernel does not come back, restart it."""
        self.km.interrupt_kernel()
        try:
            self.kc.execute("pass", store_history=False)
            self.kc.get_shell_msg(timeout=10)
            self.kc.get_shell_msg(timeout=10)
        except queue.Empty:
            self.km.restart_kernel(now=True)
            self.kc.wait_for_ready(timeout=120)
            if self.prelude:
                self.run(self.prelude, timeout=120)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


if __name__ == "__main__":
    import sys
    import tempfile

    k = Kernel(
        {
            "COURSE_MODE": "cpu",
            "PYTHONPATH": str(ROOT),
            "COURSE_PROGRESS_FILE": os.path.join(tempfile.mkdtemp(), "progress.json"),
        }
    )
    try:
        for cell in sys.argv[1:]:
            o = k.run(cell, timeout=120)
            print(f"--- {o.seconds:.1f}s timed_out={o.timed_out}\n{o.text}")
    finally:
        k.close()
