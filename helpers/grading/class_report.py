"""OUT/report.html: the class at a glance, one self-contained page (no server, no files beside it,
no scripts or styles from elsewhere: it opens from disk and can be mailed as it is).

Summaries first: the class's numbers and the run's facts, the hardest exercises, then per
exercise its pass rate and statuses (an inline SVG bar each), the commonest causes of failure
with one anonymized example each, the score histogram, what a human should look at, and one row
per student linking to their feedback. A few lines of inline script sort any table by a click on
its header and filter the student table as you type; without them the page reads the same.
The numbers come from ``class_stats`` (the rows grades.csv is written from).
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from urllib.parse import quote

from .._files import atomic_write
from .class_stats import BANDS, STATUSES, ClassStats, ExerciseStats, class_stats
from .report import STATUS_WORDS

FILE = "report.html"
HARDEST = 5  # exercises named in the summary
MAX_FLAG_TEXT = 300  # characters of one flag's reason shown
OPEN_FLAGS = 30  # more flags than this: their table starts folded (its summary line says how many)

COLOURS = {
    "passed": "#2da44e",
    "failed": "#cf222e",
    "error": "#e16f24",
    "not_attempted": "#afb8c1",
    "unchecked": "#d4a72c",
    "not_graded": "#8250df",
    "tampering": "#24292f",
}
WORDS = STATUS_WORDS  # the terminal summary's words for each status, one table for both

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1280px;
padding:16px 24px;color:#1f2328}
h1{margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;margin:8px 0}
th,td{padding:3px 8px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dl.facts dt{color:#57606a}
dl.facts dd{margin:0}
.cause{margin:6px 0 10px}.cause q{display:block;font:12px/1.4 ui-monospace,monospace;background:#f6f8fa;
padding:4px 8px;border-left:3px solid #d0d7de;white-space:pre-wrap;quotes:none}
.legend span{margin-right:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
.flag{display:inline-block;font-size:11px;border:1px solid #d0d7de;border-radius:8px;padding:0 6px;margin:1px}
details>summary{cursor:pointer}input#filter{font-size:14px;padding:4px 8px;width:320px}
.muted{color:#57606a}
"""

SCRIPT = """
(function(){
  function key(cell){var v=cell.getAttribute('data-sort');return v===null?cell.textContent.trim().toLowerCase():+v;}
  document.querySelectorAll('table.sortable').forEach(function(table){
    var heads=table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads,function(th,col){
      th.addEventListener('click',function(){
        var down=th.getAttribute('aria-sort')==='ascending';
        Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
        th.setAttribute('aria-sort',down?'descending':'ascending');
        var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);
          return (x<y?-1:x>y?1:0)*(down?-1:1);});
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  var box=document.getElementById('filter');
  if(box){box.addEventListener('input',function(){
    var q=box.value.trim().toLowerCase(),shown=0;
    Array.prototype.forEach.call(document.getElementById('students').tBodies[0].rows,function(r){
      var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!hit;if(hit)shown++;});
    document.getElementById('shown').textContent=shown;
  });}
})();
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _seconds(s) -> str:
    return "–" if s is None else f"{s:.1f} s"


def status_bar(counts: dict, width: int = 220, height: int = 14) -> str:
    """One exercise's statuses as a stacked horizontal bar (inline SVG, a title per part)."""
    total = sum(counts.values())
    parts, x = [], 0.0
    for status in STATUSES:
        n = counts.get(status, 0)
        if not n or not total:
            continue
        w = width * n / total
        parts.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" fill="{COLOURS[status]}">'
            f"<title>{_e(WORDS[status])}: {n}</title></rect>"
        )
        x += w
    return (
        f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="statuses">{"".join(parts)}</svg>'
    )


def histogram(bins: tuple, width: int = 420, height: int = 140) -> str:
    """Students per band of total score (inline SVG bars, counts above, bands below)."""
    top = max(bins) if bins and max(bins) else 1
    bar_w, base = width / len(bins), height - 18
    out = []
    for i, n in enumerate(bins):
        h = (base - 14) * n / top
        x = i * bar_w
        lo, hi = i * 100 // BANDS, (i + 1) * 100 // BANDS
        out.append(
            f'<rect x="{x + 2:.1f}" y="{base - h:.1f}" width="{bar_w - 4:.1f}" height="{h:.1f}" fill="#54aeff">'
            f"<title>{lo}–{hi} %: {n} student(s)</title></rect>"
            f'<text x="{x + bar_w / 2:.1f}" y="{base - h - 3:.1f}" font-size="10" text-anchor="middle">{n}</text>'
            f'<text x="{x + bar_w / 2:.1f}" y="{height - 4}" font-size="10" text-anchor="middle">{lo}</text>'
        )
    return (
        f'<svg id="histogram" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="students per score band">{"".join(out)}</svg>'
    )


def _anchor(exercise: str) -> str:
    return "causes-" + "".join(c if c.isalnum() else "-" for c in exercise)


