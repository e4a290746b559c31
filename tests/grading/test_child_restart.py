"""A child that ends before any student code ran (no "ready" from it) is started once more:
a start-up hiccup of the machine must not cost a student their grade (seen on a loaded CI
machine: a correct notebook came out "not graded: the grader's process did not start")."""

import json  # noqa: E402

import helpers  # noqa: E402, F401
from submission_sets import fixtures as fx  # noqa: E402
from submission_sets.graded import SALT
from submission_sets.graded import records as read_records
from submission_sets.isolated import run_cli  # noqa: E402


def _setup(tmp_path):
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    (subs / "a").mkdir(parents=True)
    (subs / "a" / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(fx.perfect_cells())))
    return [subs, "--out", tmp_path / "out", "--course", course, "-j1", "--mode", "cpu", "--retries", "0"]


def test_a_child_that_never_started_is_started_again(tmp_path):
    rc, calls, err = run_cli("restart", [*_setup(tmp_path), "--salt", SALT])
    rec = read_records(tmp_path / "out")["a"]
    assert rc == 0 and calls == 2, err[-2000:]
    assert {e["status"] for e in rec["exercises"]} == {"passed"}, rec["exercises"]
    assert rec["runs"][0].get("restarted") is True


def test_a_notebook_that_kills_its_process_before_ready_is_not_restarted_forever(tmp_path):
    rc, calls, err = run_cli("never", [*_setup(tmp_path), "--salt", SALT])
    rec = read_records(tmp_path / "out")["a"]
    assert calls == 2, err[-2000:]
    assert {e["status"] for e in rec["exercises"]} == {"not_graded"}
    assert "did not start" in rec["exercises"][0]["message"]


def test_a_broken_gpu_context_is_found_by_asking_the_gpu():
    """The check's sentence for a failed launch need not name the CUDA error (found on an H200: the
    next exercise was graded 'error'); the child now asks the context itself after each step."""
    from helpers.grading.cells import gpu_context_broken

    class CudaAPIError(Exception):
        pass

    def illegal():
        raise CudaAPIError("[700] Call to cuCtxSynchronize results in CUDA_ERROR_ILLEGAL_ADDRESS")

    def unnamed():
        raise CudaAPIError("[719] unspecified launch failure")

    def fine():
        return None

    assert gpu_context_broken(illegal) and gpu_context_broken(unnamed)
    assert not gpu_context_broken(fine)
