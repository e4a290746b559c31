"""helpers.mutation.journal: a stopped run resumes from the outcomes it wrote, and only while
the course's code is the code that graded them."""

import json

from helpers.mutation.journal import Journal, fingerprint
from helpers.mutation.run import Mutant, Outcome


def _outcome(site: str, status: str = "failed", source: str = "def k(): pass") -> Outcome:
    return Outcome(Mutant("nb02.vector_add", "kernel", "guard_removed", site, source), status, "why", 1.25)


def test_outcomes_written_are_read_back_by_the_next_run(tmp_path):
    path = tmp_path / "j.jsonl"
    first = Journal(path, "abc")
    first.add(_outcome("line 3"))
    again = Journal(path, "abc")
    key = _outcome("line 3").mutant.key
    assert again.has(key, "def k(): pass")
    assert again.done[key] == _outcome("line 3")
    assert not again.has(_outcome("line 4").mutant.key, "def k(): pass")


def test_a_mutant_whose_source_changed_is_graded_again(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal(path, "abc").add(_outcome("line 3"))
    assert not Journal(path, "abc").has(_outcome("line 3").mutant.key, "def k(): return 1")


def test_a_journal_written_by_other_code_is_started_over(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal(path, "abc").add(_outcome("line 3"))
    fresh = Journal(path, "def")
    assert fresh.done == {}
    assert json.loads(path.read_text().splitlines()[0]) == {"fingerprint": "def"}
    assert len(path.read_text().splitlines()) == 1


def test_a_line_cut_short_by_a_stopped_run_is_skipped(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, "abc")
    journal.add(_outcome("line 3"))
    with path.open("a") as f:
        f.write('{"exercise": "nb02.vec')
    assert list(Journal(path, "abc").done) == [_outcome("line 3").mutant.key]


def test_the_fingerprint_follows_the_checks_code(tmp_path):
    for top in ("helpers", "solutions"):
        (tmp_path / top).mkdir()
        (tmp_path / top / "a.py").write_text("x = 1\n")
    before = fingerprint(tmp_path)
    (tmp_path / "helpers" / "a.py").write_text("x = 2\n")
    assert fingerprint(tmp_path) != before
    (tmp_path / "helpers" / "a.py").write_text("x = 1\n")
    assert fingerprint(tmp_path) == before
