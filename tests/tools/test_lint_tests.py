"""tools/lint_tests.py (run by `make lint`): it refuses each way a test can measure time, and the suite
as it stands has none."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import lint_tests  # noqa: E402

TIMED = {
    # Split so that a line-based grep for timed tests does not mistake this sample for one.
    "perf_counter": "import time\ndef test_x():\n    t0 = time.perf_counter()\n    assert time.perf_counter()"
    + " - t0 < 2",
    "monotonic": "import time\ndef test_x():\n    started = time.monotonic()\n    assert True\n",
    "from import": "from time import monotonic\ndef test_x():\n    t = monotonic()\n",
    "datetime.now": "import datetime\ndef test_x():\n    a = datetime.datetime.now()\n",
    "record fields": "def test_x(rec):\n    assert rec['finished_at'] - rec['started_at'] > 25\n",
    "a duration name": "def test_x(r):\n    assert r.seconds < MAX_S\n",
    "chained": "def test_x(fig, seconds):\n    assert fig.h <= 1500 and seconds < 2.0\n",
}
FINE = {
    "a count": "def test_x(t):\n    assert len(t.accesses) < 100\n",
    "equality on a duration field": "def test_x(row):\n    assert row.seconds == 1e-3\n",
    "a sleep": "import time\ndef test_x():\n    time.sleep(0.01)\n",
    "a message about time": "def test_x(r):\n    assert 'milliseconds' in r.message\n",
}


def _lint(tmp_path, text, name="tests/test_x.py"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return lint_tests.lint(tmp_path)


@pytest.mark.parametrize("name", TIMED)
def test_each_way_of_timing_a_test_is_refused(tmp_path, name):
    assert _lint(tmp_path, TIMED[name]), name


@pytest.mark.parametrize("name", FINE)
def test_what_is_not_timing_passes(tmp_path, name):
    assert _lint(tmp_path, FINE[name]) == [], name


def test_a_harness_that_waits_with_a_deadline_may_read_the_clock(tmp_path):
    waits = "import time\ndef wait():\n    deadline = time.monotonic() + 5\n"
    assert _lint(tmp_path, waits, "tests/fuzz/kernel.py") == []
    assert _lint(tmp_path, waits, "tests/fuzz/other.py")


def test_the_suite_has_no_timed_test():
    assert lint_tests.lint(ROOT) == []
