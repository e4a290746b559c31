"""The mutation report: per exercise, the mutants generated, killed, equivalent (with reasons)
and surviving, in CPU mode and (when a GPU run was recorded) GPU mode.

``docs/data/mutation-<mode>.json`` holds every mutant's key and status for one mode;
``docs/mutation-report.md`` is written from those records. ``python -m helpers.mutation``
regenerates the record for the mode it runs in, then the page.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .equivalent import EQUIVALENT, reason
from .run import KILLED

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "mutation-report.md"


def record_path(mode: str) -> Path:
    return ROOT / "docs" / "data" / f"mutation-{mode}.json"


@dataclass(frozen=True)
class Row:
    """One exercise's counts in one mode."""

    exercise: str
    generated: int
    killed: int
    equivalent: int
    surviving: tuple  # keys


def records(outcomes) -> list[dict]:
    return [
        {"key": o.mutant.key, "status": o.status, "message": o.message[:300], "source": o.mutant.source}
        for o in outcomes
    ]


def write_record(mode: str, outcomes, device: str = "") -> Path:
    path = record_path(mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"mode": mode, "device": device, "mutants": records(outcomes)}
    path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    return path


def merged(old: dict | None, outcomes, exercises, device: str = "") -> dict:
    """The record ``old`` with the named exercises' mutants replaced by ``outcomes`` (the others kept as
    they were graded). The exercises merged are listed under "merged" so the page can say which rows
    come from a later run than the rest."""
    keep = [m for m in (old or {}).get("mutants", []) if m["key"].split(" | ")[0] not in set(exercises)]
    later = sorted(set((old or {}).get("merged", [])) | set(exercises))
    body = {"mode": (old or {}).get("mode", ""), "device": device or (old or {}).get("device", "")}
    return {**body, "merged": later, "mutants": keep + records(outcomes)}


def write_merged(mode: str, outcomes, exercises, device: str = "") -> Path:
    path = record_path(mode)
    body = merged(load(mode), outcomes, exercises, device)
    path.write_text(json.dumps({**body, "mode": mode}, indent=1, sort_keys=True) + "\n")
    return path


def load(mode: str) -> dict | None:
    path = record_path(mode)
    return json.loads(path.read_text()) if path.exists() else None


def rows(record: dict) -> list[Row]:
    by = defaultdict(list)
    for m in record["mutants"]:
        by[m["key"].split(" | ")[0]].append(m)
    out = []
    for exercise, ms in by.items():
        killed = [m for m in ms if m["status"] in KILLED]
        alive = [m for m in ms if m["status"] not in KILLED]
        equivalent = [m for m in alive if reason(m["key"])]
        surviving = tuple(m["key"] for m in alive if not reason(m["key"]))
        out.append(Row(exercise, len(ms), len(killed), len(equivalent), surviving))
    return out


def disagreements(cpu: dict, gpu: dict) -> list[str]:
    """Mutants killed in one mode and not the other (they must not exist)."""
    a = {m["key"]: m["status"] in KILLED for m in cpu["mutants"]}
    b = {m["key"]: m["status"] in KILLED for m in gpu["mutants"]}
    return sorted(k for k in a.keys() & b.keys() if a[k] != b[k])


def page(cpu: dict | None, gpu: dict | None) -> str:
    """The page from the CPU record and, when there is one, the GPU record; from the GPU record alone
    (its column first) while no CPU record has been written."""
    if cpu is None:
        return _page(gpu, None, "GPU")
    return _page(cpu, gpu, "CPU")


