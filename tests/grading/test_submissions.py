"""Finding and unpacking submissions (helpers/grading/submissions.py) without running any: ids
that come from each student's own name (issue 29 item 6), one unpacking budget per upload with
nested zips bounded in depth (item 7), and a size limit on a notebook's code, not its outputs
(item 5). The batch grader's end-to-end runs of the same cases are in test_robustness.py and
test_grades.py."""

import hashlib
import itertools
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

from helpers.grading import submissions
from helpers.grading.course import load_course
from helpers.grading.submissions import discover, read_cells
from submission_sets import fixtures as fx

LEE = ("Lee Kim", "Lee_Kim", "Lee_Kim_2")


def _hashed(name: str, base: str) -> str:
    return f"{base}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _class(folder: Path, names) -> Path:
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(fx.cells())))
    return folder


def _ids(tmp_path: Path, names, tag: str) -> tuple[dict, list]:
    """{original name: id} as discover gives them for a class of these folders, and its notes."""
    course = load_course(fx.make_course(tmp_path / "course"))
    subs, notes = discover(_class(tmp_path / tag, names), course, tmp_path / f"scratch-{tag}")
    return {Path(s.path).parent.name: s.student for s in subs}, notes


def test_an_id_comes_from_its_own_name_whatever_else_was_handed_in(tmp_path):
    ids, notes = _ids(tmp_path, LEE, "all")
    assert ids == {"Lee_Kim": "Lee_Kim", "Lee_Kim_2": "Lee_Kim_2", "Lee Kim": _hashed("Lee Kim", "Lee_Kim")}
    # The name that already is the id keeps it, and nobody takes the id of another name.
    for i, names in enumerate(itertools.chain.from_iterable(itertools.combinations(LEE, k) for k in (1, 2))):
        alone, _ = _ids(tmp_path, names, f"some{i}")
        for name in names:
            if name != "Lee Kim" or "Lee_Kim" in names:
                assert alone[name] == ids[name], (names, alone)
    collisions = [n for n in notes if "become the id" in n]
    assert collisions == [
        f"the names 'Lee Kim' and 'Lee_Kim' both become the id Lee_Kim; graded as 2 students: "
        f"'Lee Kim' as {_hashed('Lee Kim', 'Lee_Kim')}, 'Lee_Kim' as Lee_Kim"
    ]


def test_colliding_ids_never_depend_on_the_order_found():
    names = ["Lee  Kim", "lee_kim", "Lee_Kim", "Lee Kim", _hashed("Lee Kim", "Lee_Kim")]
    first, text = submissions.student_ids(names)
    for order in itertools.permutations(names):
        assert submissions.student_ids(order) == (first, text)
    assert len({i.lower() for i in first.values()}) == len(names)  # distinct, also on a case-blind disk
    # A folder named like another name's hashed id keeps its name; the other gets a longer hash.
    assert first[_hashed("Lee Kim", "Lee_Kim")] == _hashed("Lee Kim", "Lee_Kim")
    assert first["Lee Kim"].startswith(_hashed("Lee Kim", "Lee_Kim")) and len(first["Lee Kim"]) == len("Lee_Kim_") + 16
    # No name of the three that differ only in case or spacing is the id itself alone: all get hashes.
    assert {first[n] for n in ("Lee  Kim", "lee_kim", "Lee_Kim")} == {
        _hashed("Lee  Kim", "Lee_Kim"),
        _hashed("lee_kim", "lee_kim"),
        _hashed("Lee_Kim", "Lee_Kim"),
    }
    assert "all become the id Lee_Kim" in text[0] and "'lee_kim' as lee_kim_" in text[0]


def _notebook(pad: int) -> str:
    """A notebook padded with spaces to ``pad`` bytes: a megabyte of it compresses to a kilobyte."""
    text = json.dumps(fx.notebook(fx.perfect_cells()))
    return text + " " * max(pad - len(text), 0)


def _nested_zip(path: Path, levels: list) -> Path:
    """A zip whose member ``inner.zip`` holds the next level: ``levels`` are {name: text} per level."""
    inner, work = None, Path(tempfile.mkdtemp(prefix="nested-zip-"))
    for i, members in enumerate(reversed(levels)):
        buf = work / f"level{len(levels) - i}.zip"
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in members.items():
                z.writestr(name, text)
            if inner is not None:
                z.write(inner, "inner.zip")
        inner = buf
    shutil.move(inner, path)
    shutil.rmtree(work)
    return path


