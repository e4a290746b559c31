"""helpers/grading/slurm.py without a cluster: shards, the scripts, the merge, --resume, and what is
handed to sbatch (a stand-in sbatch on PATH records it). The class here is damaged and missing
notebooks only, which grade without starting a child, so every step runs in-process in moments;
make test-slurm grades a real class on a real one-node cluster (tools/slurm_check.py).
"""

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from helpers.grading import slurm
from submission_sets import fixtures as fx

SALT = "secret-salt-never-on-a-command-line"
TIMING = {"seconds", "started", "started_at", "finished_at"}


@pytest.fixture
def cls(tmp_path):
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    for name in ("ann", "ben", "cat", "dan", "eve"):
        (subs / name).mkdir(parents=True)
        (subs / name / f"{fx.STEM}.ipynb").write_text(f"{name} handed in a damaged file")
    (subs / "fay").mkdir()  # handed in nothing: a missing submission
    return tmp_path, course, subs


def grade(cls, out, *more):
    tmp, course, subs = cls
    argv = [str(subs), "--out", str(tmp / out), "--course", str(course), "--progress", "off"]
    return slurm.main([*argv, *more, *([] if "--mode" in more else ["--mode", "cpu"])])


def plan(cls, out="out") -> slurm.Plan:
    return slurm.Plan.load(cls[0] / out / "slurm")


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in TIMING}
    return [strip(v) for v in x] if isinstance(x, list) else x


def test_split_deals_sorted_keys_round_robin_and_never_makes_an_empty_shard():
    assert slurm.split(["d", "a", "c", "b", "e"], 2) == (("a", "c", "e"), ("b", "d"))
    assert slurm.split(["b", "a"], 5) == (("a",), ("b",))
    assert slurm.split(["a"], 0) == (("a",),)


def test_scripts_ask_for_one_gpu_per_task_in_gpu_mode_and_none_in_cpu_mode(cls):
    common = ["--salt", SALT, "--slurm", "--slurm-no-submit", "--cell-timeout", "30"]
    opts = ["--slurm-opt=--partition=gpu", "--slurm-opt=--account=cs101", "--slurm-setup", "module load cuda/12.4"]
    for mode, more in (("gpu", []), ("cpu", ["-j", "3"])):
        out = f"out-{mode}"
        assert grade(cls, out, *common, *opts, *more, "--mode", mode) == 0
        base = cls[0] / out / "slurm"
        task, merge = (base / "grade.sbatch").read_text(), (base / "merge.sbatch").read_text()
        for text in (task, merge):
            subprocess.run(["bash", "-n"], input=text, text=True, check=True)
            assert "#SBATCH --partition=gpu\n#SBATCH --account=cs101\n" in text
            assert "\nmodule load cuda/12.4\n" in text and "--cell-timeout=30.0" in text
            assert SALT not in text  # scripts and command lines are readable by every user of a cluster
        assert '--slurm-shard="$SLURM_ARRAY_TASK_ID"' in task and "--slurm-merge" in merge
        assert ("#SBATCH --gres=gpu:1" in task) == (mode == "gpu") and "gres" not in merge
        assert ("#SBATCH --cpus-per-task=3" in task and "--jobs=3" in task) == (mode == "cpu")
        assert f"--mode={mode}" in task and plan(cls, out).mode == mode
        assert json.loads((cls[0] / out / "run.json").read_text())["salt"] == SALT


def test_auto_mode_on_slurm_means_gpu_tasks(cls):
    assert grade(cls, "out", "--slurm", "--slurm-no-submit", "--mode", "auto") == 0
    assert plan(cls).mode == "gpu"


def test_task_options_hand_on_grading_options_with_absolute_paths_and_nothing_of_the_run(cls, monkeypatch):
    monkeypatch.chdir(cls[0])
    p = slurm.cli.build_parser()
    slurm.add_arguments(p)
    args = p.parse_args(
        ["subs", "--out", "o", "--salt", SALT, "-j", "4", "--course", "course", "--no-sandbox", "--retries", "2"]
        + ["--slurm", "--slurm-opt=--qos=x", "--resume", "--lms-columns", "exercise"]
    )
    assert slurm.task_options(args) == [
        f"--course={cls[0] / 'course'}",
        "--lms-columns=exercise",
        "--no-sandbox",
        "--retries=2",
    ]


