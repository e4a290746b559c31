"""helpers.mutation.equivalent: each mutant excused as equivalent really computes the right thing (a
kernel at a size a GPU would run, traced on the CPU; a function on 20,000 inputs), and the rules
match what they say they match."""

import pytest

import helpers  # noqa: F401 - the course rule: helpers before numba.cuda
from helpers.mutation import report
from helpers.mutation.build import build
from helpers.mutation.equivalent import EQUIVALENT, Equivalent, reason
from helpers.mutation.run import KILLED, mutants, right_beyond_the_check
from helpers.problems import all_exercises

CPU = report.load("cpu") or report.load("gpu") or {"mutants": []}
EXCUSED = sorted(m["key"] for m in CPU["mutants"] if m["status"] not in KILLED and reason(m["key"]))


def test_a_rule_matches_its_exercise_operator_and_site_only():
    rule = Equivalent("nb05.stencil", "comparison_boundary", r"0 < i <= n -> 0 < i < n", "why")
    assert rule.matches("nb05.stencil | kernel | comparison_boundary | line 8: boundary 0 < i <= n -> 0 < i < n")
    assert not rule.matches("nb05.stencil | kernel | comparison_negated | line 8: negated 0 < i <= n -> 0 < i < n")
    assert not rule.matches("nb02.vector_add | kernel | comparison_boundary | line 8: boundary 0 < i <= n")
    assert not rule.matches("nb05.stencil | kernel | comparison_boundary | line 10: boundary i + 1 < n -> i + 1 <= n")


def test_every_rule_gives_a_reason_a_learner_could_read():
    for rule in EQUIVALENT:
        assert len(rule.reason.split()) >= 12 and not rule.reason.endswith("."), rule


@pytest.mark.slow
@pytest.mark.parametrize("key", EXCUSED)
def test_an_equivalent_mutant_is_right_beyond_what_the_check_tries(key):
    exercise = key.split(" | ")[0]
    ex = next(e for e in all_exercises() if e.id == exercise)
    found = [(m, tree, ns, call) for m, tree, ns, call in mutants(ex) if m.key == key]
    assert found, f"{key} is in the record but no longer derived: regenerate the report"
    m, tree, ns, call = found[0]
    answer = tree if m.part == "cuda_c" else build(tree, ns, call)  # a CUDA C answer is its text
    assert right_beyond_the_check(ex, answer), f"{key} is excused as equivalent but wrong"
