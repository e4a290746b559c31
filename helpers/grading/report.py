"""What the grader writes: grades.csv, grades.json, totals.csv, one feedback page per student, and
the terminal summary (the class report and the LMS files are ``class_report`` and ``lms``).
Everything is rebuilt from the per-submission records in OUT/records/, so it can be rewritten
after every submission (nothing is lost if the run stops) and by --resume.
Points are applied here, from the exercise's ``points`` (or a --points override): a record holds
statuses only, and the grader gives full points for "passed" and none otherwise.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path

from .._files import atomic_write
from .devices import summary_lines as gpu_lines

STATUS_WORDS = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "not_attempted": "not attempted",
    "unchecked": "unchecked",
    "not_graded": "not graded",
    "tampering": "tampering",
}
MARK = {
    "passed": "✅",
    "failed": "❌",
    "error": "❌",
    "not_attempted": "⬜",
    "unchecked": "❔",
    "not_graded": "⚠️",
    "tampering": "⛔",
}


def scored(records: list, max_points: dict) -> list[dict]:
    """One row per student x exercise, with points."""
    rows = []
    for rec in records:
        for ex in rec["exercises"]:
            top = float(max_points.get(ex["exercise"], 1.0))
            rows.append(
                {
                    "student": rec["student"],
                    "notebook": rec["notebook"],
                    "exercise": ex["exercise"],
                    "points": top if ex["status"] == "passed" else 0.0,
                    "max_points": top,
                    "status": ex["status"],
                    "message": ex.get("message", ""),
                    "seed": ex.get("seed"),
                    "outcome": rec["outcome"],
                    "review": "; ".join(rec.get("review", [])),
                }
            )
    return sorted(rows, key=lambda r: (r["student"], r["notebook"]))


def write_tables(out: Path, records: list, max_points: dict, manifest: dict) -> list[dict]:
    rows = scored(records, max_points)
    buf = io.StringIO()
    fields = [
        "student",
        "notebook",
        "exercise",
        "points",
        "max_points",
        "status",
        "message",
        "seed",
        "outcome",
        "review",
    ]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "points": f"{r['points']:g}", "max_points": f"{r['max_points']:g}"})
    atomic_write(out / "grades.csv", buf.getvalue())
    totals = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        totals[r["student"]][0] += r["points"]
        totals[r["student"]][1] += r["max_points"]
    buf = io.StringIO()
    buf.write("student,points,max_points\n")
    for student in sorted(totals):
        p, m = totals[student]
        buf.write(f"{_csv_cell(student)},{p:g},{m:g}\n")
    atomic_write(out / "totals.csv", buf.getvalue())
    doc = {
        "run": manifest,
        "grades": rows,
        "submissions": [{k: v for k, v in rec.items() if k not in ("exercises", "output")} for rec in records],
    }
    atomic_write(out / "grades.json", json.dumps(doc, indent=1, default=str))
    return rows


def _csv_cell(s: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([s])
    return buf.getvalue()


def _md(text) -> str:
    """Plain text safe inside Markdown (no HTML, no links made by the student)."""
    s = str(text).replace("\r", "")
    for ch in "\\`*_[]<>|#":
        s = s.replace(ch, "\\" + ch)
    return s.replace("\n", "  \n")


def feedback(records: list, max_points: dict) -> str:
    """One student's feedback page (Markdown), all their notebooks."""
    student = records[0]["student"]
    total = sum(
        float(max_points.get(e["exercise"], 1)) for r in records for e in r["exercises"] if e["status"] == "passed"
    )
    top = sum(float(max_points.get(e["exercise"], 1)) for r in records for e in r["exercises"])
    out = [f"# Feedback for {_md(student)}", "", f"**Total: {total:g} / {top:g} points**", ""]
    for rec in sorted(records, key=lambda r: r["notebook"]):
        out += [f"## {_md(rec['notebook'])}", ""]
        if rec["outcome"] != "completed" and rec.get("problem"):
            out += [f"> ⚠️ {_md(rec['problem'][0].upper() + rec['problem'][1:])}.", ""]
        for note in rec.get("notes", []):
            out += [f"> {_md(note)}", ""]
        out += ["| | Exercise | Points | Result |", "|---|---|---|---|"]
        for e in rec["exercises"]:
            m = float(max_points.get(e["exercise"], 1))
            p = m if e["status"] == "passed" else 0
            out.append(
                f"| {MARK.get(e['status'], '')} | {_md(e['exercise'])} | {p:g} / {m:g} | {_md(e.get('message', ''))} |"
            )
        out.append("")
        for e in rec["exercises"]:
            extra = []
            if e.get("seed") is not None and e["status"] in ("failed", "error"):
                extra.append(f"Repeat this check in your notebook with `{e['exercise']}.check(..., seed={e['seed']})`.")
            if e.get("picture"):
                extra.append(f"![{_md(e['exercise'])}]({e['picture']})")
            if extra:
                out += [f"### {_md(e['exercise'])}", "", *extra, ""]
        for s in rec.get("skipped_cells", []):
            out += [
                f"- Cell {s['cell']} (`{_code(s['first_line'])}`) {_md(s['why'])}; the notebook was run again "
                "without it.",
                "",
            ]
        if rec.get("cell_errors"):
            out += ["### Cells that failed when the grader ran your notebook", ""]
            out += [
                f"- cell {c['cell']} (`{_code(c['first_line'])}`): {_md(c['error'])}" for c in rec["cell_errors"][:20]
            ]
            out.append("")
        if rec.get("output", "").strip():
            tail = rec["output"][-3000:]
            out += [
                "<details><summary>The end of your notebook's output</summary>",
                "",
                "```text",
                tail.replace("```", "'''"),
                "```",
                "",
                "</details>",
                "",
            ]
    return "\n".join(out)