def test_shards_then_merge_give_the_single_host_results(cls):
    assert grade(cls, "single", "--salt", SALT) == 0
    assert grade(cls, "out", "--salt", SALT, "--slurm", "--slurm-tasks", "2", "--slurm-no-submit") == 0
    shards = plan(cls).shards
    assert len(shards) == 2 and sorted(sum(shards, ())) == sorted(plan(cls).fingerprints)
    for k in range(2):
        assert grade(cls, "out", f"--slurm-shard={k}") == 0
    assert grade(cls, "out", "--slurm-merge") == 0
    single, out = cls[0] / "single", cls[0] / "out"
    for name in ("grades.csv", "totals.csv", "canvas.csv", "moodle.csv", "feedback/ann/feedback.md"):
        assert (out / name).read_text() == (single / name).read_text(), name
    a, b = strip(json.loads((single / "grades.json").read_text())), strip(json.loads((out / "grades.json").read_text()))
    assert a["grades"] == b["grades"] and a["submissions"] == b["submissions"]
    assert {k: v for k, v in b["run"].items() if k not in ("jobs", "slurm")} == {
        k: v for k, v in a["run"].items() if k != "jobs"
    }
    assert sorted(p.name for p in (out / "records").iterdir()) == sorted(p.name for p in (single / "records").iterdir())
    run = json.loads((out / "run.json").read_text())
    assert run["salt"] == SALT and run["mode"] == "cpu" and run["slurm"]["tasks"] == 2
    assert (out / "report.html").exists()


def test_a_missing_shard_stops_the_merge_and_resume_submits_only_that_shard(cls, capsys):
    assert grade(cls, "out", "--slurm", "--slurm-tasks", "3", "--slurm-no-submit") == 0
    for k in (0, 2):
        assert grade(cls, "out", f"--slurm-shard={k}") == 0
    capsys.readouterr()
    assert grade(cls, "out", "--slurm-merge") == 1
    err = capsys.readouterr().err
    assert "shard(s) 1 failed" in err and "--slurm --resume" in err
    assert not (cls[0] / "out" / "grades.csv").exists()  # nothing written from a part of the class

    before = plan(cls).shards
    assert grade(cls, "out", "--slurm", "--resume", "--slurm-no-submit") == 0
    assert "submitting shard(s) 1\n" in capsys.readouterr().err and plan(cls).shards == before
    assert grade(cls, "out", "--slurm-shard=1") == 0
    assert grade(cls, "out", "--slurm-merge") == 0

    # A stale record (the student handed in again) counts as missing; with none missing, --resume merges.
    ann = cls[2] / "ann" / f"{fx.STEM}.ipynb"
    ann.write_text("handed in again, still damaged")
    capsys.readouterr()
    assert grade(cls, "out", "--slurm", "--resume", "--slurm-no-submit") == 0
    k = next(i for i, keys in enumerate(plan(cls).shards) if f"ann/{fx.STEM}" in keys)
    assert f"submitting shard(s) {k}\n" in capsys.readouterr().err
    assert grade(cls, "out", f"--slurm-shard={k}") == 0
    assert grade(cls, "out", "--slurm", "--resume", "--slurm-no-submit") == 0
    assert "every shard's records are in place: merging" in capsys.readouterr().err


def test_resume_after_a_new_student_moves_current_records_with_the_new_deal(cls, capsys):
    """A class that grew is dealt again; the records still current travel to their new shards, so only
    the shard holding the newcomer is submitted, and the merge equals a single-host run."""
    assert grade(cls, "out", "--salt", SALT, "--slurm", "--slurm-tasks", "2", "--slurm-no-submit") == 0
    for k in range(2):
        assert grade(cls, "out", f"--slurm-shard={k}") == 0
    before = plan(cls).shards
    (cls[2] / "aaron").mkdir()  # sorts first: every earlier record changes shard in the new deal
    (cls[2] / "aaron" / f"{fx.STEM}.ipynb").write_text("aaron handed in a damaged file")
    capsys.readouterr()
    assert grade(cls, "out", "--slurm", "--resume", "--slurm-tasks", "2", "--slurm-no-submit") == 0
    after = plan(cls).shards
    assert f"aaron/{fx.STEM}" in after[0] and set(before[0]) & set(after[1]), (before, after)
    assert "submitting shard(s) 0\n" in capsys.readouterr().err
    assert grade(cls, "out", "--slurm-shard=0") == 0
    assert grade(cls, "out", "--slurm-merge") == 0
    assert grade(cls, "single", "--salt", SALT) == 0
    for name in ("grades.csv", "totals.csv"):
        assert (cls[0] / "out" / name).read_text() == (cls[0] / "single" / name).read_text(), name


