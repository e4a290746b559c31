"""Notebook 13's tools in CPU mode: bench/multi_gpu.py (its split and its table; it refuses CPU mode in one
line), tools/verify_multigpu_grading.py (the submissions it builds and every check it makes, on fake
records), and the record file's sections. The GPU runs themselves are the lead's (docs/multi-gpu-record.md).
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import helpers  # noqa: F401
from helpers._files import replace_section

ROOT = Path(__file__).resolve().parents[2]


def _load(rel):
    spec = importlib.util.spec_from_file_location(Path(rel).stem, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _load("bench/multi_gpu.py")
verify = _load("tools/verify_multigpu_grading.py")


@pytest.mark.parametrize("n", [0, 1, 3, 10, 1001])
@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_bench_chunks_cover_without_overlap_and_balance(n, k):
    parts = bench.chunks(n, k)
    assert len(parts) == k and parts[0][0] == 0 and parts[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
    sizes = [hi - lo for lo, hi in parts]
    assert min(sizes) >= 0 and max(sizes) - min(sizes) <= 1


def _result(n_dev):
    rows = [
        {
            "devices": k,
            "reduce_ms": 1.0 / k,
            "reduce_gbps": 4000.0 * k,
            "speedup": float(k),
            "efficiency": 1.0,
            "correct": k != 3,
            "h2d_gbps": 50.0 * k,
            "p2p_gbps": None if k == 1 else 300.0,
            "p2p_route": None if k == 1 else "peer",
        }
        for k in range(1, n_dev + 1)
    ]
    peer = [[i != j for j in range(n_dev)] for i in range(n_dev)]
    machine = {"devices": [{"id": d, "name": "H200"} for d in range(n_dev)], "date": "2026-11-23", "python": "3.12"}
    settings = {"n": 2**30, "repeats": 30, "copy_mb": 1024, "copy_repeats": 10}
    return {"machine": machine, "settings": settings, "peer": peer, "rows": rows}


def test_bench_table_has_a_row_per_device_count_and_says_what_is_missing():
    text = bench.render(_result(3))
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [r.split("|")[1].strip() for r in rows] == ["1", "2", "3"]
    assert "| 1 | 1.000 | 4000 | 1.00 | 100% | yes | 50 | — | — |" in rows[0]
    assert "**no**" in rows[2]  # a wrong result is shown, never hidden
    assert "Peer access (deviceCanAccessPeer): 0→1, 0→2, 1→0, 1→2, 2→0, 2→1." in text
    one = bench.render(_result(1))
    assert "One GPU: the table has one row" in one


def _cpu(args, script):
    env = {**os.environ, "COURSE_MODE": "cpu"}
    return subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("script", ["bench/multi_gpu.py", "tools/verify_multigpu_grading.py"])
def test_gpu_scripts_refuse_cpu_mode_in_one_line(script, tmp_path):
    r = _cpu(["--out", str(tmp_path / "o")] if script.startswith("bench") else [], script)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and ("needs a GPU" in lines[0] or "needs GPUs" in lines[0]), lines
    assert not (tmp_path / "o").exists()


def test_verify_builds_submissions_of_real_course_material(tmp_path):
    course, subs, expected = verify.build(tmp_path)
    assert (course / f"{verify.REAL}.ipynb").exists() and (course / "02_mini.ipynb").exists()
    assert sorted(p.name for p in subs.iterdir()) == sorted(expected)
    solved = json.loads((subs / "s6_solved" / f"{verify.REAL}.ipynb").read_text())
    assert any("BEGIN SOLUTION" in "".join(c["source"]) for c in solved["cells"])  # the solutions, not the handout
    assert expected["s1_hangs"]["nb02.vector_add"] == "error"


def _record(student, gpu, uuid, start, end, statuses, visible=None, count=1, nb="02_mini"):
    return {
        "student": student,
        "notebook": nb,
        "outcome": "completed",
        "gpu": gpu,
        "device": {"visible": gpu if visible is None else visible, "count": count, "name": "H200", "uuid": uuid},
        "started_at": start,
        "finished_at": end,
        "seconds": end - start,
        "exercises": [{"exercise": e, "status": s} for e, s in statuses.items()],
    }


def _good_run():
    expected = {"s1_hangs": {"a": "error"}, "s2": {"a": "passed"}, "s3": "passed"}
    records = {
        "s1_hangs": _record("s1_hangs", "0", "GPU-a", 0, 50, {"a": "error"}),
        "s2": _record("s2", "1", "GPU-b", 1, 5, {"a": "passed"}),
        "s3": _record("s3", "1", "GPU-b", 5, 9, {"a": "passed", "b": "passed"}),
    }
    stdout = "Graded 3 submission(s)\n\nGraded on 2 GPU(s):\n  GPU 0: s1_hangs/02_mini\n  GPU 1: s2/02_mini, s3/02_mini"
    return records, expected, stdout


def test_verify_accepts_a_run_that_proves_the_placement():
    records, expected, stdout = _good_run()
    assert verify.check(records, expected, stdout, ["0", "1"]) == []
    assert len(verify.table(records)) == 2 + len(records)


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda r: r.pop("s3"), "expected"),
        (lambda r: r["s2"]["exercises"][0].update(status="failed"), "s2: grades"),
        (lambda r: r["s2"]["device"].update(visible="0,1"), "CUDA_VISIBLE_DEVICES='0,1'"),
        (lambda r: r["s2"]["device"].update(count=2), "saw 2 GPUs"),
        (
            lambda r: [r[s].update(gpu="0", device={**r[s]["device"], "visible": "0"}) for s in ("s2", "s3")],
            "GPUs used",
        ),
        (lambda r: r["s3"]["device"].update(uuid="GPU-c"), "saw different devices"),
        (lambda r: [r[s]["device"].update(uuid="GPU-a") for s in ("s2", "s3")], "same physical GPU"),
        (lambda r: [r[s].update(finished_at=60) for s in ("s2", "s3")], "while the hanging kernel"),
        (lambda r: r["s2"].update(gpu=None), "names no GPU"),
    ],
)
def test_verify_names_each_failed_check(change, says):
    records, expected, stdout = _good_run()
    change(records)
    fails = verify.check(records, expected, stdout, ["0", "1"])
    assert any(says in f for f in fails), fails


def test_verify_needs_the_summary_to_name_every_submission():
    records, expected, stdout = _good_run()
    fails = verify.check(records, expected, stdout.replace("s3/02_mini", ""), ["0", "1"])
    assert fails == ["s3: the summary's GPU section does not name it"]


def test_record_sections_are_replaced_in_place(tmp_path):
    doc = tmp_path / "record.md"
    replace_section(doc, "grading", "grading v1", title="# Title")
    replace_section(doc, "bench", "bench v1")
    replace_section(doc, "grading", "grading v2")
    text = doc.read_text()
    assert text.startswith("# Title\n") and "grading v2" in text and "grading v1" not in text
    assert text.index("grading v2") < text.index("bench v1") and text.count("<!-- grading:start -->") == 1


def test_verify_reads_the_handed_in_notebook_of_each_student_not_the_missing_ones(tmp_path):
    """On the 2-GPU host the grader also wrote a 'missing' record (no GPU, no child) for each course
    notebook a student did not hand in; counting those failed a run that had proved the placement."""
    folder = tmp_path / "records"
    folder.mkdir()
    rows = [
        {"student": "s4_perfect", "notebook": "02_mini", "outcome": "completed", "gpu": "0"},
        {"student": "s4_perfect", "notebook": "02_first_kernels", "outcome": "missing", "gpu": None},
        {"student": "s6_solved", "notebook": "02_first_kernels", "outcome": "completed", "gpu": "1"},
    ]
    for k, rec in enumerate(rows):
        (folder / f"{k}.json").write_text(json.dumps(rec))
    got = verify.read_records(folder)
    assert {s: r["notebook"] for s, r in got.items()} == {"s4_perfect": "02_mini", "s6_solved": "02_first_kernels"}
