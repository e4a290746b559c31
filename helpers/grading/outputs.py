"""Every file of OUT written from the finished records, and the terminal summary: grades.csv,
totals.csv, grades.json and the feedback (``report``), canvas.csv and moodle.csv (``lms``),
report.html (``class_report``). One place, so a single-host run (``cli``) and the merge of a
Slurm array's shards (``slurm``) write the same files the same way.
"""

from __future__ import annotations

from pathlib import Path

from . import class_report, lms, report


def finish(
    out: Path,
    records,
    max_points: dict,
    manifest: dict,
    warnings: list,
    lms_columns: str,
    roster,
    seconds: float,
    box: str,
) -> list[str]:
    """Write everything and print the summary; returns the course problems the records name and
    any failure to write the LMS files or the report (each makes the run's exit status 1)."""
    ordered = sorted(records, key=lambda r: (r["student"], r["notebook"]))
    report.write_tables(out, ordered, max_points, manifest)
    report.write_feedback(out, ordered, max_points)
    problems = sorted({r["grader_problem"] for r in ordered if r.get("grader_problem")})
    warnings = [*warnings, *(f"course problem: {p}" for p in problems)]
    try:  # the grades are written by now: a failure here must not hide them
        warnings += lms.write(out, ordered, max_points, lms_columns, roster).notes
        class_report.write(out, ordered, max_points, {k: v for k, v in manifest.items() if k != "salt"}, warnings)
    except Exception as e:
        problems.append(f"the LMS files or report.html could not be written ({type(e).__name__}: {e})")
        warnings.append(f"grader problem: {problems[-1]}; please report it")
    print(report.summary(ordered, max_points, out, seconds, warnings, box))
    return problems
