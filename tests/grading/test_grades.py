"""The instructors' batch grader (python -m helpers.grade): a fixture set of submissions, built
here in tmp folders (tests/submission_sets/fixtures.py), graded once per session by the real CLI, then
every expected grade and every hostile case asserted. Small sizes, -j2.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from submission_sets import fixtures as fx
from submission_sets.graded import SALT, grade, records

ROOT = Path(__file__).resolve().parents[2]


# Long enough for a correct notebook on a busy 2-core machine (its first check starts the compile server
# and the tracer process); the hanging fixtures pay it once each, in parallel with the rest.
TIMEOUTS = ["--cell-timeout", 30, "--grade-timeout", 30, "--timeout", 300]


@pytest.fixture(scope="session")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grade")
    course = fx.make_course(tmp / "course")
    table = fx.write_submissions(tmp / "subs")
    (tmp / "subs" / "nobody").mkdir()  # a student folder with nothing in it
    out = tmp / "out"
    run = grade(
        tmp / "subs",
        "--out",
        out,
        "--course",
        course,
        "-j2",
        *TIMEOUTS,
        "--salt",
        SALT,
    )
    return {"tmp": tmp, "course": course, "table": table, "out": out, "run": run, "records": records(out)}


def test_batch_exits_zero_whatever_the_students_did(batch):
    assert batch["run"].returncode == 0, batch["run"].stderr[-3000:]
    n = len(fx.submissions()) + 1  # and the student folder "nobody", with nothing in it
    assert f"Graded {n} submission(s)" in batch["run"].stdout


CASES = list(fx.submissions())


@pytest.mark.parametrize("name", CASES)
def test_each_submission_grades_as_expected(batch, name):
    _, expected, facts = batch["table"][name]
    rec = batch["records"][name]
    got = {e["exercise"]: e["status"] for e in rec["exercises"]}
    assert got == expected, json.dumps(rec["exercises"], indent=1)[:3000]
    for ex_id, words in facts.get("message", {}).items():
        message = next(e["message"] for e in rec["exercises"] if e["exercise"] == ex_id)
        assert words in message, message
    if facts.get("tamper"):
        assert rec["tamper"] and rec["tamper"]["cell"] == 6, rec["tamper"]
    if facts.get("review"):
        assert rec["review"], rec
    if facts.get("skipped"):
        assert [s["cell"] for s in rec["skipped_cells"]] == [8], rec["runs"]
    if facts.get("cell_error"):
        assert any(facts["cell_error"] in c["error"] for c in rec["cell_errors"]), rec["cell_errors"]
    if facts.get("big_output"):
        assert rec["output_bytes"] > 30_000_000 and "left out" in rec["output"] and len(rec["output"]) < 40_000
    if "outcome" in facts:
        assert rec["outcome"] == facts["outcome"]
    for ex_id, words in facts.get("graded_from", {}).items():  # the exercise's last check counted
        row = next(e for e in rec["exercises"] if e["exercise"] == ex_id)
        assert words in row.get("graded_from", ""), row
    if facts.get("big_file"):  # its saved outputs alone are past the limit on code
        assert Path(rec["file"]).stat().st_size > (50 << 20) and rec["outcome"] == "completed", rec["problem"]


def test_grades_csv_has_one_row_per_student_and_exercise_with_points(batch):
    rows = list(csv.DictReader((batch["out"] / "grades.csv").open()))
    assert len(rows) == (len(CASES) + 1) * len(fx.EXERCISES)
    assert set(rows[0]) >= {"student", "exercise", "points", "max_points", "status", "message"}
    for r in rows:
        assert float(r["points"]) == (float(r["max_points"]) if r["status"] == "passed" else 0.0)
    totals = {r["student"]: r for r in csv.DictReader((batch["out"] / "totals.csv").open())}
    assert totals["perfect"]["points"] == "4" and totals["untouched"]["points"] == "0"
    assert {r["status"] for r in rows if r["student"] == "nobody"} == {"not_graded"}
    doc = json.loads((batch["out"] / "grades.json").read_text())
    assert doc["run"]["salt"] == SALT and len(doc["grades"]) == len(rows)


def test_feedback_page_per_student_with_pictures(batch):
    fb = batch["out"] / "feedback"
    assert {p.name for p in fb.iterdir()} >= set(CASES)
    page = (fb / "wrong_index" / "feedback.md").read_text()
    assert "nb02.vector\\_add" in page and "only the first block" in page and "seed=" in page
    assert "](nb02.vector_add.png)" in page and (fb / "wrong_index" / "nb02.vector_add.png").stat().st_size > 1000
    assert "4 / 4" in (fb / "perfect" / "feedback.md").read_text()
    assert "cell 8" in (fb / "os_exit" / "feedback.md").read_text()


def test_summary_lists_what_needs_a_human(batch):
    out = batch["run"].stdout
    for name in ("tamper_checker", "tamper_numpy", "invalid_json", "os_exit", "stubborn_loop", "forger", "reference"):
        assert f"{name}/{fx.STEM}" in out.split("Look at these:")[1], out
    n = len(fx.submissions()) + 1  # and "nobody"
    assert f"[{n}/{n}]" in batch["run"].stderr  # progress, one line per submission when not on a terminal


def test_report_and_lms_files_are_written_beside_the_csvs(batch):
    out = batch["out"]
    grades = list(csv.DictReader((out / "grades.csv").open()))
    students = [r["student"] for r in csv.DictReader((out / "totals.csv").open())]
    page = (out / "report.html").read_text(encoding="utf-8")
    shown = dict(
        (ex, (int(p), int(n)))
        for ex, p, n in re.findall(r'<tr data-exercise="([^"]+)">.*?class="n ratio"[^>]*>(\d+) / (\d+)<', page)
    )
    assert shown == {
        ex: (sum(r["status"] == "passed" for r in grades if r["exercise"] == ex), len(students)) for ex in fx.EXERCISES
    }
    assert len(re.findall(r'<tr data-student="', page)) == len(students) == len(CASES) + 1
    canvas = list(csv.reader((out / "canvas.csv").open(newline="")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", fx.STEM]
    assert [r[0] for r in canvas[2:]] == students and canvas[1][5] == "4"
    moodle = list(csv.reader((out / "moodle.csv").open(newline="")))
    assert moodle[0] == ["First name", "Last name", "ID number", "Email address", fx.STEM] and len(moodle) == 1 + len(
        students
    )
    assert "report.html" in batch["run"].stdout


def test_resume_rewrites_the_lms_files_per_exercise_with_a_roster(batch, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(batch["out"], out)
    students = [r["student"] for r in csv.DictReader((out / "totals.csv").open())]
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "submission,Email address,ID\n" + "".join(f"{s},{s}@uni.example,{i}\n" for i, s in enumerate(students))
    )
    run = grade(
        batch["tmp"] / "subs",
        "--out",
        out,
        "--course",
        batch["course"],
        "--resume",
        "--lms-columns",
        "exercise",
        "--roster",
        roster,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "[1/" not in run.stderr  # nothing graded again: the files come from the records
    canvas = list(csv.reader((out / "canvas.csv").open(newline="")))
    assert canvas[0][5:] == list(fx.EXERCISES)
    assert [r[1] for r in canvas[2:]] == [str(i) for i in range(len(students))]
    moodle = list(csv.reader((out / "moodle.csv").open(newline="")))
    assert [r[3] for r in moodle[1:]] == [f"{s}@uni.example" for s in students]
    assert "LMS files" not in run.stdout  # everyone matched, everyone has ids


def test_resume_regrades_nothing_and_keeps_the_grades(batch):
    before = (batch["out"] / "grades.csv").read_text()
    gone = batch["out"] / "records" / f"partial__{fx.STEM}.json"
    gone.unlink()
    run = grade(
        batch["tmp"] / "subs",
        "--out",
        batch["out"],
        "--course",
        batch["course"],
        "-j2",
        *TIMEOUTS[:2],
        "--resume",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "[1/1] partial" in run.stderr  # only the missing record was graded again
    assert (batch["out"] / "grades.csv").read_text() == before  # same salt from run.json: same seeds, same grades


def test_zip_input_same_seeds_points_override_and_crash_without_retry(batch, tmp_path):
    """A zip of three submissions, graded into a fresh folder with the same salt: the same seeds
    and statuses (determinism), --points applied, and a segfault with --retries 0 marks the
    exercises after it "not graded" while the one graded before it keeps its grade."""
    z = tmp_path / "subs.zip"
    crash = fx.perfect_cells(extra=["import ctypes\nctypes.string_at(0)"], extra_at=6)
    with zipfile.ZipFile(z, "w") as zf:
        for name in ("perfect", "racy"):
            zf.writestr(f"class/{name}/{fx.STEM}.ipynb", batch["table"][name][0])
        zf.writestr(f"class/segfault/{fx.STEM}.ipynb", json.dumps(fx.notebook(crash)))
        zf.writestr("class/../../evil.txt", "must not be written outside")
    points = tmp_path / "points.csv"
    points.write_text("exercise,points\nnb02.vector_add,3\n")
    out = tmp_path / "out"
    run = grade(
        z,
        "--out",
        out,
        "--course",
        batch["course"],
        "-j2",
        *TIMEOUTS[:2],
        "--salt",
        SALT,
        "--retries",
        0,
        "--points",
        points,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not (tmp_path.parent / "evil.txt").exists()
    recs = records(out)
    for name in ("perfect", "racy"):
        mine = [(e["exercise"], e["status"], e.get("seed")) for e in recs[name]["exercises"]]
        theirs = [(e["exercise"], e["status"], e.get("seed")) for e in batch["records"][name]["exercises"]]
        assert mine == theirs
    seg = {e["exercise"]: e for e in recs["segfault"]["exercises"]}
    assert seg["nb02.vector_add"]["status"] == "passed"
    assert seg["nb02.histogram"]["status"] == "not_graded"
    assert "segmentation fault" in seg["nb02.histogram"]["message"] and "cell 8" in seg["nb02.histogram"]["message"]
    assert recs["segfault"]["outcome"] == "crashed"
    totals = {r["student"]: r for r in csv.DictReader((out / "totals.csv").open())}
    assert (totals["perfect"]["points"], totals["perfect"]["max_points"]) == ("6", "6")


def test_usage_errors_exit_2(tmp_path):
    course = fx.make_course(tmp_path / "course")
    (tmp_path / "empty").mkdir()
    assert grade(tmp_path / "empty", "--out", tmp_path / "o", "--course", course).returncode == 2
    assert grade(tmp_path / "nowhere", "--out", tmp_path / "o", "--course", course).returncode == 2
    (tmp_path / "one").mkdir()
    (tmp_path / "roster.csv").write_text("colour,size\nred,4\n")
    bad = grade(tmp_path / "one", "--out", tmp_path / "o", "--course", course, "--roster", tmp_path / "roster.csv")
    assert bad.returncode == 2 and "names none of the columns" in bad.stderr, bad.stderr


def test_a_report_that_cannot_be_written_leaves_the_grades_and_exits_1(tmp_path, monkeypatch, capsys):
    from helpers.grading import class_report, cli

    course = fx.make_course(tmp_path / "course")
    fx.write_submissions(tmp_path / "subs", ["invalid_json"])  # graded without a child process

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(class_report, "write", broken)
    out = tmp_path / "out"
    code = cli.main([str(tmp_path / "subs"), "--out", str(out), "--course", str(course), "--mode", "cpu"])
    assert code == 1
    assert (out / "grades.csv").is_file() and (out / "canvas.csv").is_file() and not (out / "report.html").exists()
    assert "report.html could not be written (RuntimeError: boom)" in capsys.readouterr().out


# -- unit tests of the pipeline's small steps (no child processes)


def test_exercises_come_from_the_pristine_notebook(tmp_path):
    from helpers.grading.course import load_course

    course = load_course(fx.make_course(tmp_path / "c"))
    assert list(course) == [fx.STEM]  # 00_setup has no exercises
    specs = course[fx.STEM].exercises
    assert [s.id for s in specs] == list(fx.EXERCISES)
    assert specs[0].answer == "vector_add"


def test_real_course_notebooks_parse():
    from helpers.grading.course import load_course

    course = load_course(ROOT / "notebooks")
    nb02 = next((nb for nb in course.values() if nb.number == "02"), None)
    if nb02 is None:
        pytest.skip("notebook 02 not written yet")
    saxpy = next(s for s in nb02.exercises if s.name == "saxpy")
    assert saxpy.options == {"launch": "saxpy_launch"}


def test_seeds_are_deterministic_and_depend_on_everything():
    from helpers.grading.cli import seed_for

    assert seed_for("s", "alice", "nb02.saxpy") == seed_for("s", "alice", "nb02.saxpy")
    assert (
        len(
            {
                seed_for("s", "alice", "nb02.saxpy"),
                seed_for("t", "alice", "nb02.saxpy"),
                seed_for("s", "bob", "nb02.saxpy"),
                seed_for("s", "alice", "nb02.histogram"),
            }
        )
        == 4
    )


def test_answers_lose_home_made_equality():
    from helpers.grading.cells import plain as _plain

    class Liar(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    assert type(_plain(Liar(3))) is int and _plain(Liar(3)) != 4
    assert _plain((Liar(1), [Liar(2)])) == (1, [2])
    assert _plain(object.__new__(type("X", (), {"__eq__": lambda s, o: True}))) != 1


def test_integrity_sees_a_patched_numpy_and_engine():
    import numpy as np

    from helpers import exercises
    from helpers.grading.integrity import Integrity

    snap = Integrity([])
    assert snap.problems() == []
    saved = np.allclose
    np.allclose = lambda *a, **k: True
    try:
        assert any("numpy.allclose" in p for p in snap.problems())
    finally:
        np.allclose = saved
    saved = exercises.Exercise.grade
    exercises.Exercise.grade = lambda *a, **k: None
    try:
        assert any("Exercise" in p for p in snap.problems())
    finally:
        exercises.Exercise.grade = saved
    assert snap.problems() == []


def test_child_imports_what_the_grader_imports(tmp_path):
    """Offline GPU nodes put the course's packages on PYTHONPATH; the isolated child must see them too
    (found on an H100 host, where the child otherwise picked the base image's numpy 2.5)."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "course_marker.py").write_text("BLOCKS = lambda n, t: (n + t - 1) // t\n")
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs" / "dana"
    subs.mkdir(parents=True)
    nb = fx.notebook(fx.perfect_cells(blocks="from course_marker import BLOCKS as blocks_per_grid"))
    (subs / f"{fx.STEM}.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "out"
    env = {**os.environ, "COURSE_MODE": "cpu", "PYTHONPATH": f"{lib}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "helpers.grade",
            str(tmp_path / "subs"),
            "--out",
            str(out),
            "--course",
            str(course),
            "-j1",
            "--salt",
            SALT,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    rec = records(out)["dana"]
    assert rec["cell_errors"] == [], rec["cell_errors"]
    assert {e["exercise"]: e["status"] for e in rec["exercises"]}["nb01.blocks_per_grid"] == "passed"


def test_integrity_ignores_caches_but_not_replaced_methods():
    """Pickling fills __slotnames__ and Numba fills lazy singletons on its classes: not tampering
    (seen as false positives on an H100). Replacing a method still is."""
    import copyreg
    import types

    from helpers import exercises
    from helpers.grading.integrity import Integrity

    numba_like = type("NVVM", (), {"__module__": "numba.cuda.cudadrv.nvvm", "get": lambda self: 1})
    fake = types.ModuleType("numba.cuda.fake_for_test")
    fake.NVVM = numba_like
    sys.modules[fake.__name__] = fake
    try:
        snap = Integrity([], gpu=True)
        copyreg._slotnames(exercises.Result)  # what pickle does: caches __slotnames__ on the class
        numba_like._NVVM__INSTANCE = object()  # a lazy singleton
        assert snap.problems() == []
        original = exercises.Exercise.grade
        try:
            exercises.Exercise.grade = lambda self, *a, **k: None
            assert any("Exercise.grade was changed" in p for p in snap.problems())
        finally:
            exercises.Exercise.grade = original
        numba_like.get = lambda self: 2
        assert any("NVVM.get was changed" in p for p in snap.problems())
    finally:
        del sys.modules[fake.__name__]


def test_review_ignores_what_the_course_itself_uses():
    from helpers.grading.review import review_flags

    course = ["import ctypes", "args = (ctypes.c_void_p * 3)()"]
    student = [(3, "import ctypes"), (4, "import gc\ngc.get_objects()")]
    assert review_flags(student, course) == ["cell 5 searches the garbage collector's objects (`gc.get_objects`)"]
    assert review_flags([(3, "ctypes.memmove(a, b, 8)")], []) == ["cell 4 uses ctypes (`ctypes`)"]


def test_a_cell_that_poisons_the_gpu_is_skipped_in_a_second_run(tmp_path):
    """On a GPU an illegal address makes every later CUDA call fail in that process (seen on an
    H100). The CPU cannot make one, so the cell raises the same CUDA error text."""
    course = fx.make_course(tmp_path / "course")
    poison = (
        'raise RuntimeError("[CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: 700] '
        'Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADDRESS")'
    )
    subs = tmp_path / "subs" / "ivy"
    subs.mkdir(parents=True)
    (subs / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(fx.perfect_cells(extra=[poison]))))
    out = tmp_path / "out"
    run = grade(tmp_path / "subs", "--out", out, "--course", course, "-j1", "--salt", SALT)
    assert run.returncode == 0, run.stderr[-2000:]
    rec = records(out)["ivy"]
    assert {e["exercise"]: e["status"] for e in rec["exercises"]} == fx.ALL_PASSED
    assert [s["cell"] for s in rec["skipped_cells"]] == [6], rec["runs"]
    assert "left the GPU unusable" in rec["skipped_cells"][0]["why"]


def test_a_further_run_replaces_a_grade_only_with_a_later_check():
    """The last check counts across runs too: run 0 checked in cell 5 (failed) and crashed in cell
    7; run 1, without cell 7, checks again in cell 5 (same grade: run 0's stands) and in cell 9
    (passed: that one counts). An error the grader gave a check that crashed always stands."""
    from helpers.grading.attempt import Attempt
    from helpers.grading.records import collect

    def result(ex, status, cell):
        return {"type": "result", "exercise": ex, "status": status, "message": status, "cell": cell}

    record = {"review": [], "cell_errors": [], "tamper": None}
    by_id = {"nb02.histogram": {"status": "error", "run": 0, "message": "grading did not finish"}}
    first = Attempt(
        skip=[], lines=[result("nb02.vector_add", "failed", 5), result("nb01.blocks_per_grid", "passed", 3)]
    )
    collect(record, first, by_id, 0, [], {})
    again = [result("nb02.vector_add", "failed", 5), result("nb01.blocks_per_grid", "failed", 3)]
    again += [result("nb02.vector_add", "passed", 9), result("nb02.histogram", "passed", None)]
    collect(record, Attempt(skip=[7], lines=again), by_id, 1, [7], {})
    assert by_id["nb02.vector_add"]["status"] == "passed" and by_id["nb02.vector_add"]["run"] == 1
    assert "without cell 8" in by_id["nb02.vector_add"]["message"]
    assert by_id["nb01.blocks_per_grid"] == {**first.lines[1], "run": 0}  # the same check again: run 0's stands
    assert by_id["nb02.histogram"]["status"] == "error"