def test_everything_one_upload_unpacks_comes_out_of_one_budget(tmp_path, monkeypatch):
    """Three levels of zips, each far under the cap on its own, together past it: nothing of that
    student is graded, with one sentence why, and their unpacked files are gone at once."""
    course = load_course(fx.make_course(tmp_path / "course"))
    subs = _class(tmp_path / "subs", ["fine"])
    levels = [{f"{fx.STEM}.ipynb": _notebook(300_000)}, {"copy.ipynb": _notebook(300_000)}]
    levels.append({"more.ipynb": _notebook(300_000)})
    bomb = _nested_zip(subs / "bomb.zip", levels)
    assert bomb.stat().st_size < 20_000
    monkeypatch.setattr(submissions, "MAX_UPLOAD_BYTES", 800 << 10, raising=False)  # each zip holds < 310 kB
    scratch = tmp_path / "scratch"
    found, notes = discover(subs, course, scratch)
    by = {s.student: s for s in found}
    assert by["fine"].path is not None and by["fine"].problem is None
    assert by["bomb"].path is None, by["bomb"]
    why = by["bomb"].problem
    assert why and "unpacks to more than the 0.78125 MB" in why and "every level" in why, why
    left = [p for p in scratch.rglob("*.ipynb")]
    assert left == [], left
    # The same upload under a budget it fits: every level is unpacked and found.
    monkeypatch.setattr(submissions, "MAX_UPLOAD_BYTES", 2_000_000, raising=False)
    found, _ = discover(subs, course, tmp_path / "scratch2")
    bomb_sub = next(s for s in found if s.student == "bomb")
    assert bomb_sub.path is not None and "also found: copy.ipynb, more.ipynb" in " ".join(bomb_sub.notes)


def test_zips_nested_too_deep_are_not_unpacked(tmp_path):
    course = load_course(fx.make_course(tmp_path / "course"))
    subs = tmp_path / "subs"
    _class(subs, ["fine"])
    depth = getattr(submissions, "MAX_ZIP_DEPTH", 3)
    levels = [{} for _ in range(depth)] + [{f"{fx.STEM}.ipynb": _notebook(0)}]  # a notebook one level too deep
    (subs / "folder").mkdir()
    _nested_zip(subs / "folder" / "all.zip", levels)  # a zip inside a folder is level 1
    _nested_zip(subs / "zipped.zip", levels)  # and so is the zip handed in
    found, notes = discover(subs, course, tmp_path / "scratch")
    by = {s.student: s for s in found}
    assert by["folder"].path is None and by["zipped"].path is None, found
    assert by["fine"].path is not None
    assert sum(f"nested more than {depth} deep" in n for n in notes) == 2, notes
    levels = levels[1:]  # one level less: found
    _nested_zip(subs / "folder" / "all.zip", levels)
    _nested_zip(subs / "zipped.zip", levels)
    found, _ = discover(subs, course, tmp_path / "scratch2")
    assert all(s.path is not None for s in found), found


def test_the_size_limit_is_on_the_code_not_the_outputs(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_CODE_BYTES", 1 << 20, raising=False)
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", 1 << 20, raising=False)  # the old name, if any
    cells = fx.perfect_cells()
    cells[2]["outputs"] = [{"output_type": "display_data", "data": {"image/png": "A" * (3 << 20)}, "metadata": {}}]
    path = tmp_path / "plots.ipynb"
    path.write_text(json.dumps(fx.notebook(cells)))
    got, problem = read_cells(path)
    assert problem is None and [c.get("source") for c in got] == [c["source"] for c in cells]
    assert all("outputs" not in c for c in got)
    cells[2]["source"] = "x = 1\n" * (400 << 10)  # 2.4 MB of code
    path.write_text(json.dumps(fx.notebook(cells)))
    got, problem = read_cells(path)
    assert got is None and "code is 2 MB, more than the 1 MB" in problem, problem


def test_an_upload_budget_must_be_positive(tmp_path):
    from submission_sets.graded import grade

    course = fx.make_course(tmp_path / "course")
    run = grade(_class(tmp_path / "subs", ["a"]), "--out", tmp_path / "o", "--course", course, "--max-upload-mb", "0")
    assert run.returncode == 2 and "--max-upload-mb 0: must be more than 0" in run.stderr, run.stderr