def _code(s) -> str:
    return str(s).replace("`", "'")


def write_feedback(out: Path, records: list, max_points: dict, student: str | None = None) -> None:
    by_student = defaultdict(list)
    for rec in records:
        by_student[rec["student"]].append(rec)
    for name, recs in by_student.items():
        if student is None or name == student:
            atomic_write(out / "feedback" / name / "feedback.md", feedback(recs, max_points))


def summary(records: list, max_points: dict, out: Path, seconds: float, warnings: list, sandbox: str = "") -> str:
    rows = scored(records, max_points)
    per_ex = defaultdict(lambda: defaultdict(int))
    for r in rows:
        per_ex[r["exercise"]][r["status"]] += 1
    lines = [
        "",
        f"Graded {len(records)} submission(s) of {len({r['student'] for r in records})} student(s) in {seconds:.1f} s.",
        *([sandbox] if sandbox else []),
        "",
    ]
    cols = ["passed", "failed", "error", "not_attempted", "unchecked", "not_graded", "tampering"]
    width = max([len("exercise"), *(len(k) for k in per_ex)])
    lines.append(f"{'exercise':{width}}  " + "  ".join(f"{STATUS_WORDS[c]:>13}" for c in cols))
    for ex in sorted(per_ex):
        lines.append(f"{ex:{width}}  " + "  ".join(f"{per_ex[ex][c]:>13}" for c in cols))
    trouble = [
        rec
        for rec in records
        if rec["outcome"] != "completed" or rec.get("tamper") or rec.get("review") or rec.get("skipped_cells")
    ]
    if trouble:
        lines += ["", "Look at these:"]
        for rec in trouble:
            what = []
            if rec["outcome"] != "completed":
                what.append(f"{rec['outcome']}: {rec.get('problem')}")
            for sk in rec.get("skipped_cells", []):
                what.append(f"cell {sk['cell']} skipped in a second run: {sk['why']}")
            if rec.get("tamper"):
                what.append("tampering: " + "; ".join(rec["tamper"]["what"]))
            if rec.get("review"):
                what.append("review: " + "; ".join(rec["review"][:3]))
            lines.append(f"  {rec['student']}/{rec['notebook']}: " + " | ".join(what))
    lines += gpu_lines(records)
    for w in warnings:
        lines.append(f"WARNING: {w}")
    lines += [
        "",
        f"report.html (open it in a browser), grades.csv, totals.csv, grades.json, canvas.csv, moodle.csv and "
        f"feedback/<student>/feedback.md are in {out}",
    ]
    return "\n".join(lines)
