"""tools/numba_ptx_agreement.py and its record: every Numba kernel exercise's reference and catalogued
wrong answer graded from Numba's real PTX, the record current with the catalogue, every difference
from the tracer's status explained, and a sample re-graded live against the record."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import numba_ptx_agreement as agreement  # noqa: E402

RECORD = json.loads(agreement.RECORD.read_text())
ROWS = {(r["exercise"], r["answer"]): r for r in RECORD["rows"]}


def test_the_record_holds_every_numba_exercise_and_catalogued_wrong_answer():
    live = [(ex.id, "reference" if w is None else w.kind) for ex, w in agreement.cases()]
    assert len(live) == len(set(live)), "two catalogued wrong answers of one exercise share a kind"
    assert set(live) == set(ROWS), "re-run tools/numba_ptx_agreement.py: the catalogue changed"


def test_every_status_difference_is_explained_and_shown():
    differ = {k for k, r in ROWS.items() if r["status"] != r["expected"]}
    assert differ <= set(agreement.REASONS), differ - set(agreement.REASONS)
    report = agreement.REPORT.read_text()
    for exercise, answer in differ:
        assert f"| {exercise} | {answer} |" in report and agreement.REASONS[(exercise, answer)] in report
    same = sum(r["status"] == r["expected"] for r in ROWS.values())
    assert f"**Same status as through the tracer:** {same} of {len(ROWS)}." in report


@pytest.mark.parametrize("exercise,answer", [("nb02.saxpy", "reference"), ("nb02.saxpy", "missing guard"),
                                             ("nb04.mirror", "negative index")])  # fmt: skip
def test_a_sample_regraded_live_matches_the_record(exercise, answer):
    (case,) = [(ex, w) for ex, w in agreement.cases() if ex.id == exercise and (w.kind if w else "reference") == answer]
    row = agreement.grade(*case)
    assert (row.status, row.message_kept) == (ROWS[exercise, answer]["status"], ROWS[exercise, answer]["message_kept"])
