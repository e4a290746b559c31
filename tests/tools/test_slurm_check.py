"""tools/slurm_check.py's comparison (make test-slurm's verdict): two OUT folders are the same
when only the fields that time a run, or say how it ran, differ; any other change is named."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import slurm_check  # noqa: E402


def out(folder: Path, status="passed", seconds=1.5, jobs=2, slurm=None) -> Path:
    folder.mkdir()
    (folder / "grades.csv").write_text(f"student,exercise,status\nann,nb01.x,{status}\n")
    for name in ("totals.csv", "canvas.csv", "moodle.csv"):
        (folder / name).write_text("student,points\nann,1\n")
    rec = {"student": "ann", "outcome": "completed", "seconds": seconds, "runs": [{"seconds": seconds}]}
    run = {"salt": "s", "started": f"2026-01-01 00:00:0{int(seconds)}", "jobs": jobs}
    if slurm:
        run["slurm"] = slurm
    doc = {"run": run, "grades": [{"student": "ann", "status": status}], "submissions": [rec]}
    (folder / "grades.json").write_text(json.dumps(doc))
    (folder / "records").mkdir()
    (folder / "records" / "ann__01.json").write_text(json.dumps({**rec, "exercises": [{"status": status}]}))
    (folder / "feedback" / "ann").mkdir(parents=True)
    (folder / "feedback" / "ann" / "feedback.md").write_text(f"# ann\n{status}\n")
    return folder


def test_times_and_how_it_ran_are_left_out(tmp_path):
    a = out(tmp_path / "a")
    b = out(tmp_path / "b", seconds=7.25, jobs=1, slurm={"tasks": 3, "jobs": ["12"]})
    assert slurm_check.compare(a, b) == []


def test_a_different_grade_is_named_wherever_it_shows(tmp_path):
    diffs = slurm_check.compare(out(tmp_path / "a"), out(tmp_path / "b", status="failed"))
    assert any(d.startswith("grades.csv row 1:") for d in diffs)
    assert any(d.startswith("grades.json grades[0]:") for d in diffs)
    assert "records/ann__01.json differs" in diffs and "feedback/ann/feedback.md differs" in diffs


def test_a_missing_record_is_named(tmp_path):
    a, b = out(tmp_path / "a"), out(tmp_path / "b")
    (b / "records" / "ann__01.json").unlink()
    assert [d for d in slurm_check.compare(a, b) if d.startswith("records/:")]
