#!/usr/bin/env python3
"""How long the batch grader takes: N submissions of one course notebook, CPU mode by default.

    python bench/grade_speed.py                 # 50 submissions of notebook 02, -j2, CPU mode
    python bench/grade_speed.py --n 20 -j 4 --notebook 03
    python bench/grade_speed.py --distinct      # every submission's kernels differ, as a class's do

Submissions are made from the real notebooks: a third are the solution notebook (full marks),
a third the learner's notebook as handed out (nothing attempted), a third the solution with a
wrong index in every kernel (failed checks, pictures drawn). By default the solutions are all the
same text, so the judge compiles each kernel once per run and answers the rest from its cache;
``--distinct`` puts a comment naming the submission in every function, so no compile answer is
shared, as in a class where everyone writes their own. Not a test: it prints a line for the
README and exits 0 whenever the grader did.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def signed(text: str, i: int) -> str:
    """The notebook with ``# submission i`` as the first line of every function: the same code, another text."""
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = re.sub(
                r"^(\s*)def \w+\(.*\):\n", lambda m: f"{m.group(0)}{m.group(1)}    # submission {i}\n", src, flags=re.M
            )
    return json.dumps(nb)


def make_submissions(folder: Path, n: int, number: str, distinct: bool = False) -> str:
    sol = next(ROOT.glob(f"solutions/{number}_*.ipynb"))
    blank = ROOT / "notebooks" / sol.name
    wrong = sol.read_text().replace("cuda.grid(1)", "cuda.threadIdx.x")
    for i in range(n):
        d = folder / f"student{i:03d}"
        d.mkdir(parents=True)
        text = (sol.read_text(), blank.read_text(), wrong)[i % 3]
        (d / sol.name).write_text(signed(text, i) if distinct else text)
    return sol.stem


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50)
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--notebook", default="02")
    p.add_argument("--mode", default="cpu", choices=("cpu", "gpu"))
    p.add_argument("--distinct", action="store_true", help="no two submissions' kernels are the same text")
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    try:
        stem = make_submissions(tmp / "subs", args.n, args.notebook, args.distinct)
        env = {**os.environ, "COURSE_MODE": args.mode}
        t0 = time.perf_counter()
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "helpers.grade",
                str(tmp / "subs"),
                "--out",
                str(tmp / "out"),
                "-j",
                str(args.jobs),
                "--mode",
                args.mode,
                "--salt",
                "bench",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        if run.returncode != 0:
            print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
            return run.returncode
        grades = json.loads((tmp / "out" / "grades.json").read_text())["grades"]
        statuses = Counter(g["status"] for g in grades)
        cores = os.cpu_count()
        kernels = ", distinct kernels" if args.distinct else ""
        print(
            f"graded {args.n} submissions of {stem} ({len(grades)} exercise results) in {wall:.1f} s "
            f"with -j{args.jobs} on {cores} cores, {args.mode.upper()} mode{kernels}: "
            f"{wall / args.n:.2f} s per submission; "
            f"statuses {dict(statuses)}"
        )
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
