"""A library answer is described in the student's process and run again in the judge's worker
(helpers/grading/host.py): only source that cannot reach the worker's frames, modules or counts is
run, and the libraries it sees hand out no module."""

import pytest

from helpers.grading import host

GOOD = "def f(x):\n    out = cp.empty_like(x)\n    return out\n"


def _desc(source, **globals_):
    return {"function": "f", "functions": [{"name": "f", "source": source}], "globals": globals_}


@pytest.mark.parametrize(
    "source,words",
    [
        ("def f(x):\n    import os\n    return x\n", "uses import"),
        ("def f(x):\n    return (i for i in ()).gi_frame.f_back\n", "reads .(gi_frame|f_back)"),
        ("def f(x):\n    return x.__class__\n", "reads .__class__"),
        ("def f(x):\n    cc.exclusive_scan = len\n    return x\n", "assigns to .exclusive_scan"),
        ("def f(x):\n    return '{0.__class__}'.format(x)\n", "reads .format"),
        ("def f(x):\n    return __builtins__\n", "uses __builtins__"),
        ("class f:\n    pass\n", "not one def"),
    ],
)
def test_source_that_could_reach_the_worker_is_refused(source, words):
    with pytest.raises(host.NotRebuildable, match=words):
        host.vet(_desc(source, cp=("module", "cupy")))


def test_only_the_course_libraries_and_small_constants_are_globals():
    with pytest.raises(host.NotRebuildable, match="not a library"):
        host.vet(_desc(GOOD, cp=("module", "os")))
    with pytest.raises(host.NotRebuildable, match="larger than 256"):
        host.vet(_desc(GOOD, T=("array", "<f4", [0.0] * 300, [300])))
    with pytest.raises(host.NotRebuildable, match="oddly"):
        host.vet(_desc(GOOD, T=("literal", repr(tuple(range(10))))))


def test_the_rebuilt_function_sees_libraries_without_their_modules_or_builtins_beyond_the_safe_ones():
    fn = host.rebuild(_desc("def f(x):\n    return np.ctypeslib\n", np=("module", "numpy")))
    with pytest.raises(AttributeError, match="a module"):
        fn(1)
    fn = host.rebuild(_desc("def f(x):\n    return open('/etc/passwd')\n"))
    with pytest.raises(NameError):
        fn(1)
    assert host.rebuild(_desc("def f(x):\n    return np.cumsum(x)[-1]\n", np=("module", "numpy")))([1, 2]) == 3


def test_library_c_code_that_imports_lazily_works_when_the_rebuilt_function_calls_it():
    """CuPy and cuda.compute import from C through the calling frame's builtins: on a GPU, notebook 14's
    solution failed with KeyError: '__import__' before the rebuilt function's builtins had it."""
    import ctypes

    imp = ctypes.pythonapi.PyImport_ImportModule  # what such C code calls
    imp.restype, imp.argtypes = ctypes.py_object, [ctypes.c_char_p]
    assert host.rebuild(_desc("def f(g):\n    return g(b'json')\n"))(imp).__name__ == "json"
    with pytest.raises(host.NotRebuildable, match="uses __import__"):
        host.vet(_desc("def f(x):\n    return __import__('os')\n"))


def test_a_plain_function_is_described_with_its_own_helpers():
    import numpy as np

    def helper(x):
        return np.cumsum(x)

    def f(x):
        return helper(x)

    desc = host.vet(host.describe(f))
    assert [g["name"] for g in desc["functions"]] == ["f", "helper"]
    assert host.rebuild(desc)(np.arange(3)).tolist() == [0, 1, 3]


def test_notebook_16s_host_code_is_run_and_numba_cuda_shows_only_its_host_calls():
    """What notebook 16's answers use passes the vetting (a stream as a context manager, events, slices,
    pinned buffers, a launch on a stream); numba.cuda hands out nothing that compiles, takes a raw
    pointer or is a module, and no library attribute can be replaced."""
    from helpers.problems import nb16

    for ex in (nb16.time_kernel, nb16.pipeline, nb16.capture_steps):
        host.vet(host.describe(ex.reference_answer()))
    cuda = ("module", "numba.cuda")
    for attr in ("jit", "external_stream", "cudadrv", "driver", "select_device", "close"):
        fn = host.rebuild(_desc(f"def f(x):\n    return cuda.{attr}\n", cuda=cuda))
        with pytest.raises(AttributeError, match="not available"):
            fn(1)
    fn = host.rebuild(_desc("def f(x):\n    return cp.cuda.runtime\n", cp=("module", "cupy")))
    with pytest.raises(Exception, match="a module|needs a GPU"):  # CuPy's module; the CPU stand-in has none
        fn(1)
    with pytest.raises(host.NotRebuildable, match="assigns to .synchronize"):
        host.vet(_desc("def f(x):\n    cuda.synchronize = len\n    return x\n", cuda=cuda))
    with pytest.raises(host.NotRebuildable, match="reads ._log"):
        host.vet(_desc("def f(kernel, x):\n    return kernel._log\n", cuda=cuda))
    for module in ("numba", "helpers.exercises.streams", "json"):
        with pytest.raises(host.NotRebuildable, match="not a library"):
            host.vet(_desc(GOOD, cuda=("module", module)))
