"""helpers.mutation.run: every mutant of a reference is graded by the exercise's own check, and a
check too weak to tell right from wrong shows up as surviving mutants."""

from numba import cuda

import helpers  # noqa: F401 - the course rule: helpers before numba.cuda
from helpers.exercises import FunctionExercise, In, Ints, KernelExercise, Out, fixed, per_element
from helpers.mutation.run import Outcome, mutants, right_at_size, right_beyond_the_check, run_exercise, targets
from helpers.problems import nb01, nb02


def _blocks(n, t):
    return (n + t - 1) // t


def _named(ex, name):
    ex.name, ex.notebook = name, "nbXX"
    return ex


def test_a_strong_check_kills_every_mutant_of_its_reference():
    found = run_exercise(nb01.blocks_per_grid)
    assert found and all(isinstance(o, Outcome) for o in found)
    assert [o.mutant.key for o in found if not o.killed] == []
    assert {o.mutant.operator for o in found} >= {"floor_for_ceiling", "arithmetic", "constant_off_by_one"}


def test_a_check_blind_to_partial_blocks_lets_the_floor_mutant_survive():
    """Only multiples of t: n // t is right on every input this check draws, and the run says so."""
    weak = _named(
        FunctionExercise(
            prompt="blocks for n elements",
            reference=_blocks,
            inputs={"n": Ints(choices=(256, 512, 1024)), "t": Ints(choices=(256,))},
        ),
        "weak_blocks",
    )
    alive = [o for o in run_exercise(weak) if not o.killed]
    assert any(o.mutant.operator == "floor_for_ceiling" for o in alive), [o.mutant.key for o in alive]
    assert all(o.status == "passed" for o in alive)


@cuda.jit
def _stride(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i] * x[i]


def test_a_check_with_one_launch_shape_lets_a_literal_stride_survive_and_two_shapes_kill_it():
    def exercise(rule):
        return _named(
            KernelExercise(
                prompt="square", args=(In("x"), Out("out")), expect=lambda x: x * x, reference=_stride, launch=rule
            ),
            "stride",
        )

    def literal(ex):
        return [o for o in run_exercise(ex) if o.mutant.operator == "launch_literal"]

    one = literal(exercise(fixed(2, 32)))
    assert one and all(o.status == "passed" for o in one), [(o.mutant.site, o.status) for o in one]
    two = literal(exercise(fixed(2, 32, more=((3, 64),))))
    assert two and all(o.killed for o in two), [(o.mutant.site, o.message) for o in two]


def test_mutant_keys_are_unique_and_the_same_on_every_derivation():
    first = [m.key for m, *_ in mutants(nb02.histogram)]
    assert len(first) == len(set(first)) and first == [m.key for m, *_ in mutants(nb02.histogram)]


def test_exercises_without_code_to_rewrite_have_no_targets():
    assert targets(nb01.threads_launched) == []  # a ValueExercise: the answer is a number
    assert [part for part, *_ in targets(nb02.saxpy)] == ["kernel", "launch"]


def test_right_at_size_tells_a_right_kernel_from_a_wrong_one():
    @cuda.jit
    def off_by_one(x, out):
        i = cuda.grid(1)
        if i < x.size - 1:
            out[i] = x[i] * x[i]

    ex = _named(
        KernelExercise(
            prompt="square", args=(In("x"), Out("out")), expect=lambda x: x * x, reference=_stride, launch=per_element()
        ),
        "square",
    )
    assert right_at_size(ex, _stride) and not right_at_size(ex, off_by_one)


def test_right_beyond_the_check_tries_a_function_on_many_more_inputs():
    weak = _named(
        FunctionExercise(
            prompt="blocks", reference=_blocks, inputs={"n": Ints(1, 10_000), "t": Ints(choices=(32, 64, 128))}
        ),
        "blocks",
    )
    assert right_beyond_the_check(weak, lambda n, t: -(-n // t))
    assert not right_beyond_the_check(weak, lambda n, t: n // t + 1)  # right unless t divides n


def test_an_error_from_a_missing_package_is_not_a_killed_mutant(monkeypatch):
    """A GPU host without greenlet made every barrier kernel's check end in 'error': the environment
    failed, not the mutant, so it must not count as killed."""
    from helpers.mutation import run

    ex = nb01.blocks_per_grid
    m, tree, ns, call = next(iter(mutants(ex)))
    monkeypatch.setattr(
        type(ex),
        "grade",
        lambda self, *a, **k: type(
            "R", (), {"status": "error", "message": "your code raised ModuleNotFoundError: x"}
        )(),
    )
    assert not run.grade(ex, m, tree, ns, call).killed
