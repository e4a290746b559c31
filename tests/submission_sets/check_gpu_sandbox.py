"""Sandboxed grading on a GPU machine, checked end to end (the CPU suite cannot show the GPU).

    COURSE_MODE=gpu .venv/bin/python tests/submission_sets/check_gpu_sandbox.py DIR [gpu|cpu]

Builds the grader's mini course in DIR and grades, with ``--mode gpu -j 1``: a correct
notebook (plus a cell naming the GPU it sees), one that segfaults, one whose kernel writes far
out of bounds (an illegal address: the CUDA context is lost), and the hostile notebook of
tests/grading/test_sandbox.py. Prints the grader's sandbox line, what each check found, and
exits 0 only when every check holds. Without a sandbox the hostile checks fail, as they should.
"""

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from submission_sets import fixtures as fx  # noqa: E402

NAME_GPU = "from numba import cuda\nprint('GPU inside:', getattr(cuda.get_current_device(), 'name', 'the simulator'))"
FAR = (
    "import numpy as np\nfrom numba import cuda\n@cuda.jit\ndef far(a):\n    a[cuda.grid(1) + (1 << 30)] = 1.0\n"
    "d = cuda.device_array(16, np.float32)\nfar[1, 16](d)\ncuda.synchronize()"
)


def show_devices(folder: Path, mode: str) -> None:
    """What the sandbox shows of the GPU: device nodes, the driver's /proc entry, nvidia-smi."""
    from helpers.grading import sandbox

    box = sandbox.detect(gpu=mode == "gpu")
    print(box.describe())
    if box.kind is None or mode != "gpu":
        return
    work = folder / "probe"
    work.mkdir(exist_ok=True)
    script = "ls /dev/nvidia* /proc/driver/nvidia; nvidia-smi -L"
    r = subprocess.run(
        box.wrap(["/bin/sh", "-c", script], work),
        capture_output=True,
        text=True,
        env=box.env({"PATH": os.defpath}, work),
        timeout=120,
    )
    print(f"inside the sandbox (exit {r.returncode}):\n{r.stdout}{r.stderr}")


def main(folder: Path, mode: str = "gpu") -> int:
    folder.mkdir(parents=True, exist_ok=True)
    course, subs, out, cwd = (folder / n for n in ("course", "subs", "out", "grader_cwd"))
    fx.make_course(course)
    cwd.mkdir(exist_ok=True)
    victim = subs / "victim" / "notes.txt"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("mine\n")
    marker = f"sleeper-{uuid.uuid4().hex}"
    notebooks = {
        "correct": fx.perfect_cells(extra=[NAME_GPU]),
        "segfault": fx.perfect_cells(extra=[fx.SEGFAULT], extra_at=6),
        "illegal_address": fx.perfect_cells(extra=[FAR], extra_at=6),
        "hostile": fx.cells(extra=fx.hostile_cells(out, victim, cwd, marker)),
    }
    for name, cells in notebooks.items():
        (subs / name).mkdir(parents=True, exist_ok=True)
        (subs / name / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(cells)))
    show_devices(folder, mode)
    salt = "gpu-check-" + uuid.uuid4().hex[:6]
    argv = [sys.executable, "-m", "helpers.grade", subs, "--out", out, "--course", course, "-j", "1"]
    argv += ["--mode", mode, "--salt", salt, "--cell-timeout", "60"]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)  # keep a shadowing site
    env = {**os.environ, "PYTHONPATH": path, fx.SECRET: "instructor-secret"}
    run = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    print(run.stdout[-6000:], run.stderr[-3000:], sep="\n")
    time.sleep(2)
    if run.returncode != 0:
        print(f"FAIL: the grader exited with {run.returncode}")
        return 1
    recs = {json.loads(p.read_text())["student"]: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
    statuses = {k: {e["status"] for e in r["exercises"]} for k, r in recs.items() if k != "victim"}
    hostile = recs["hostile"]["output"]
    left = fx.alive(marker)
    checks = [
        ("the grader names its sandbox", any(ln.startswith("sandbox: ") for ln in run.stdout.splitlines())),
        (f"the correct notebook gets full marks ({mode} mode)", statuses["correct"] == {"passed"}),
        ("numba.cuda is usable inside", "GPU inside:" in recs["correct"]["output"]),
        ("a segfault costs one cell", statuses["segfault"] == {"passed"} and bool(recs["segfault"]["skipped_cells"])),
        ("an illegal address costs one cell", statuses["illegal_address"] == {"passed"}),
        *[(f"attack {a} is blocked", f"BLOCKED:{a}" in hostile and f"LEAK:{a}" not in hostile) for a in "acde"],
        ("no secret or salt reaches the student", "instructor-secret" not in hostile and salt not in hostile),
        ("no process outlives its submission", not left),
        (
            "grades.csv and another student's folder untouched",
            "PWNED" not in (out / "grades.csv").read_text() and victim.read_text() == "mine\n",
        ),
    ]
    for what, ok in checks:
        print(("PASS " if ok else "FAIL ") + what)
    for pid in left:  # only the sleeper this script's notebook started
        os.kill(pid, 9)
    for name in ("segfault", "illegal_address"):
        print(f"{name}: {recs[name]['skipped_cells']} {recs[name]['cell_errors']}")
    print(next((ln for ln in recs["correct"]["output"].splitlines() if "GPU inside" in ln), "no GPU line"))
    print("hostile output:\n" + hostile[-3000:])
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["gpu"], ["cpu"]):
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]).resolve(), *sys.argv[2:]))
