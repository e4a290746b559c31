"""The class report's numbers, computed from the same rows as grades.csv (``report.scored``):
per exercise the statuses and the commonest causes of failure, per student their totals and
flags, what a human should look at, and the run's facts. No HTML here (``class_report`` draws it).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .causes import MAX_EXAMPLE, Redactor, family, vocabulary
from .devices import by_gpu as gpu_groups
from .devices import problems as gpu_problems
from .report import scored

STATUSES = ("passed", "failed", "error", "not_attempted", "unchecked", "not_graded", "tampering")
# The statuses whose messages say why an answer did not pass (not attempted says nothing more).
CAUSE_STATUSES = ("failed", "error", "not_graded", "tampering")
TOP_CAUSES = 5  # families shown per exercise; the rest are counted
BANDS = 10  # the score histogram's bars: 0-10 %, ..., 90-100 %


@dataclass(frozen=True)
class Cause:
    """One family of failure messages of one exercise: how many rows, and one example."""

    key: str
    label: str
    count: int
    statuses: tuple[str, ...]
    example: str  # a real message of the family, with every student's id and name taken out


@dataclass(frozen=True)
class ExerciseStats:
    exercise: str
    notebook: str
    max_points: float
    counts: dict  # status -> rows (every status of STATUSES, 0 included)
    causes: tuple[Cause, ...]  # the commonest first, at most TOP_CAUSES
    other_causes: int  # rows whose family is not among ``causes``

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> int:
        return self.counts["passed"]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True)
class Flag:
    """A submission a human should look at, and why (the summary's "Look at these")."""

    student: str
    notebook: str
    kind: str  # missing, crashed, timeout, invalid, grader_error, tampering, review, skipped_cell, gpu
    what: str


@dataclass(frozen=True)
class StudentStats:
    student: str
    name: str  # as handed in
    points: float
    max_points: float
    counts: dict  # status -> exercises
    flags: tuple[str, ...]  # the kinds of Flag this student has
    feedback: str  # the feedback page, relative to OUT

    @property
    def percent(self) -> float:
        return 100.0 * self.points / self.max_points if self.max_points else 0.0


@dataclass(frozen=True)
class GpuUse:
    gpu: str
    label: str  # 'GPU 1 (NVIDIA H200, GPU-1a2b3c4d)'
    submissions: int
    seconds: float


@dataclass(frozen=True)
class RunFacts:
    mode: str
    jobs: object
    sandbox: str
    started: str
    course: str
    submissions: int
    students: int
    graded: int  # submissions that ran (a missing notebook runs nothing)
    median_seconds: float | None
    mean_seconds: float | None
    max_seconds: float | None
    slowest: str  # 'student/notebook' of the longest, '' when none ran
    gpus: tuple[GpuUse, ...]


@dataclass(frozen=True)
class ClassStats:
    exercises: tuple[ExerciseStats, ...]
    students: tuple[StudentStats, ...]
    flags: tuple[Flag, ...]
    facts: RunFacts
    histogram: tuple[int, ...]  # students per band of BANDS, lowest first
    notes: tuple[str, ...] = field(default_factory=tuple)  # the run's warnings, as the summary gives them

    @property
    def mean_percent(self) -> float:
        return statistics.fmean(s.percent for s in self.students) if self.students else 0.0

    @property
    def median_percent(self) -> float:
        return statistics.median(s.percent for s in self.students) if self.students else 0.0


def flags_of(rec: dict) -> list[Flag]:
    """Why a human should look at this submission (empty: nothing to look at)."""
    who = (rec["student"], rec["notebook"])
    out = []
    if rec["outcome"] != "completed":
        out.append(Flag(*who, rec["outcome"], str(rec.get("problem") or rec["outcome"])))
    for sk in rec.get("skipped_cells", []):
        out.append(Flag(*who, "skipped_cell", f"cell {sk.get('cell')} skipped in a further run: {sk.get('why')}"))
    if rec.get("tamper"):
        out.append(Flag(*who, "tampering", "; ".join(map(str, rec["tamper"].get("what", [])))))
    for r in rec.get("review", []):
        out.append(Flag(*who, "review", str(r)))
    for p in gpu_problems(rec):
        out.append(Flag(*who, "gpu", p))
    return out


def _causes(rows: list, redact: Redactor) -> tuple[tuple[Cause, ...], int]:
    """The commonest families of this exercise's failure messages, each with an example; every
    message is redacted first, so that a name inside a message neither shows nor splits a family."""
    groups: dict = defaultdict(list)
    labels = {}
    for r in rows:
        if r["status"] in CAUSE_STATUSES:
            text = redact(r["message"], limit=None)
            fam = family(text, r["status"])
            groups[fam.key].append((r["status"], text))
            labels.setdefault(fam.key, fam.label)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    shown = []
    for key, members in ranked[:TOP_CAUSES]:
        statuses = tuple(s for s in STATUSES if any(status == s for status, _ in members))
        example = members[0][1]
        example = example if len(example) <= MAX_EXAMPLE else example[: MAX_EXAMPLE - 1] + "…"
        shown.append(Cause(key, labels[key], len(members), statuses, example))
    return tuple(shown), sum(len(m) for _, m in ranked[TOP_CAUSES:])


def _facts(records: list, manifest: dict) -> RunFacts:
    ran = [r for r in records if r.get("runs")]
    seconds = [float(r.get("seconds") or 0.0) for r in ran]
    slowest = max(ran, key=lambda r: float(r.get("seconds") or 0.0), default=None)
    gpus = tuple(
        GpuUse(g.gpu, g.label, len(g.records), round(sum(float(r.get("seconds") or 0.0) for r in g.records), 2))
        for g in gpu_groups(records)
    )
    return RunFacts(
        mode=str(manifest.get("mode", "")),
        jobs=manifest.get("jobs", ""),
        sandbox=str(manifest.get("sandbox", "")),
        started=str(manifest.get("started", "")),
        course=str(manifest.get("course", "")),
        submissions=len(records),
        students=len({r["student"] for r in records}),
        graded=len(ran),
        median_seconds=round(statistics.median(seconds), 2) if seconds else None,
        mean_seconds=round(statistics.fmean(seconds), 2) if seconds else None,
        max_seconds=round(max(seconds), 2) if seconds else None,
        slowest=f"{slowest['student']}/{slowest['notebook']}" if slowest else "",
        gpus=gpus,
    )


def _band(percent: float) -> int:
    return min(int(percent // (100 / BANDS)), BANDS - 1)


def class_stats(records: list, max_points: dict, manifest: dict, notes=()) -> ClassStats:
    """Everything the class report shows, from the records (and points) that grades.csv comes from."""
    rows = scored(records, max_points)
    names = {r["student"]: r.get("name") or r["student"] for r in records}
    words = vocabulary((r["student"], names[r["student"]], r["message"]) for r in rows if r["status"] in CAUSE_STATUSES)
    redact = Redactor(names.items(), words)
    order: dict = {}  # exercise -> notebook, in course order (records keep the notebook's order)
    for rec in sorted(records, key=lambda r: r["notebook"]):
        for e in rec["exercises"]:
            order.setdefault(e["exercise"], rec["notebook"])
    by_ex: dict = defaultdict(list)
    for r in rows:
        by_ex[r["exercise"]].append(r)
    exercises = []
    for ex, notebook in order.items():
        mine = by_ex[ex]
        counts = Counter(r["status"] for r in mine)
        causes, other = _causes(mine, redact)
        exercises.append(
            ExerciseStats(
                exercise=ex,
                notebook=notebook,
                max_points=float(max_points.get(ex, 1.0)),
                counts={s: counts.get(s, 0) for s in (*STATUSES, *sorted(set(counts) - set(STATUSES)))},
                causes=causes,
                other_causes=other,
            )
        )
    flags = [f for rec in records for f in flags_of(rec)]
    kinds: dict = defaultdict(set)
    for f in flags:
        kinds[f.student].add(f.kind)
    per_student: dict = defaultdict(list)
    for r in rows:
        per_student[r["student"]].append(r)
    students = []
    for student in sorted(per_student):
        mine = per_student[student]
        counts = Counter(r["status"] for r in mine)
        students.append(
            StudentStats(
                student=student,
                name=names.get(student, student),
                points=sum(r["points"] for r in mine),
                max_points=sum(r["max_points"] for r in mine),
                counts={s: counts.get(s, 0) for s in STATUSES},
                flags=tuple(sorted(kinds.get(student, ()))),
                feedback=f"feedback/{student}/feedback.md",
            )
        )
    histogram = [0] * BANDS
    for s in students:
        histogram[_band(s.percent)] += 1
    return ClassStats(
        exercises=tuple(exercises),
        students=tuple(students),
        flags=tuple(flags),
        facts=_facts(records, manifest),
        histogram=tuple(histogram),
        notes=tuple(str(n) for n in notes),
    )
