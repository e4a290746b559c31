"""A run's outcomes, appended one line per mutant as each is graded, so a run that is stopped
(a machine's time limit, a worker killed) resumes where it stopped instead of starting again.

The journal's first line is a fingerprint of the course's code (``helpers/`` and ``solutions/``):
outcomes graded by other checks than today's are not reused, the run starts over.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .run import Mutant, Outcome

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("helpers", "solutions")


def journal_path(mode: str) -> Path:
    return ROOT / "build" / f"mutation-{mode}.jsonl"


def fingerprint(root: Path = ROOT) -> str:
    digest = hashlib.sha256()
    for top in SOURCES:
        for path in sorted((root / top).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _line(outcome: Outcome) -> str:
    m = outcome.mutant
    return json.dumps(
        {
            "exercise": m.exercise,
            "part": m.part,
            "operator": m.operator,
            "site": m.site,
            "source": m.source,
            "status": outcome.status,
            "message": outcome.message,
            "seconds": round(outcome.seconds, 2),
        }
    )


class Journal:
    """Outcomes already graded under this fingerprint (by mutant key), and an append-only file."""

    def __init__(self, path: Path, print_: str):
        self.path = path
        self.done: dict[str, Outcome] = {}
        lines = path.read_text().splitlines() if path.exists() else []
        if lines and json.loads(lines[0]).get("fingerprint") == print_:
            for text in lines[1:]:
                try:
                    d = json.loads(text)
                except json.JSONDecodeError:
                    continue  # a line cut short when the run was stopped
                m = Mutant(d["exercise"], d["part"], d["operator"], d["site"], d["source"])
                self.done[m.key] = Outcome(m, d["status"], d["message"], d["seconds"])
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"fingerprint": print_}) + "\n")

    def has(self, key: str, source: str) -> bool:
        found = self.done.get(key)
        return found is not None and found.mutant.source == source

    def add(self, outcome: Outcome) -> None:
        self.done[outcome.mutant.key] = outcome
        with self.path.open("a") as f:
            f.write(_line(outcome) + "\n")
