"""The fuzz suite: learner mistakes and bad inputs (tests/fuzz/cases.py) run through a real ipykernel.

One python3 ipykernel (the kernel nbval runs the notebooks in) with COURSE_MODE=cpu, the repo root on
PYTHONPATH, notebooks/ as its folder and a temporary progress file, so nothing is written into the
checkout. Each case is one cell; what the cell showed (streams, displays, errors) must
(a) hold no traceback through helpers/, (b) hold no line of helpers' safety net ("a bug in the
course's helpers"), (c) match the case's sentence, and (d) finish in time. Cases marked fresh (or
with their own environment) get a kernel of their own.
"""

from __future__ import annotations

import re

import pytest

from fuzz.cases import CASES, EXERCISES, PRELUDE
from fuzz.kernel import BUG_LINE, ROOT, Kernel, Output

HELPERS_DIR = str(ROOT / "helpers") + "/"


def _env(tmp_path, **extra) -> dict:
    return {
        "COURSE_MODE": "cpu",
        "PYTHONPATH": str(ROOT),
        "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json"),
        "COURSE_WATCHDOG_S": "20",
        **extra,
    }


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    kernel = Kernel(_env(tmp_path_factory.mktemp("fuzz")), prelude=PRELUDE)
    try:
        out = kernel.started
        assert not out.errors and "CPU mode" in out.text, f"the prelude failed:\n{out.text}"
        yield kernel
    finally:
        kernel.close()


def verdict(case, out: Output) -> list[str]:
    """What is wrong with one case's output (empty: it passed)."""
    problems = []
    if out.timed_out:
        problems.append(f"the cell ran past {case.timeout:.0f} s (it hung, or the watchdog did not stop it)")
    if not case.traceback_ok:
        problems += [
            f"a traceback through helpers reached the learner:\n{tb[-3000:]}"
            for tb in out.helpers_tracebacks(HELPERS_DIR)
        ]
    if BUG_LINE in out.text:
        problems.append("helpers' safety net fired (an unexpected exception inside helpers): fix the bug it names")
    if not re.search(case.expect, out.text, re.IGNORECASE | re.DOTALL):
        problems.append(f"the output does not say {case.expect!r}")
    return problems


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, shared, tmp_path):
    if case.fresh or case.env:
        kernel = Kernel(_env(tmp_path, **case.env))
        try:
            out = kernel.run(case.code, timeout=case.timeout)
        finally:
            kernel.close()
    else:
        out = shared.run(case.code, timeout=case.timeout)
    problems = verdict(case, out)
    assert not problems, "\n".join(problems) + f"\n--- the cell:\n{case.code}\n--- what it showed:\n{out.text[-4000:]}"


# -- the table covers what it claims to, and the checks above can fail ---------------------------------
def test_every_exercise_has_its_cases():
    """A new exercise needs its entry in EXERCISES (a wrong kind of answer and a hostile object)."""
    from helpers.problems import all_exercises

    assert set(EXERCISES) == {e.id for e in all_exercises()}


ENTRY_POINTS = {
    # module: public names a learner calls (each must appear in some case's cell)
    "helpers": ["trace", "progress", "last_error", "gpu_only", "size", "banner", "env.report"],
    "helpers.geometry": ["grid_explorer", "launch_1d", "launch_2d", "blocks_for", "draw_launch"],
    "helpers.tracer.Trace": [
        "show",
        "show_coalescing",
        "show_banks",
        "summary",
        "block_of",
        "thread_of",
        "const_reads",
    ],
    "helpers.exercises": ["check", "hint", "solution", "grade"],
    "helpers.cuda_c": [
        "compile",
        "check",
        "entry_points",
        "cubin_arch",
        "source_of",
        "elementwise_source",
        "reduction_source",
        "pycuda_elementwise_source",
        "signature_probe",
    ],
    "helpers.ptx": ["ptx.run", "ptx.trace"],
    "helpers.profiling": ["ncu", "parse", "profiling.show"],
    "helpers.standins": [
        "library",
        "RawKernel",
        "ElementwiseKernel",
        "ReductionKernel",
        "SourceModule",
        "mem_alloc",
        "memcpy_htod",
        "prepare",
        "prepared_call",
        "gpuarray.zeros",
        "Program",
        "LaunchConfig",
        "core.launch",
        "cuDeviceGet",
        "cuModuleGetFunction",
        "cuMemAlloc",
        "cuLaunchKernel",
        "reduce_into",
        "inclusive_scan",
        "exclusive_scan",
        "radix_sort",
        "CountingIterator",
    ],
}


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_every_entry_point_has_a_case(module):
    cells = "\n".join(c.code for c in CASES)
    missing = [name for name in ENTRY_POINTS[module] if not re.search(rf"\b{re.escape(name)}\(", cells)]
    assert not missing, f"no case calls {module}'s {missing}"


def test_the_cuda_c_entry_points_listed_are_the_public_ones():
    """A new public function in helpers.cuda_c needs a case (or a reason here why a learner never calls it)."""
    import inspect

    from helpers import cuda_c

    public = {
        n
        for n, f in vars(cuda_c).items()
        if inspect.isfunction(f) and not n.startswith("_") and f.__module__ == cuda_c.__name__
    }
    # Called by the stand-ins and the checks (NVRTC's include folders, CuPy's reduction threads, a failed
    # compile's sentence), never by a learner's cell.
    course_only = {"compile_failure", "include_options", "reduction_threads"}
    assert public == set(ENTRY_POINTS["helpers.cuda_c"]) | course_only


def test_the_checks_catch_a_real_traceback_and_a_real_bug(shared):
    """The detectors above are not vacuous: a traceback printed from inside helpers, and an exception the
    safety net has to catch (helpers broken on purpose, then mended), are both seen as failures."""
    printed = shared.run(
        "import traceback\ntry:\n    geometry.launch_1d(-1, 1)\nexcept Exception:\n    traceback.print_exc()",
        timeout=30,
    )
    assert printed.helpers_tracebacks(HELPERS_DIR), printed.text
    broken = shared.run(
        "import helpers.geometry.launch as _L\n_saved = _L._whole\n_L._whole = None\n"
        "try:\n    geometry.launch_1d(5, 5)\nfinally:\n    _L._whole = _saved",
        timeout=30,
    )
    assert BUG_LINE in broken.text, broken.text
    ok = [c for c in CASES if c.name == "launch_1d_negative_n"][0]
    assert verdict(ok, broken), "a safety-net line must fail a case"
    assert verdict(ok, shared.run(ok.code, timeout=30)) == []


def test_a_hanging_cell_is_reported_and_the_kernel_recovers(shared):
    """(d) above: a cell past its time is a failure, and the cases after it still run in a working kernel."""
    hung = shared.run("import time\ntime.sleep(60)", timeout=2)
    assert hung.timed_out
    case = [c for c in CASES if c.name == "launch_1d_negative_n"][0]
    assert "the cell ran past" in verdict(case, hung)[0]
    assert verdict(case, shared.run(case.code, timeout=30)) == []