def _summary(stats: ClassStats) -> list[str]:
    f = stats.facts
    flagged = {(x.student, x.notebook) for x in stats.flags if x.kind != "missing"}
    cards = [
        ("students", len(stats.students)),
        ("submissions", f.submissions),
        ("mean score", f"{stats.mean_percent:.1f} %"),
        ("median score", f"{stats.median_percent:.1f} %"),
        ("to look at", len(flagged)),
    ]
    out = ['<div class="cards">']
    out += [f'<div class="card" data-card="{_e(k)}"><b>{_e(v)}</b>{_e(k)}</div>' for k, v in cards]
    out.append("</div>")
    hardest = sorted(stats.exercises, key=lambda e: (e.pass_rate, e.exercise))[:HARDEST]
    if hardest:
        out.append("<p><b>Hardest exercises:</b> ")
        out.append(
            ", ".join(
                f'<a href="#{_anchor(e.exercise)}">{_e(e.exercise)}</a> ({_pct(e.pass_rate)} passed'
                + (f"; mostly: {_e(_short(e.causes[0].label))}" if e.causes else "")
                + ")"
                for e in hardest
            )
        )
        out.append("</p>")
    gpus = "; ".join(f"{g.label}: {g.submissions} submission(s), {g.seconds:.1f} s" for g in f.gpus)
    facts = [
        ("mode", f.mode + (f" ({gpus})" if gpus else "")),
        ("workers", f.jobs),
        ("sandbox", f.sandbox or "–"),
        ("started", f.started or "–"),
        ("report written", time.strftime("%Y-%m-%d %H:%M:%S")),
        ("course", f.course),
        ("submissions run", f"{f.graded} of {f.submissions} (a notebook not handed in runs nothing)"),
        (
            "time per submission",
            f"median {_seconds(f.median_seconds)}, mean {_seconds(f.mean_seconds)}, longest "
            f"{_seconds(f.max_seconds)}" + (f" ({f.slowest})" if f.slowest else ""),
        ),
    ]
    out.append('<dl class="facts" id="facts">')
    out += [f'<dt>{_e(k)}</dt><dd data-fact="{_e(k)}">{_e(v)}</dd>' for k, v in facts]
    out.append("</dl>")
    return out


def _legend() -> str:
    return (
        '<p class="legend">'
        + "".join(f'<span><i class="sw" style="background:{COLOURS[s]}"></i>{_e(WORDS[s])}</span>' for s in STATUSES)
        + "</p>"
    )


def _exercise_table(exercises: tuple[ExerciseStats, ...]) -> list[str]:
    # A status no exercise has gets no column (the bar's legend still names it).
    shown = [s for s in STATUSES if s == "passed" or any(e.counts.get(s, 0) for e in exercises)]
    head = "".join(f'<th class="n">{_e(WORDS[s])}</th>' for s in shown)
    out = [
        '<table id="exercises" class="sortable"><thead><tr><th>exercise</th><th>notebook</th>'
        f'<th class="n">points</th><th class="n">pass rate</th><th class="n">passed / rows</th><th>statuses</th>'
        f"{head}</tr></thead><tbody>"
    ]
    for e in exercises:
        cells = "".join(
            f'<td class="n count" data-status="{s}" data-sort="{e.counts.get(s, 0)}">{e.counts.get(s, 0)}</td>'
            for s in shown
        )
        out.append(
            f'<tr data-exercise="{_e(e.exercise)}"><td><a href="#{_anchor(e.exercise)}">{_e(e.exercise)}</a></td>'
            f"<td>{_e(e.notebook)}</td><td class=n>{_num(e.max_points)}</td>"
            f'<td class="n rate" data-sort="{e.pass_rate:.6f}">{_pct(e.pass_rate)}</td>'
            f'<td class="n ratio" data-sort="{e.passed}">{e.passed} / {e.total}</td>'
            f"<td>{status_bar(e.counts)}</td>{cells}</tr>"
        )
    out.append("</tbody></table>")
    return out


def _causes(exercises: tuple[ExerciseStats, ...]) -> list[str]:
    out = [
        '<p class="muted">Messages are grouped by the tracer\'s verdict, the exception raised, or their text with '
        "numbers and code left out; each example is one real message with every student's id and name taken out. "
        "Not attempted answers are counted above, not here.</p>"
    ]
    for e in exercises:
        failing = e.total - e.passed - e.counts.get("not_attempted", 0) - e.counts.get("unchecked", 0)
        top = f": mostly {_e(_short(e.causes[0].label))} ({e.causes[0].count})" if e.causes else ""
        out.append(
            f'<details id="{_anchor(e.exercise)}" data-exercise="{_e(e.exercise)}"><summary><b>{_e(e.exercise)}</b> — '
            f"{failing} of {e.total} failed, errored or were not graded{top}</summary>"
        )
        if not e.causes:
            out.append('<p class="muted">No failures.</p>')
        for c in e.causes:
            statuses = ", ".join(WORDS.get(s, s) for s in c.statuses)
            out.append(
                f'<div class="cause" data-family="{_e(c.key)}"><b class="count">{c.count}</b> × {_e(c.label)} '
                f'<span class="muted">({_e(statuses)})</span><q>{_e(c.example)}</q></div>'
            )
        if e.other_causes:
            out.append(f'<p class="muted">and {e.other_causes} more in other families.</p>')
        out.append("</details>")
    return out


