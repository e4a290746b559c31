"""The grader on several GPUs, proven on the CPU with two fake GPUs: ``-j 2`` places one worker per
GPU, each child's CUDA_VISIBLE_DEVICES is exactly its one GPU (as the grader set it and as the
child saw it), a submission that hangs its GPU does not stop the other GPU's work, a crash
frees its GPU for the next submission, and the summary and grades.json say which GPU graded what.

The grader runs in a fresh process (tests/submission_sets/isolated.py, mode "gpus"): device detection is
patched to ["0", "1"] and every child, after its environment is logged, runs on the simulator.
"""

import json
import socket

import pytest

import helpers  # noqa: E402
from helpers.grading import cli, devices
from submission_sets import fixtures as fx  # noqa: E402
from submission_sets.graded import SALT
from submission_sets.graded import records as read_records
from submission_sets.isolated import run  # noqa: E402

HANG = "import time\nwhile True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass"
CELL_TIMEOUT = 25  # the hang holds its GPU for about this long; the other GPU grades the rest meanwhile


def _text(cells):
    return json.dumps(fx.notebook(cells))


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("multigpu")
    course = fx.make_course(tmp / "course")
    subs = {
        "a_hangs": _text(fx.perfect_cells(extra=[HANG], extra_at=6)),
        "b_crashes": _text(fx.perfect_cells(extra=["import os\nos._exit(3)"], extra_at=6)),
        "c_perfect": _text(fx.perfect_cells()),
        "d_wrong": fx.submissions()["wrong_index"][0],
        "e_perfect": _text(fx.perfect_cells()),
    }
    for name, text in subs.items():
        (tmp / "subs" / name).mkdir(parents=True)
        (tmp / "subs" / name / f"{fx.STEM}.ipynb").write_text(text)
    log = tmp / "child-env.jsonl"
    argv = [tmp / "subs", "--out", tmp / "out", "--course", course, "-j", "2", "--mode", "gpu", "--salt", SALT]
    argv += ["--cell-timeout", CELL_TIMEOUT, "--grade-timeout", 60, "--timeout", 300]
    r = run("gpus", argv, env={"FAKE_GPU_LOG": str(log)})
    envs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {"run": r, "records": read_records(tmp / "out"), "envs": envs, "out": tmp / "out"}


def _statuses(rec):
    return {e["exercise"]: e["status"] for e in rec["exercises"]}


def test_every_submission_is_graded_as_on_one_gpu(two_gpus):
    r, recs = two_gpus["run"], two_gpus["records"]
    assert r.returncode == 0, r.stderr[-3000:]
    assert set(recs) == {"a_hangs", "b_crashes", "c_perfect", "d_wrong", "e_perfect"}
    for name in ("a_hangs", "b_crashes", "c_perfect", "e_perfect"):
        assert _statuses(recs[name]) == fx.ALL_PASSED, (name, recs[name]["exercises"], recs[name]["runs"])
    assert _statuses(recs["d_wrong"]) == fx.submissions()["wrong_index"][1]
    assert [s["cell"] for s in recs["a_hangs"]["skipped_cells"]] == [8]  # the hang, stopped by the watchdog
    assert [s["cell"] for s in recs["b_crashes"]["skipped_cells"]] == [8]  # the crash


def test_both_gpus_are_used(two_gpus):
    used = {rec["gpu"] for rec in two_gpus["records"].values()}
    assert used == {"0", "1"}, used
    assert json.loads((two_gpus["out"] / "run.json").read_text())["devices"] == ["0", "1"]


def test_each_child_sees_exactly_one_gpu(two_gpus):
    envs = two_gpus["envs"]
    assert len(envs) >= 7  # five submissions, two of them run a second time
    assert {e["visible"] for e in envs} == {"0", "1"}, envs  # one id each, never "0,1" or unset
    for rec in two_gpus["records"].values():
        assert rec["device"]["visible"] == rec["gpu"], rec["device"]  # what the child itself saw
        assert devices.problems(rec) == []


def test_a_hang_on_one_gpu_does_not_stop_the_other(two_gpus):
    recs = two_gpus["records"]
    hang = recs["a_hangs"]
    others = [rec for name, rec in recs.items() if name != "a_hangs"]
    # While the hang held its GPU, everything else started went to the other one, which went on working:
    # at least one other submission finished in that time (all of them do on an idle machine; on a
    # loaded one the hang may be over, and its GPU free again, before the last ones start).
    during = [rec for rec in others if rec["started_at"] < hang["finished_at"]]
    assert during and {rec["gpu"] for rec in during} == {"1" if hang["gpu"] == "0" else "0"}, [
        (r["gpu"], r["started_at"]) for r in others
    ]
    assert any(hang["started_at"] < rec["finished_at"] < hang["finished_at"] for rec in others)


