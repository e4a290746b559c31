"""The batch grader when submissions are damaged or hostile, names collide, results flood, or the
instructor presses Ctrl-C: one submission never harms the batch (issue "Grading a class you can
trust", items 3 and 4). Same fixtures and style as tests/grading/test_grades.py."""

import csv  # noqa: E402
import hashlib
import json  # noqa: E402
import zipfile  # noqa: E402
from pathlib import Path

import pytest  # noqa: E402
from numba import cuda  # noqa: E402

import helpers  # noqa: E402, F401 - decides CPU/GPU mode before numba is imported
from helpers import exercises as E  # noqa: E402
from helpers.problems import nb01, nb02  # noqa: E402
from submission_sets import fixtures as fx  # noqa: E402
from submission_sets.graded import SALT, grade
from submission_sets.graded import records as read_records
from submission_sets.isolated import run_cli  # noqa: E402

OPTS = ["--cell-timeout", 30, "--grade-timeout", 30, "--timeout", 300, "--salt", SALT]  # room on a busy machine
KEPT_COMMENT = {
    "vector_add": fx.VECTOR_ADD.replace("    i = cuda.grid(1)", "    # YOUR CODE HERE\n    i = cuda.grid(1)"),
    "blocks": fx.BLOCKS + "  # YOUR CODE HERE",
    "threads": fx.THREADS + "  # YOUR CODE HERE",
    "histogram": fx.HISTOGRAM.replace("    i = cuda.grid(1)", "    i = cuda.grid(1)  # YOUR CODE HERE"),
}
PARTIAL = {"nb02.vector_add": "passed", "nb01.threads_launched": "passed"}
FLOOD = (
    "import glob\nfor f in glob.glob('*.jsonl'):\n    with open(f, 'a') as out:\n        for _ in range(70):\n"
    "            out.write('0' * 64 + ' ' + 'x' * (1 << 20) + '\\n')\n"
    # where the grader judges in its own process, its channel is one of the open descriptors
    "import os\nfor fd in range(3, 64):\n    try:\n        for _ in range(70):\n"
    "            os.write(fd, b'x' * (1 << 20) + b'\\n')\n    except OSError:\n        pass"
)


def nb_text(nb_cells=None) -> str:
    return json.dumps(fx.notebook(nb_cells or fx.perfect_cells()))


def write_zip(path, members: dict, stored=True):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


