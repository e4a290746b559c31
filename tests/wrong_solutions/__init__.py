"""Wrong solutions as data: one module per problems module, each with ``WRONG = {exercise: [Wrong, ...]}``.

A new problems module plugs in by adding ``tests/wrong_solutions/<module>.py``; tests/problems/test_catalogue.py
fails for any shipped exercise that has no entry. ``kind`` names the mistake category so the
suite can prove the catalogue covers every category the course promises to catch.
"""

from dataclasses import dataclass, field


@dataclass
class Wrong:
    kind: str  # e.g. "wrong index", "missing guard", "race", "first block only", "hard-coded"
    answer: object
    says: str  # a phrase the learner's message must contain
    status: str = "failed"
    options: dict = field(default_factory=dict)  # extra check() arguments, e.g. launch=

    def __repr__(self):
        return f"<{self.kind}>"