def _flags(stats: ClassStats) -> list[str]:
    shown = [f for f in stats.flags if f.kind != "missing"]
    missing = [f for f in stats.flags if f.kind == "missing"]
    out = []
    if not shown:
        out.append('<p id="no-flags">Nothing flagged: every submission ran to the end, with no review flags.</p>')
    else:
        subs = len({(f.student, f.notebook) for f in shown})
        out.append(
            f"<details{' open' if len(shown) <= OPEN_FLAGS else ''}><summary>{len(shown)} flag(s) on {subs} "
            "submission(s): crashes, time-outs, damaged files, tampering, code to review</summary>"
        )
        out.append(
            '<table id="flags" class="sortable"><thead><tr><th>student</th><th>notebook</th><th>why</th>'
            "<th>details</th></tr></thead><tbody>"
        )
        for f in shown:
            what = f.what if len(f.what) <= MAX_FLAG_TEXT else f.what[: MAX_FLAG_TEXT - 1] + "…"
            out.append(
                f'<tr><td><a href="{_e(_link(f.student))}">{_e(f.student)}</a></td><td>{_e(f.notebook)}</td>'
                f"<td>{_e(f.kind.replace('_', ' '))}</td><td>{_e(what)}</td></tr>"
            )
        out.append("</tbody></table></details>")
    if missing:
        names = ", ".join(f"{f.student}/{f.notebook}" for f in missing)
        out.append(f"<details><summary>{len(missing)} notebook(s) not handed in</summary><p>{_e(names)}</p></details>")
    if stats.notes:
        out.append(f"<details><summary>{len(stats.notes)} note(s) from the grader</summary><ul>")
        out += [f"<li>{_e(n)}</li>" for n in stats.notes]
        out.append("</ul></details>")
    return out


def _link(student: str) -> str:
    return f"feedback/{quote(student)}/feedback.md"


def _students(stats: ClassStats) -> list[str]:
    out = [
        f'<p><input id="filter" type="search" placeholder="filter: a name, a flag such as review…" '
        f'aria-label="filter students"> <span id="shown">{len(stats.students)}</span> of {len(stats.students)} '
        "shown; click a column to sort.</p>",
        '<table id="students" class="sortable"><thead><tr><th>student</th><th>name</th><th class="n">points</th>'
        '<th class="n">%</th><th class="n">passed</th><th class="n">failed / error</th>'
        '<th class="n">not attempted</th><th class="n">not graded</th><th>flags</th></tr></thead><tbody>',
    ]
    for s in stats.students:
        c = s.counts
        wrong = c["failed"] + c["error"] + c["tampering"]
        name = s.name if s.name != s.student else ""
        flags = "".join(f'<span class="flag">{_e(k.replace("_", " "))}</span>' for k in s.flags)
        out.append(
            f'<tr data-student="{_e(s.student)}"><td><a href="{_e(_link(s.student))}">{_e(s.student)}</a></td>'
            f"<td>{_e(name)}</td>"
            f'<td class="n" data-sort="{s.points:g}">{_num(s.points)} / {_num(s.max_points)}</td>'
            f'<td class="n" data-sort="{s.percent:.3f}">{s.percent:.1f}</td>'
            f'<td class="n">{c["passed"]}</td><td class="n">{wrong}</td>'
            f'<td class="n">{c["not_attempted"]}</td><td class="n">{c["not_graded"]}</td><td>{flags}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def render(stats: ClassStats, title: str = "Class report") -> str:
    """The whole page, from the numbers alone."""
    f = stats.facts
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="muted">{len(stats.students)} students, {f.submissions} submissions, '
        f"{len(stats.exercises)} exercises. Numbers are those of grades.csv beside this page.</p>",
        '<section id="summary">',
        *_summary(stats),
        "</section>",
        '<section id="per-exercise"><h2>Exercises</h2>',
        _legend(),
        *_exercise_table(stats.exercises),
        "</section>",
        '<section id="causes"><h2>Why answers did not pass</h2>',
        *_causes(stats.exercises),
        "</section>",
        '<section id="scores"><h2>Scores</h2><p>Students per band of their total (percent of the points they '
        "could get).</p>",
        histogram(stats.histogram),
        "</section>",
        '<section id="look-at"><h2>Look at these</h2>',
        *_flags(stats),
        "</section>",
        '<section id="per-student"><h2>Students</h2>',
        *_students(stats),
        "</section>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )


def write(out: Path, records: list, max_points: dict, manifest: dict, notes=()) -> Path:
    """Write OUT/report.html from the records grades.csv is written from; returns its path."""
    stats = class_stats(records, max_points, manifest, notes)
    path = out / FILE
    atomic_write(path, render(stats))
    return path
