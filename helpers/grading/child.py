"""Runs INSIDE the fresh process that runs one submission (started by ``execute.py``).

Order matters:
1. read the job from stdin (cells, limits, what the student's process may know of each exercise),
   then point stdin at /dev/null; the judge's requests follow the job on the same pipe;
2. import the stand-in exercise modules before any student code exists: the exercises, their
   references and seeds stay with the judge (``judged_runner.py``);
3. run the code cells in order in one namespace, each under a timer (``cell_runner.py``);
4. after each cell, hand what was checked to the judge and stream every message as soon as it is
   known, so a later crash cannot erase it; what was never checked is described from the final
   namespace.
"""

from __future__ import annotations

import json
import os
import sys

from .cells import limits
from .devices import describe as describe_device
from .judged_runner import JudgedRunner


def _channel_emitter(fd):
    from .. import _wire

    def emit(obj):
        data = _wire.dumps(obj)
        while data:
            try:
                n = os.write(fd, data)
            except InterruptedError:
                continue
            data = data[n:]

    return emit


def main():
    requests = os.fdopen(os.dup(0), "rb")
    job = json.loads(requests.readline().decode())
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    emit = _channel_emitter(int(job["channel_fd"]))
    limits(job)
    runner = JudgedRunner(job, emit, requests)
    import faulthandler

    faulthandler.enable()  # a segfault prints where it happened into the captured output
    runner.bootstrap()
    emit(describe_device())  # which GPU this process sees (the summary says which GPU graded what)
    emit({"type": "ready"})
    runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
    runner.finish()
    emit({"type": "done"})
    _flush_and_exit()


def _flush_and_exit():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # any failure: the student may have replaced or closed the stream
            pass
    os._exit(0)  # no atexit handlers or finalizers from student code
