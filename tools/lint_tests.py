"""Lint for the test suite: no test measures how long something took.

A busy CI machine makes anything slower, so a test that compares elapsed time with a constant
is a coin toss there, and a red CI lands nothing. Speed targets live in bench/ (with a row in
the README's measured table); a hang is stopped by the per-test timeout (pytest-timeout).

Two rules over every Python file under tests/:
1. No clock is read (time.time, perf_counter, monotonic, process_time, thread_time, their _ns
   forms, datetime.now), except in the harness files listed in WAITS, which wait for
   something to happen with a deadline and never assert on the time they measured.
2. No assertion compares a duration with anything: an operand that subtracts two timestamps
   (names such as started, finished, t0, *_at, *_time) or names a duration (elapsed, seconds,
   duration, wall) is refused.

    python tools/lint_tests.py [ROOT]     exit 1 and one line per finding when any are found
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

CLOCKS = {"time", "perf_counter", "monotonic", "process_time", "thread_time"}
CLOCKS |= {f"{c}_ns" for c in CLOCKS}
# Harness code that waits with a deadline (a hang detector), never asserting on the time it took.
WAITS = {
    "tests/fuzz/kernel.py": "a cell's output is collected until the cell ends or its hang deadline passes",
    "tests/browser/jlab.py": "JupyterLab is polled until it is ready or its start deadline passes",
    "tests/browser/test_make_lab.py": "waits for `make lab` to write its URL file, with a deadline",
}
TIMESTAMP = re.compile(r"(^t\d?$|start|started|finish|finished|_at$|_time$|^now$|^then$|^begin|^end$)", re.I)
DURATION = re.compile(r"(elapsed|seconds|duration|wall|took)", re.I)


def _names(node: ast.AST) -> list[str]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.append(n.id)
        elif isinstance(n, ast.Attribute):
            out.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.append(n.value)  # rec["finished_at"]
    return out


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
    if name in CLOCKS and base in ("time", ""):
        return name != "time" or base == "time"  # a bare time() is only a clock when it is time.time()
    return name in ("now", "utcnow") and "datetime" in _names(f.value)


def _timing_operand(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub):
            if any(TIMESTAMP.search(x) for x in _names(n.left)) and any(TIMESTAMP.search(x) for x in _names(n.right)):
                return True
        if _is_clock_call(n):
            return True
    return any(DURATION.search(x) for x in _names(node) if not x.startswith("test_"))


def findings(path: Path, rel: str) -> list[str]:
    tree = ast.parse(path.read_text(), rel)
    out = []
    if rel not in WAITS:
        for node in ast.walk(tree):
            if _is_clock_call(node):
                out.append(f"{rel}:{node.lineno}: reads a clock: a test asserts behaviour, bench/ measures time")
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                ops = [cmp.left, *cmp.comparators]
                if any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in cmp.ops) and any(
                    _timing_operand(o) for o in ops
                ):
                    out.append(f"{rel}:{node.lineno}: an assertion compares a duration with a limit")
                    break
    return out


def lint(root: Path) -> list[str]:
    tests = root / "tests"
    out = []
    for path in sorted(tests.rglob("*.py")):
        out += findings(path, path.relative_to(root).as_posix())
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    found = lint(root)
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} timing finding(s): move the target to bench/ and assert the behaviour (tools/lint_tests.py)"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