def _page(cpu: dict, gpu: dict | None, first: str) -> str:
    lines = [
        "# Mutation report",
        "",
        "Every exercise's check graded against wrong answers derived from its reference solution "
        "(`helpers/mutation`): a guard off by one, removed or inverted; comparisons flipped; axes swapped; "
        "an index off by one; the check's own launch and size written as literals; a barrier removed or "
        "moved; an atomic made plain; privatization dropped; the work serialized in thread 0; chunks instead "
        "of a stride; the result written over an input; dtypes changed; and, in host code, arithmetic, "
        "rounding, constants, min/max, host arrays for device ones, a result returned on the host, a target "
        "or `parallel=` dropped. CUDA C answers (`c_ops`, on tokens) get the same families in C: a guard "
        "changed or removed, a ternary's branches, `blockDim.x` written as the check's block size, the block "
        "offset dropped, `threadIdx`/`blockIdx` swapped, an operand for another of its kind, parameters "
        "reordered, types, `n` written as the check's first n, a barrier removed, an atomic made plain, "
        "`__shared__` dropped, operators, `fminf`/`fmaxf`, constants, and a reduce_expr that redoes map_expr. "
        "Host code that drives a GPU (`call_ops`) gets: the launch or library call removed or doubled, grid "
        "and block swapped, the copy direction of `drv.InOut`, a copy launched on, another stream, an input "
        "overwritten after use, a result widened or copied to the host. A mutant is *killed* when the check "
        "fails it (or reports an error).",
        "",
        "Regenerate with `make mutation-report` (CPU mode; on a GPU host `COURSE_MODE=gpu` records the GPU "
        "column); `make test` checks that this page is current and that nothing survives.",
        "",
    ]
    gpu_rows = {r.exercise: r for r in rows(gpu)} if gpu else {}
    head = f"| exercise | mutants | killed ({first}) | equivalent | surviving ({first}) |"
    rule = "|---|---:|---:|---:|---:|"
    if gpu:
        head += " killed (GPU) | surviving (GPU) |"
        rule += "---:|---:|"
    lines += [head, rule]
    total = [0, 0, 0, 0]
    for r in rows(cpu):
        line = f"| `{r.exercise}` | {r.generated} | {r.killed} | {r.equivalent} | {len(r.surviving)} |"
        if gpu:
            g = gpu_rows.get(r.exercise)
            line += f" {g.killed if g else '-'} | {len(g.surviving) if g else '-'} |"
        lines.append(line)
        total = [total[0] + r.generated, total[1] + r.killed, total[2] + r.equivalent, total[3] + len(r.surviving)]
    lines.append(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |" + (" | |" if gpu else ""))
    where = "" if first == "CPU" else f" ({cpu.get('device') or 'a GPU'}); no CPU record yet"
    lines += ["", f"{first} record: `{record_path(first.lower()).relative_to(ROOT)}`{where}."]
    if gpu:
        lines.append(f"GPU record: `{record_path('gpu').relative_to(ROOT)}` ({gpu.get('device') or 'a GPU'}).")
        differ = disagreements(cpu, gpu)
        lines.append(f"Mutants on which CPU and GPU mode disagree: {len(differ)}.")
        lines += [f"- `{k}`" for k in differ]
    elif first == "CPU":
        lines.append("No GPU record yet.")
    for name, rec in ((first, cpu), ("GPU", gpu if first == "CPU" else None)):
        if rec and rec.get("merged"):
            later = ", ".join(f"`{e}`" for e in rec["merged"])
            lines.append(f"Graded in a later run and merged into the {name} record (`--merge`): {later}.")
    surviving = [k for r in rows(cpu) for k in r.surviving]
    lines += ["", "## Surviving mutants", ""]
    lines += [f"- `{k}`" for k in surviving] or ["None."]
    lines += ["", "## Equivalent mutants", ""]
    matched = [m["key"] for m in cpu["mutants"] if m["status"] not in KILLED and reason(m["key"])]
    lines += [f"- `{k}`: {reason(k)}." for k in matched] or ["None."]
    lines += ["", f"Rules in `helpers/mutation/equivalent.py`: {len(EQUIVALENT)}."]
    return "\n".join(lines) + "\n"


def write_page() -> Path:
    cpu, gpu = load("cpu"), load("gpu")
    if cpu is None and gpu is None:
        raise FileNotFoundError(f"{record_path('cpu')} is missing: run `make mutation-report` first.")
    PAGE.write_text(page(cpu, gpu))
    return PAGE
