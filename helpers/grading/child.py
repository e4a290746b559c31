"""Runs INSIDE the fresh process that grades one submission (started by ``execute.py``).

Order matters:
1. read the job from stdin (cells, exercises, seeds, limits, the key that signs results), then
   point stdin at /dev/null;
2. import and SNAPSHOT the trusted objects before any student code exists: for an unjudged
   notebook the engine, the exercise objects, NumPy and builtins, with the student's
   ``.check``/``.hint``/``.solution`` neutralised (``snapshot_grader.py``); for a judged one the
   stand-in exercise modules only, the exercises stay with the judge (``judged_runner.py``);
3. run the code cells in order in one namespace, each under a timer (``cell_runner.py``);
4. after each cell, grade what was checked with the snapshot (unjudged) or hand it to the judge
   (judged), and stream every message as soon as it is known, so a later crash cannot erase it;
   what was never checked is graded from the final namespace.
"""

from __future__ import annotations

import json
import os
import sys

from .cells import limits, signer
from .devices import describe as describe_device
from .judged_runner import JudgedRunner
from .snapshot_grader import SnapshotGrader


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
    requests = os.fdopen(os.dup(0), "rb")  # judged: the judge's requests follow the job on this pipe
    job = json.loads(requests.readline().decode())
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    if job.get("judge"):
        emit = _channel_emitter(int(job["channel_fd"]))
        limits(job)
        runner = JudgedRunner(job, emit, requests)
        import faulthandler

        faulthandler.enable()
        runner.bootstrap()
        emit(describe_device())
        emit({"type": "ready"})
        runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
        runner.finish()
        emit({"type": "done"})
        _flush_and_exit()
    requests.close()
    emit = signer(job["results"], bytes.fromhex(job.pop("key")))
    limits(job)
    import faulthandler

    faulthandler.enable()  # a segfault prints where it happened into the captured output
    runner = SnapshotGrader(job, emit)
    runner.bootstrap()
    emit(describe_device())  # which GPU this process sees (the summary says which GPU graded what)
    emit({"type": "ready"})
    runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
    runner.grade_rest()
    emit({"type": "done"})
    _flush_and_exit()


def _flush_and_exit():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # any failure: the student may have replaced or closed the stream
            pass
    os._exit(0)  # no atexit handlers or finalizers from student code
