"""One record per GPU kind of a full ``bench/run.py`` run: ``docs/data/bench-<gpu>.json``.

Why: the course quotes figures for the H100 and the H200 side by side, so each GPU kind keeps its own
report (docs/benchmarks-<gpu>.md) and machine-readable record (rows, the ceilings measured in the same
run, the verdict on every target), and a later run on one GPU never overwrites the other's. No GPU
code here: the test suite checks it in CPU mode.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import report
from bench.timing import slug


def build(meta: dict, ceilings: dict, rows: list, verdicts: list) -> dict:
    """Plain data: every number with the ceiling it is a fraction of."""
    return {
        "machine": meta,
        "ceilings": {
            k: {"label": c.label, "value": c.value, "detail": c.detail, "error": c.error} for k, c in ceilings.items()
        },
        "rows": [
            {
                "key": r.key,
                "label": r.label,
                "kind": r.kind,
                "size": r.size,
                "status": r.status,
                "seconds": r.seconds,
                "rate": r.rate,
                "of_ceiling": report.fraction(r, ceilings),
                "runs": r.samples,
                "error": r.error,
            }
            for r in rows
        ],
        "targets": [
            {
                "target": v.target.name,
                "best": v.best_key,
                "measured": v.value,
                "minimum": v.target.minimum,
                "result": v.result,
            }  # fmt: skip
            for v in verdicts
        ],
    }


def path_for(folder, gpu: str) -> Path:
    """docs/data/bench-h200.json for 'NVIDIA H200 (sm_90, 132 SMs)'."""
    return Path(folder) / f"bench-{slug(gpu.split('(')[0])}.json"


def write(folder, meta: dict, ceilings: dict, rows: list, verdicts: list) -> Path:
    out = path_for(folder, meta["GPU"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(build(meta, ceilings, rows, verdicts), indent=1) + "\n")
    return out


# the files one make bench run writes into its staging folder that carry no GPU name of their own
UNNAMED = ("crossover.json", "cccl.json", "streams_graphs.json")


def place(staging, docs) -> list:
    """Move one make bench run from ``staging`` (benchmarks.md and data/) into ``docs`` under the GPU's
    name: docs/benchmarks-<gpu>.md, docs/data/bench-<gpu>.json, docs/data/crossover-<gpu>.json, ...
    so a run on one GPU kind never overwrites another kind's record."""
    staging, docs = Path(staging), Path(docs)
    (made,) = sorted((staging / "data").glob("bench-*.json")) or [None]
    if made is None:
        raise SystemExit(f"no bench-<gpu>.json in {staging / 'data'}: bench/run.py --record did not finish")
    gpu = made.stem[len("bench-") :]
    moves = [(staging / "benchmarks.md", docs / f"benchmarks-{gpu}.md"), (made, docs / "data" / made.name)]
    moves += [(staging / "data" / n, docs / "data" / f"{Path(n).stem}-{gpu}.json") for n in UNNAMED]
    done = []
    for src, dst in moves:
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
            done.append(str(dst))
    return done


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "place":
        raise SystemExit("usage: python -m bench.record place STAGING DOCS")
    for p in place(sys.argv[2], sys.argv[3]):
        print(f"wrote {p}")
