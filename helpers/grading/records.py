"""Turning what a grading child reported (its messages to the judge, output, exit code) into the
record of one submission: per-exercise outcomes, skipped cells, and why anything was not graded.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

HEAD_BYTES, TAIL_BYTES = 4096, 12288  # of a child's output kept: its head and its tail


def collect(record, attempt, by_id, run, skip, first_line):
    if attempt.forged:
        record["review"].append(f"{attempt.forged} line(s) of results were not written by the grader (forged?)")
    if attempt.flooded:
        record["results_flooded"] = attempt.flooded
        record["review"].append(f"results flooded: {attempt.flooded}")
    for m in attempt.lines:
        kind = m.get("type")
        if kind == "result" and m.get("exercise"):
            old = by_id.get(m["exercise"])
            if run > 0 and old is not None and old.get("run", 0) < run and not _later_check(m, old):
                continue  # graded in an earlier, fuller run: that grade stands
            if run > 0 and skip:
                skipped = ", ".join(str(c + 1) for c in skip)
                m["message"] = (
                    f"{m.get('message', '')} (graded in a further run without cell {skipped}, which stopped "
                    "the notebook)"
                )
            elif run > 0:
                m["message"] = f"{m.get('message', '')} (graded in a further run)"
            by_id[m["exercise"]] = {**m, "run": run}
        elif kind == "cell_error" and run == 0:
            record["cell_errors"].append(
                {"cell": m["cell"] + 1, "error": m.get("error", ""), "first_line": first_line.get(m["cell"], "")}
            )
        elif kind == "device" and "device" not in record:
            record["device"] = {k: v for k, v in m.items() if k != "type"}
        elif kind == "tamper" and record["tamper"] is None:
            cell = m.get("cell")
            record["tamper"] = {"cell": None if cell is None else cell + 1, "what": m.get("what", [])}


def _later_check(new: dict, old: dict) -> bool:
    """True when ``new`` grades a check made after ``old``'s (a later cell, or the end of the
    notebook after a cell): the last check counts, also when a further run got past the cell that
    stopped an earlier one. An error the grader gave (no cell) always stands."""
    if "cell" not in old or "cell" not in new:
        return False
    a, b = new.get("cell"), old.get("cell")
    end = float("inf")
    a = a if isinstance(a, int) and not isinstance(a, bool) else end
    b = b if isinstance(b, int) and not isinstance(b, bool) else end
    return a > b


def output_text(attempt) -> str:
    """The output as the student would read it: all of it, or its head and tail around a gap."""
    n = attempt.output_bytes
    if n <= TAIL_BYTES:
        data = attempt.tail
    elif n <= HEAD_BYTES + TAIL_BYTES:
        data = attempt.head + attempt.tail[-(n - len(attempt.head)) :]
    else:
        gap = n - len(attempt.head) - len(attempt.tail)
        data = attempt.head + f"\n[... {gap:,} bytes of output left out ...]\n".encode() + attempt.tail
    return data.decode("utf-8", "replace")


def finish(record, nb, by_id, started) -> dict:
    """One row per course exercise, in notebook order; whatever was not graded says why."""
    tamper = record["tamper"]
    for spec in nb.exercises:
        r = by_id.get(spec.id)
        if tamper:
            where = f" in cell {tamper['cell']}" if tamper.get("cell") else ""
            would = (
                f" Without it the grader's result was: {r['status']}." if r and r.get("status") != "tampering" else ""
            )
            row = {
                "status": "tampering",
                "message": f"no credit: the notebook changed the grading machinery{where} "
                f"({'; '.join(tamper['what'])}).{would}",
                "seed": r.get("seed") if r else None,
            }
        elif r is not None:
            row = {k: r.get(k) for k in ("status", "message", "seed", "picture", "graded_from", "metrics", "review")}
        else:
            row = {"status": "not_graded", "message": why_not_graded(record), "seed": None}
        record["exercises"].append({"exercise": spec.id, **{k: v for k, v in row.items() if v is not None}})
        if r and r.get("review"):
            record["review"].append(f"{spec.id}: the answer is {r['review']}")
        if r and r.get("grader_problem"):
            record["grader_problem"] = r.get("message")
    record["seconds"] = round(time.time() - started, 2)
    return record


def why_not_graded(record) -> str:
    if record["outcome"] in ("missing", "invalid"):
        return f"not graded: {record['problem']}."
    if record.get("results_flooded"):
        return f"not graded: {record['results_flooded']}."
    runs = record["runs"]
    failure = next((r["failure"] for r in runs if r["failure"]), None)
    if failure:
        return f"not graded: {failure}, before this exercise could be graded."
    return "not graded: the grader received no result for this exercise."


def copy_pictures(record: dict, dest: Path, scratch: Path) -> None:
    """Copy each exercise's picture next to the student's feedback; the record keeps the new name.
    Only files the grader wrote in this submission's scratch folder are copied."""
    root = scratch.resolve()
    for row in record["exercises"]:
        src = row.pop("picture", None)
        if not src or root not in Path(src).resolve().parents:
            continue
        try:
            dest.mkdir(parents=True, exist_ok=True)
            target = dest / f"{row['exercise']}.png"
            shutil.copyfile(src, target)
            row["picture"] = target.name
        except OSError:
            pass
