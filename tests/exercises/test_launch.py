"""Launch answers judged by arithmetic for n = 1, 1,000, 10^6 and 10^9, before the kernel runs."""

import pytest

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.exercises import launch
from helpers.problems import nb02

SAXPY = nb02.saxpy


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


def _grade(launch_answer):
    return SAXPY.grade(SAXPY.reference, seed=1, launch=launch_answer)


@pytest.mark.parametrize(
    "answer",
    [
        SAXPY.launch.example,
        lambda n: ((n + 255) // 256, 256),
        lambda n: ((n + 1023) // 1024, 1024),
        lambda n: ((n + 31) // 32, 32),
    ],
)
def test_right_launches_pass(answer):
    r = _grade(answer)
    assert r.status == "passed", r.message


@pytest.mark.parametrize(
    "answer, says",
    [
        ((4, 256), "your launch is the same for every n: for n = 1,000,000,000 it starts only 1,024 threads"),
        ((4, 32), "your launch is the same for every n: for n = 1,000,000,000 it starts only 128 threads"),
        ((2**21, 1024), "your launch is the same for every n: for n = 1 your launch starts 2,097,152 blocks"),
        (lambda n: (128, (n + 127) // 128), "your launch returns (threads, blocks)"),
        (lambda n: (n, 1), "blocks of 1 thread: a GPU runs threads in warps of 32"),
        (lambda n: ((n + 99) // 100, 100), "use a multiple of 32 threads per block"),
        (
            lambda n: (n // 128 + 1, 128),
            "for n = 1,000,000,000 your launch starts 7,812,501 blocks of 128 threads, 1 more than the 7,812,500",
        ),
        (
            lambda n: (min((n + 127) // 128, 4), 128),
            "your launch caps the grid at 4 blocks (the same for n = 1,000,000 and 1,000,000,000), so for "
            "n = 1,000 only 512 threads start",
        ),
        (lambda n: (min((n + 255) // 256, 80), 256), "let the blocks grow with n"),
        (lambda n: (n // 64, 64), "the last, partial block"),
    ],
)
def test_wrong_launches_fail_before_anything_runs(answer, says, monkeypatch):
    monkeypatch.setattr(
        "helpers.exercises.executor.LocalExecutor.trace", lambda *a, **k: pytest.fail("the kernel ran")
    )  # arithmetic only: nothing runs
    r = _grade(answer)
    assert r.status == "failed" and says in r.message, r.message


@pytest.mark.parametrize(
    "answer, says",
    [
        ((2**31, 1024), "2,147,483,647 blocks along x"),
        (lambda n: ((n + 31) // 32, 2048), "2048 threads per block is more than the 1024"),
        (lambda n: ((1, (n + 31) // 32), 32), "65,535 along y"),
    ],
)
def test_launches_a_gpu_refuses_are_errors(answer, says, monkeypatch):
    monkeypatch.setattr("helpers.exercises.executor.LocalExecutor.trace", lambda *a, **k: pytest.fail("the kernel ran"))
    r = _grade(answer)
    assert r.status == "error" and says in r.message, r.message


def test_allowed_block_sizes_and_warp_rule_are_per_exercise():
    rule = launch.learner_launch(lambda n: ((n + 255) // 256, 256), block_sizes=(128,))
    with pytest.raises(launch.Failed, match="one of 128"):
        launch.judge_launch(rule, rule.example, lambda n: launch.validate_launch(rule.example(n)))
    loose = launch.learner_launch(lambda n: (n, 1), warp_multiple=False)
    launch.judge_launch(loose, loose.example, lambda n: launch.validate_launch(loose.example(n)))


def test_a_zero_launch_says_what_numba_does_and_how_to_round_up():
    """On the H100, numba-cuda 0.30.4 refused kernel[0, 32] and kernel[1, 0] with
    "ValueError: LaunchConfig.grid/block values must be >= 1" (it does not silently run nothing)."""
    from helpers.errors import LearnerError
    from helpers.exercises.launch import validate_launch

    with pytest.raises(LearnerError) as blocks:
        validate_launch((0, 32))
    with pytest.raises(LearnerError) as threads:
        validate_launch((4, 0))
    assert "Numba refuses a launch with 0 blocks" in str(blocks.value) and "(n + threads - 1)" in str(blocks.value)
    assert "Numba refuses a launch with 0 threads" in str(threads.value) and "round up" not in str(threads.value)
