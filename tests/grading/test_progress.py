"""What the grader shows while it works (helpers/grading/progress.py): a bar on a terminal with
done, failed, ETA and a line per GPU; plain lines in a log. The clock is a stand-in the test
moves by hand: nothing here reads a real clock."""

import io
import threading

import pytest

from helpers.grading.progress import Progress, clock_text


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_a_bar_with_done_failed_and_eta():
    clock, term = Clock(), Terminal()
    p = Progress(4, term, clock=clock, columns=200, tick=None)
    assert p.mode == "bar"
    clock.now += 30
    p.update("alice/02_x", "completed")
    assert p.lines() == ["[#######.......................] 1/4 graded, 0 failed, 30 s, ETA 1:30"]
    clock.now += 30
    p.update("bob/02_x", "crashed")
    p.update("carl/02_x", "missing")  # a notebook not handed in is not a failure
    assert "3/4 graded, 1 failed, 1:00, ETA 20 s" in p.lines()[0]
    p.update("dana/02_x", "timeout")
    assert "4/4 graded, 2 failed, 1:00, done" in p.lines()[0]
    text = term.getvalue()
    assert text.endswith("\n") and text.count("\r") == 4 and "\x1b[2K" in text
    assert "alice" not in text  # the bar counts; the names are for the log


def test_with_several_gpus_one_line_per_gpu_and_the_cursor_goes_back_over_them():
    clock, term = Clock(), Terminal()
    p = Progress(3, term, gpus=["0", "1"], clock=clock, columns=200, tick=None)
    p.start("alice/02_x", gpu="0")
    p.start("bob/02_x", gpu="1")
    assert p.lines()[1:] == [
        "  GPU 0: 0 graded, 0 failed, grading alice/02_x",
        "  GPU 1: 0 graded, 0 failed, grading bob/02_x",
    ]
    p.update("bob/02_x", "crashed", gpu="1")
    assert p.lines()[1:] == ["  GPU 0: 0 graded, 0 failed, grading alice/02_x", "  GPU 1: 1 graded, 1 failed, idle"]
    assert "\x1b[2A" in term.getvalue()  # redrawn over its three lines, not below them
    one = Progress(3, Terminal(), gpus=["0"], clock=clock)
    assert len(one.lines()) == 1  # one GPU: the bar says it all


def test_lines_never_wrap_a_narrow_terminal():
    term = Terminal()
    p = Progress(1000, term, gpus=["0", "1"], clock=Clock(), columns=40, tick=None)
    p.start("a-very-long-student-name-that-goes-on/02_first_kernels", gpu="0")
    drawn = term.getvalue().replace("\x1b[2K", "").replace("\r", "")
    assert drawn and all(len(line) < 40 for line in drawn.split("\n"))


def test_in_a_log_one_plain_line_per_submission():
    clock, log = Clock(), io.StringIO()
    p = Progress(2, log, clock=clock)
    assert p.mode == "log"
    p.start("alice/02_x", gpu="0")
    clock.now += 12
    p.update("alice/02_x", "completed", gpu="0")
    p.update("bob/02_x", "crashed")
    assert log.getvalue() == "[1/2] alice/02_x on GPU 0: completed (12 s)\n[2/2] bob/02_x: crashed (12 s)\n"


def test_asked_for_a_bar_in_a_log_or_for_nothing():
    log = io.StringIO()
    Progress(1, log, "bar", clock=Clock()).update("a/02_x", "completed")
    assert "[" in log.getvalue() and "\r" in log.getvalue()
    quiet = io.StringIO()
    p = Progress(1, quiet, "off", clock=Clock())
    p.start("a/02_x")
    p.update("a/02_x", "completed")
    assert quiet.getvalue() == "" and p.done == 1
    with pytest.raises(ValueError):
        Progress(1, quiet, "loud")


def test_workers_may_start_while_the_main_thread_finishes():
    p = Progress(200, io.StringIO(), "bar", gpus=["0", "1"], clock=Clock(), columns=100, tick=None)
    threads = [threading.Thread(target=lambda g=g: [p.start(f"s{i}", gpu=g) for i in range(100)]) for g in "01"]
    for t in threads:
        t.start()
    for i in range(200):
        p.update(f"s{i}", "completed", gpu=str(i % 2))
    for t in threads:
        t.join()
    assert p.done == 200 and p.per_gpu["0"]["done"] == p.per_gpu["1"]["done"] == 100


def test_the_bar_is_redrawn_while_a_long_submission_runs_and_stops_when_closed():
    clock, term = Clock(), Terminal()
    p = Progress(3, term, clock=clock, columns=100, tick=0.001)
    p.start("alice/02_x")
    clock.now += 61
    for _ in range(2000):  # until the ticker has drawn the new time (a hang ends at the suite's timeout)
        if "1:01" in term.getvalue():
            break
        threading.Event().wait(0.005)
    assert "0/3 graded, 0 failed, 1:01" in term.getvalue()
    p.close()
    assert not p._ticker.is_alive() and term.getvalue().endswith("\n")
    drawn = term.getvalue()
    p.start("bob/02_x")  # closed: drawn once more for the event, never again by the ticker
    assert p._ticker is not None and not p._ticker.is_alive()
    assert term.getvalue().startswith(drawn)


@pytest.mark.parametrize("s, text", [(0, "0 s"), (59.4, "59 s"), (61, "1:01"), (3725, "1:02:05"), (-3, "0 s")])
def test_clock_text(s, text):
    assert clock_text(s) == text