def test_the_summary_says_which_gpu_graded_what(two_gpus):
    out = two_gpus["run"].stdout
    assert "Graded on 2 GPU(s):" in out, out
    lines = {line.split(":")[0].strip(): line for line in out.splitlines() if line.strip().startswith("GPU ")}
    assert set(lines) == {"GPU 0", "GPU 1"}, out
    for rec in two_gpus["records"].values():
        assert f"{rec['student']}/{fx.STEM}" in lines[f"GPU {rec['gpu']}"], out
    doc = json.loads((two_gpus["out"] / "grades.json").read_text())
    assert {s["student"]: s["gpu"] for s in doc["submissions"]} == {
        name: rec["gpu"] for name, rec in two_gpus["records"].items()
    }
    assert "on GPU " in two_gpus["run"].stderr  # the progress lines name the GPU too


# -- the pieces, without a grading run


def test_visible_devices_follow_the_instructors_list():
    assert devices.visible_devices(None, 2) == ["0", "1"]
    assert devices.visible_devices("", 0) == ["0"]
    assert devices.visible_devices("2, 3", 8) == ["2", "3"]
    assert devices.visible_devices("GPU-aaaa,GPU-bbbb", 2) == ["GPU-aaaa", "GPU-bbbb"]


def test_decide_mode_gives_one_worker_token_per_gpu(monkeypatch):
    from helpers import env

    fake = env.Mode(True, "found an NVIDIA GPU", env.GPUInfo(name="Fake", count=2))
    monkeypatch.setattr(env, "MODE", fake)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert cli.decide_mode("auto") == ("gpu", ["0", "1"])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert cli.decide_mode("gpu") == ("gpu", ["1"])
    assert cli.decide_mode("cpu") == ("cpu", [])


def test_a_child_that_saw_the_wrong_devices_is_named():
    rec = {"student": "s", "notebook": "02_x", "outcome": "completed", "gpu": "1", "seconds": 2.0}
    seen = {"visible": "0,1", "gpu": True, "count": 2, "name": "Fake GPU", "uuid": "GPU-12345678-aaaa"}
    problems = devices.problems({**rec, "device": seen})
    assert problems == ["the child's CUDA_VISIBLE_DEVICES was '0,1', not '1'", "the child saw 2 GPUs instead of one"]
    lines = devices.summary_lines([{**rec, "device": seen}])
    assert lines[1:3] == [
        "Graded on 1 GPU(s):",
        "  GPU 1 (Fake GPU, GPU-12345678): 1 submission(s), 2.0 s: s/02_x (completed)",
    ]
    assert sum("WARNING" in line for line in lines) == 2
    assert devices.summary_lines([{**rec, "gpu": None}]) == []  # CPU mode: no GPU section


def test_the_summary_names_a_limited_number_per_gpu():
    recs = [{"student": f"s{i:03d}", "notebook": "02_x", "outcome": "completed", "gpu": "0"} for i in range(40)]
    line = devices.summary_lines(recs)[2]
    assert "s029/02_x" in line and "s030/02_x" not in line and "and 10 more" in line


def test_the_childs_report_in_cpu_mode():
    msg = devices.describe()  # make test-gpu may collect this file too: then the report is a GPU's
    assert msg["type"] == "device" and msg["gpu"] is helpers.on_gpu() and "problem" not in msg
    assert msg["host"] == socket.gethostname()  # a Slurm array's GPUs are told apart by node


def test_each_nodes_gpu_0_is_its_own_gpu():
    """Under Slurm every task is given its node's GPU "0": the summary counts physical GPUs (by
    UUID, else host and index) and names the node, never one "GPU 0" for the whole class."""

    def rec(student, host, uuid=None):
        dev = {
            "visible": "0",
            "gpu": True,
            "count": 1,
            "name": "H200",
            "host": host,
            **({"uuid": uuid} if uuid else {}),
        }
        return {
            "student": student,
            "notebook": "02_x",
            "outcome": "completed",
            "gpu": "0",
            "seconds": 1.0,
            "device": dev,
        }

    recs = [
        rec("a", "node2", "GPU-bbbbbbbb-1"),
        rec("b", "node1", "GPU-aaaaaaaa-1"),
        rec("c", "node2", "GPU-bbbbbbbb-1"),
    ]
    lines = devices.summary_lines(recs)
    assert lines[1:4] == [
        "Graded on 2 GPU(s):",
        "  GPU 0 on node1 (H200, GPU-aaaaaaaa): 1 submission(s), 1.0 s: b/02_x (completed)",
        "  GPU 0 on node2 (H200, GPU-bbbbbbbb): 2 submission(s), 2.0 s: a/02_x (completed), c/02_x (completed)",
    ]
    without_uuid = [rec("a", "node1"), rec("b", "node2"), rec("c", "node1")]
    assert [(g.key, len(g.records)) for g in devices.by_gpu(without_uuid)] == [("node1/0", 2), ("node2/0", 1)]
    one_host = [rec("a", "node1", "GPU-aaaaaaaa-1")]
    assert devices.summary_lines(one_host)[2].startswith("  GPU 0 (H200")  # one machine: no host named