def bad_crc(path):
    """Flip one byte inside a stored member: the archive opens, reading that member fails."""
    data = path.read_bytes()
    path.write_bytes(data.replace(b"teaching cell", b"teachinG cell", 1))
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("robust")
    course = fx.make_course(tmp / "course")
    subs = tmp / "subs"
    subs.mkdir()
    for name, text in {
        "good": nb_text(),
        "kept_comment": nb_text(fx.cells(**KEPT_COMMENT)),
        # Three names, three different grades (issue 29 item 6): all passed, not attempted, half.
        "Lee Kim": nb_text(),
        "Lee_Kim": nb_text(fx.cells()),
        "Lee_Kim_2": nb_text(fx.cells(vector_add=fx.VECTOR_ADD, threads=fx.THREADS)),
        "deep": '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "bad_source": json.dumps(fx.notebook([{"cell_type": "code", "source": [1, 2]}, *fx.perfect_cells()])),
        "not_json": "this is not JSON at all",
        "flooder": nb_text(fx.perfect_cells(extra=[FLOOD])),
    }.items():
        (subs / name).mkdir()
        (subs / name / f"{fx.STEM}.ipynb").write_text(text)
    bad_crc(write_zip(subs / "crc.zip", {f"{fx.STEM}.ipynb": nb_text()}))
    whole = write_zip(tmp / "whole.zip", {f"{fx.STEM}.ipynb": nb_text()}).read_bytes()
    (subs / "truncated.zip").write_bytes(whole[: len(whole) // 2])
    extras = {f"{fx.STEM}.ipynb": nb_text(), "notes.txt": "hello", "../evil.ipynb": "{}"}
    write_zip(subs / "extras.zip", extras)
    out = tmp / "out"
    run = grade(subs, "--out", out, "--course", course, "-j2", *OPTS)
    return {"tmp": tmp, "course": course, "out": out, "run": run, "records": read_records(out)}


def why(records) -> str:
    """What a failed assertion shows: each record's outcome, runs and messages, not its output."""
    keys = ("outcome", "problem", "runs", "exercises", "cell_errors", "skipped_cells", "tamper", "notes")
    shown = {k: {**{f: r.get(f) for f in keys}, "output": (r.get("output") or "")[-1500:]} for k, r in records.items()}
    return json.dumps(shown, indent=1)[:6000]


def statuses(rec) -> set:
    return {e["status"] for e in rec["exercises"]}


def test_batch_completes_and_writes_grades(batch):
    assert batch["run"].returncode == 0, batch["run"].stderr[-3000:]
    rows = list(csv.DictReader((batch["out"] / "grades.csv").open()))
    assert {r["student"] for r in rows} == set(batch["records"])
    assert statuses(batch["records"]["good"]) == {"passed"}


@pytest.mark.parametrize(
    "student, words",
    [
        ("crc", "damaged"),
        ("truncated", "not a readable zip"),
        ("deep", "nested too deeply"),
        ("bad_source", "not text"),
        ("not_json", "not valid JSON"),
    ],
)
def test_an_unreadable_submission_is_not_graded_alone_with_a_reason(batch, student, words):
    rec = batch["records"][student]
    assert rec["outcome"] == "invalid" and words in rec["problem"], rec["problem"]
    assert statuses(rec) == {"not_graded"}
    assert all(words in e["message"] for e in rec["exercises"])
    assert words in (batch["out"] / "feedback" / student / "feedback.md").read_text()


def test_colliding_names_never_move_a_grade_to_another_student(batch):
    """'Lee Kim' and 'Lee_Kim' both sanitise to Lee_Kim, and Lee_Kim_2 is a name of its own: each
    id comes from its own name (the name that is the id keeps it, the other gets a hash of its
    exact name), so every record and grades.csv row is its own student's, and the warning names
    the pair that collided."""
    recs, hashed = batch["records"], "Lee_Kim_" + hashlib.sha256(b"Lee Kim").hexdigest()[:8]
    expected = {  # id -> (folder it must come from, statuses)
        "Lee_Kim": ("Lee_Kim", dict.fromkeys(fx.EXERCISES, "not_attempted")),
        "Lee_Kim_2": ("Lee_Kim_2", {**dict.fromkeys(fx.EXERCISES, "not_attempted"), **PARTIAL}),
        hashed: ("Lee Kim", dict.fromkeys(fx.EXERCISES, "passed")),
    }
    assert {k for k in recs if k.startswith("Lee")} == set(expected), sorted(recs)
    rows = list(csv.DictReader((batch["out"] / "grades.csv").open()))
    for sid, (folder, want) in expected.items():
        assert Path(recs[sid]["file"]).parent.name == folder, (sid, recs[sid]["file"])
        assert {e["exercise"]: e["status"] for e in recs[sid]["exercises"]} == want, sid
        assert {r["exercise"]: r["status"] for r in rows if r["student"] == sid} == want, sid
    collisions = [line for line in batch["run"].stdout.splitlines() if "become the id" in line]
    assert collisions == [
        f"WARNING: the names 'Lee Kim' and 'Lee_Kim' both become the id Lee_Kim; graded as 2 students: "
        f"'Lee Kim' as {hashed}, 'Lee_Kim' as Lee_Kim"
    ], collisions


def test_skipped_zip_members_are_noted_in_summary_and_feedback(batch):
    assert statuses(batch["records"]["extras"]) == {"passed"}
    page = (batch["out"] / "feedback" / "extras" / "feedback.md").read_text()
    for words in ("notes.txt", "not a notebook", "evil.ipynb", "outside the archive"):
        assert words in page and words in batch["run"].stdout


def test_a_real_answer_that_kept_the_placeholder_comment_is_graded(batch):
    assert statuses(batch["records"]["kept_comment"]) == {"passed"}


def test_a_results_flood_is_capped_and_marked(batch):
    rec = batch["records"]["flooder"]
    assert "64 MB" in rec["results_flooded"] and any("flooded" in r for r in rec["review"])
    assert "flooded" in batch["run"].stdout


def test_damaged_member_of_a_class_zip_harms_only_its_student(tmp_path):
    course = fx.make_course(tmp_path / "course")
    members = {
        f"class/bob/{fx.STEM}.ipynb": nb_text(),  # first: the one bad_crc damages
        "class/bob/readme.txt": "hi",
        f"class/alice/{fx.STEM}.ipynb": nb_text(fx.cells()),
    }
    zpath = bad_crc(write_zip(tmp_path / "class.zip", members))
    out = tmp_path / "out"
    run = grade(zpath, "--out", out, "--course", course, "-j1", *OPTS)
    assert run.returncode == 0, run.stderr[-3000:]
    recs = read_records(out)
    assert statuses(recs["alice"]) == {"not_attempted"}
    assert recs["bob"]["outcome"] == "invalid" and "damaged" in recs["bob"]["problem"]
    assert "readme.txt" in (out / "feedback" / "bob" / "feedback.md").read_text()
    assert (out / "grades.csv").exists()


def _padded(size: int) -> str:
    """A notebook that is ``size`` bytes on disk and a few kB zipped (spaces compress)."""
    text = nb_text()
    return text + " " * (size - len(text))


def test_nested_zips_unpack_out_of_one_budget_per_upload(tmp_path):
    """Issue 29 item 7: a small upload whose zips, each far under the cap on its own, unpack past
    it together (here 3 x 0.4 MB across three levels, under --max-upload-mb 1) is not graded, with
    one sentence why; nothing of it is graded, in no other student's name either."""
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    subs.mkdir()
    inner = write_zip(tmp_path / "inner.zip", {"again.ipynb": _padded(400_000)}, stored=False)
    middle = tmp_path / "middle.zip"
    with zipfile.ZipFile(middle, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("copy.ipynb", _padded(400_000))
        z.write(inner, "inner.zip")
    with zipfile.ZipFile(subs / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{fx.STEM}.ipynb", _padded(400_000))
        z.write(middle, "middle.zip")
    assert (subs / "bomb.zip").stat().st_size < 30_000
    out = tmp_path / "out"
    run = grade(subs, "--out", out, "--course", course, "-j1", "--max-upload-mb", 1, *OPTS)
    assert run.returncode == 0, run.stderr[-3000:]
    recs = read_records(out)
    assert set(recs) == {"bomb"}, sorted(recs)
    rec = recs["bomb"]
    assert rec["outcome"] == "invalid" and statuses(rec) == {"not_graded"}, why(recs)
    sentence = "the submission unpacks to more than the 1 MB the grader unpacks per student"
    assert rec["problem"].startswith(sentence) and "every level" in rec["problem"], rec["problem"]
    assert all(e["message"] == f"not graded: {rec['problem']}." for e in rec["exercises"])
    assert sentence[4:] in (out / "feedback" / "bomb" / "feedback.md").read_text()


def _kept(n, t):
    # YOUR CODE HERE
    return (n + t - 1) // t


def _untouched(n, t):
    pass  # YOUR CODE HERE


def _kernel_kept(a, b, out):
    i = cuda.grid(1)  # YOUR CODE HERE
    if i < out.size:
        out[i] = a[i] + b[i]


def _kernel_untouched(a, b, out):
    """Add a and b."""
    ...  # YOUR CODE HERE


def test_placeholder_comment_left_in_a_real_answer_is_graded():
    assert not E.not_attempted(_kept) and nb01.blocks_per_grid.grade(_kept).status == "passed"
    assert nb02.vector_add.grade(cuda.jit(_kernel_kept)).status == "passed"
    assert E.not_attempted(_untouched) and nb01.blocks_per_grid.grade(_untouched).status == "not_attempted"
    assert nb02.vector_add.grade(cuda.jit(_kernel_untouched)).status == "not_attempted"
    assert E.not_attempted("# YOUR CODE HERE") and not E.not_attempted("x = 1  # YOUR CODE HERE")


def test_ctrl_c_stops_at_once_keeps_records_and_resume_finishes(tmp_path):
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    flag = tmp_path / "slept"
    slow = f"import os, time\nif not os.path.exists({str(flag)!r}):\n    open({str(flag)!r}, 'w').close()\n"
    slow += "    time.sleep(3600)"  # waited for, the test would hang (and pytest-timeout fail it)
    for name, text in {"a": nb_text(), "b": nb_text(fx.perfect_cells(extra=[slow])), "c": nb_text()}.items():
        (subs / name).mkdir(parents=True)
        (subs / name / f"{fx.STEM}.ipynb").write_text(text)
    # --no-sandbox: the slow cell leaves a flag in tmp_path so that it sleeps only once, and a
    # sandbox (rightly) keeps it from writing there; killing sandboxed children is the watchdog's
    # kill, covered by the hanging notebooks in test_grades.py.
    argv = [str(subs), "--out", str(tmp_path / "out"), "--course", str(course), "-j2", "--mode", "cpu", "--no-sandbox"]
    argv += ["--cell-timeout", "120", "--grade-timeout", "120", "--timeout", "300", "--salt", SALT]  # slow CI: room
    rc, _, err = run_cli("interrupt", argv)  # a fresh process: Ctrl-C at the first finished submission
    assert rc == 130 and "interrupted" in err, err[-2000:]
    kept = read_records(tmp_path / "out")
    assert set(kept) == {"a"} and statuses(kept["a"]) == {"passed"}, why(kept)
    assert run_cli("plain", [*argv, "--resume"])[0] == 0
    assert run_cli("plain", [*argv[:2], str(tmp_path / "fresh"), *argv[3:]])[0] == 0

    def grades(out):
        rows = csv.DictReader((tmp_path / out / "grades.csv").open())
        return sorted((r["student"], r["exercise"], r["status"], r["points"], r["seed"]) for r in rows)

    assert grades("out") == grades("fresh") and len(grades("out")) == 3 * len(fx.EXERCISES)