def test_the_merge_copies_each_picture_beside_the_feedback(cls):
    assert grade(cls, "out", "--slurm", "--slurm-tasks", "1", "--slurm-no-submit") == 0
    assert grade(cls, "out", "--slurm-shard=0") == 0
    shard = cls[0] / "out" / "slurm" / "shard-000"
    path = shard / "records" / f"ann__{fx.STEM}.json"
    rec = json.loads(path.read_text())
    rec["exercises"][0]["picture"] = "nb02.vector_add.png"
    path.write_text(json.dumps(rec))
    (shard / "feedback" / "ann").mkdir(parents=True, exist_ok=True)
    (shard / "feedback" / "ann" / "nb02.vector_add.png").write_bytes(b"\x89PNG picture")
    assert grade(cls, "out", "--slurm-merge") == 0
    fb = cls[0] / "out" / "feedback" / "ann"
    assert (fb / "nb02.vector_add.png").read_bytes() == b"\x89PNG picture"
    assert "](nb02.vector_add.png)" in (fb / "feedback.md").read_text()


def test_a_task_grades_its_shard_resumed_with_all_of_out_hidden(cls, monkeypatch):
    assert grade(cls, "out", "--salt", SALT, "--slurm", "--slurm-tasks", "2", "--slurm-no-submit") == 0
    seen = {}
    monkeypatch.setattr(slurm.cli, "run", lambda args, keys, hide: seen.update(args=args, keys=keys, hide=hide) or 0)
    assert grade(cls, "out", "--slurm-shard=1") == 0
    out = cls[0] / "out"
    assert seen["keys"] == frozenset(plan(cls).shards[1]) and seen["hide"] == (out.resolve(),)
    assert seen["args"].out == out / "slurm" / "shard-001" and seen["args"].resume and seen["args"].salt == SALT
    assert grade(cls, "out", "--slurm-shard=2") == 2  # no such shard: a usage error
    (out / "run.json").unlink()
    assert grade(cls, "out", "--slurm-shard=0") == 2  # no salt to grade with: never a new one


def test_submit_hands_the_array_and_the_merge_after_it_to_sbatch(cls, tmp_path, monkeypatch):
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    # A stand-in: records its arguments, answers job ids 7 then 8, and with --wait the job's status (3).
    fake.write_text(
        f'#!/bin/bash\necho "$*" >> {calls}\nn=$(wc -l < {calls})\necho $((6 + n))\n'
        'for a in "$@"; do [ "$a" = --wait ] && exit 3; done\nexit 0\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert grade(cls, "out", "--salt", SALT, "--slurm", "--slurm-tasks", "2", "--slurm-max-running", "1") == 0
    base = cls[0] / "out" / "slurm"
    first, second = calls.read_text().splitlines()
    assert first == f"--parsable --array=0,1%1 {base / 'grade.sbatch'}"
    assert second == f"--parsable --dependency=afterany:7 {base / 'merge.sbatch'}"
    assert plan(cls).submitted == ({"array": "7", "shards": [0, 1], "merge": "8"},)
    assert SALT not in calls.read_text()
    calls.unlink()
    assert grade(cls, "out", "--slurm", "--slurm-wait") == 3  # the merge job's exit status
    assert "--wait" in calls.read_text().splitlines()[1]


def test_no_sbatch_is_a_usage_error(cls, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert grade(cls, "out", "--slurm") == 2


@pytest.mark.parametrize("option", ["--slurm-tasks=0", "--slurm-max-running=0"])
def test_no_tasks_is_a_usage_error(cls, option):
    assert grade(cls, "out", "--slurm", "--slurm-no-submit", option) == 2


def test_merge_without_a_plan_is_a_usage_error(cls):
    assert grade(cls, "out", "--slurm-merge") == 2
    assert not Path(cls[0] / "out" / "grades.csv").exists()
