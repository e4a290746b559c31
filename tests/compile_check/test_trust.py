"""Judged grading: the student's process only describes a kernel; the grader's own compile server
says whether it compiles (helpers/compile_check/trust.py vets the description first). Every
learner mistake must still get its compiler sentence that way, a description that would run code
in the server is refused (the kernel is then unchecked, never passed), and a student's process
that answers "it compiles" is not believed."""

import json
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401 - decides CPU/GPU mode before numba is imported
from helpers.compile_check import client, compile_check, describe, start_request
from helpers.compile_check.trust import vet
from helpers.grading import remote
from helpers.problems import nb02
from refused.kernels import ARGS, CASES, good
from support.loopback import Loopback, grade_judged

SIG = "void(float32[::1], float32[::1])"


@cuda.jit("void(float32[::1], float32[::1])")
def with_string_signature(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


@cuda.jit(SIG)
def with_named_signature(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


F32 = np.float32(2)


@cuda.jit
def with_globals(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * F32


WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)  # a small constant table: what kernels really use


@cuda.jit
def with_a_table(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * WEIGHTS[i % 3]


LEGIT = [good, with_string_signature, with_named_signature, with_globals, with_a_table]


def _args(kernel):
    a = np.arange(8, dtype=np.float32)
    return ARGS if kernel is good else (a, np.zeros_like(a))


@pytest.mark.parametrize("kernel", LEGIT, ids=lambda k: k.__name__)
def test_what_describe_writes_for_a_correct_kernel_is_accepted_and_compiles(kernel):
    # in the learner's own process too: @cuda.jit(SIG) used to be refused ("your kernel uses SIG")
    assert compile_check(kernel, _args(kernel)).ok is True
    req = describe.request(kernel, _args(kernel))
    assert vet(json.loads(json.dumps(req))) is not None
    r = start_request(json.loads(json.dumps(req))).result()
    assert r.ok is True, r.message


@pytest.mark.parametrize("family,kernel,words", CASES, ids=[c[0] for c in CASES])
def test_each_learner_mistake_gets_the_same_sentence_from_a_described_kernel(family, kernel, words):
    req = json.loads(json.dumps(describe.request(kernel, ARGS)))  # as it crosses the wire
    r = start_request(req).result()
    assert r.ok is False and words in r.message, r.message
    assert r.message == compile_check(kernel, ARGS).message


def _good_request():
    return json.loads(json.dumps(describe.request(good, ARGS)))


def _with(change):
    req = _good_request()
    change(req)
    return req


def _source(req, text):
    req["functions"][-1]["source"] = text


HOSTILE = {
    "a statement after the def": lambda r: _source(r, r["functions"][-1]["source"] + "import os\n"),
    "a class instead of a def": lambda r: _source(r, "class good:\n    pass\n"),
    "a type text that imports": lambda r: r["argtypes"].__setitem__(0, "__import__('os').getcwd()"),
    "a type text with a lambda": lambda r: r["argtypes"].__setitem__(0, "(lambda: 1)()"),
    "a type text reading a dunder": lambda r: r["argtypes"].__setitem__(0, "float32.__class__"),
    "a global module outside the libraries": lambda r: r["globals"].__setitem__("SCALE", ["module", "os"]),
    "a global attribute outside the libraries": lambda r: r["globals"].__setitem__("SCALE", ["attr", "os", "system"]),
    "a global numba type that is code": lambda r: r["globals"].__setitem__("SCALE", ["numba_type", "__import__('os')"]),
    "a global that is not a constant": lambda r: r["globals"].__setitem__("SCALE", ["literal", "print(1)"]),
    "a signature that runs code": lambda r: r.__setitem__("signature", "\"__import__('os').getcwd()\""),
    "a signature naming a builtin": lambda r: r.__setitem__("signature", "open('x')"),
    "an unknown key": lambda r: r.__setitem__("extra", 1),
    "a source nested past the parser": lambda r: _source(
        r,
        "def good(x, out, n):\n" + "".join("    " * (k + 1) + "if x:\n" for k in range(300)) + "    " * 301 + "pass\n",
    ),
    "functions that are not a list of dicts": lambda r: r.__setitem__("functions", [1, 2]),
    "globals whose spec is a number": lambda r: r["globals"].__setitem__("SCALE", 5),
    "a kernel name that is not a name": lambda r: r.__setitem__("kernel", "good; import os"),
    # issue 29: the outputs themselves, made after the inputs were seen, smuggled in as a constant table
    "a global table large enough to hold the outputs": lambda r: r["globals"].__setitem__(
        "ANSWERS", ["array", "<f4", [0.5] * 2048, [2048]]
    ),
}


@pytest.mark.parametrize("what", HOSTILE)
def test_a_description_that_would_run_code_is_refused_and_left_unchecked(what):
    r = start_request(_with(HOSTILE[what])).result()
    assert r.ok is None and "skipped" in r.message, r.message


def test_the_server_runs_no_annotation_or_default_of_a_def(tmp_path):
    """vet lets annotations and defaults through (Numba ignores them); the server must strip them, as
    it strips decorators, so that defining the function runs nothing."""
    marker = tmp_path / "ran"
    req = _good_request()
    src = req["functions"][-1]["source"]
    hook = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    req["functions"][-1]["source"] = src.replace("def good(x, out, n)", f"def good(x: {hook}, out, n={hook}) -> {hook}")
    assert vet(req) is req
    state = client.Private(client.Server)
    try:
        r = start_request(req, state).result()
    finally:
        state.close()
    assert r.ok is True, r.message
    assert not Path(marker).exists()


class ForgingServer(Loopback):
    """A student's process that answers as the first protocol let it: 'it compiles', in the compile
    request and in the description it gives at check()."""

    def request(self, op, **fields):
        if op == "compile":
            self.ops.append(op)
            return {"ok": True, "message": "compiles for the GPU.", "seconds": 0.1}
        return super().request(op, **fields)

    def stand_in(self, obj, kind):
        desc = self.server.describe(obj, kind)
        desc["compile"] = {"ok": True, "message": "compiles for the GPU."}
        return remote.answer_from(self, desc)


def test_a_student_process_saying_it_compiles_is_not_believed(monkeypatch):
    @cuda.jit  # right numbers on the tracer, refused by the GPU compiler
    def saxpy(alpha, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            tmp = [alpha * x[i]]
            out[i] = tmp[0] + y[i]

    direct = nb02.saxpy.grade(saxpy, seed=4, launch=lambda n: ((n + 127) // 128, 128))
    assert direct.status == "failed" and "Python list" in direct.message  # on a GPU too (run_gpu's refusal)
    monkeypatch.setattr("support.loopback.Loopback", ForgingServer)
    judged, chan = grade_judged(nb02.saxpy, saxpy, 4, {"launch": lambda n: ((n + 127) // 128, 128)})
    assert "compile" not in chan.ops
    assert judged.status != "passed", judged.line()


class ForgingTracer(Loopback):
    """A student's process whose tracer says what a clean kernel's would: no verdicts, and the
    fewest reads. Its traces must not be the ones the judge believes."""

    def request(self, op, **fields):
        reply = super().request(op, **fields)
        if op == "trace":
            reply["verdicts"] = []
            reply["metrics"] = {k: 0 for k in reply.get("metrics") or {}}
        return reply


FORGED = [
    ("stencil", "race"),
    ("stencil", "over budget"),
    ("matmul_tiled", "race"),
    ("matmul_tiled", "over budget"),
    ("transpose_padded", "bank conflicts"),
]


@pytest.mark.parametrize("name,kind", FORGED, ids=[f"{n}-{k}" for n, k in FORGED])
def test_a_student_process_hiding_a_race_or_a_budget_is_not_believed(monkeypatch, name, kind):
    from helpers.problems import nb05
    from wrong_solutions.nb05 import WRONG

    ex = getattr(nb05, name)
    wrong = next(w for w in WRONG[name] if w.kind == kind)
    direct = ex.grade(wrong.answer, seed=3, **wrong.options)
    assert direct.status == "failed" and wrong.says in direct.message
    monkeypatch.setattr("support.loopback.Loopback", ForgingTracer)
    judged, chan = grade_judged(ex, wrong.answer, 3, wrong.options)
    assert "judge trace" in chan.ops and "trace" not in chan.ops  # the judge's tracer ran it
    assert (judged.status, judged.message) == (direct.status, direct.message)


def test_a_gpu_launch_numba_refused_gets_the_compile_sentence_not_numbas_report():
    """On a GPU the launch compiles: a kernel Numba refuses used to read 'your kernel failed on the
    GPU (NumbaRuntimeError: Failed in cuda mode pipeline ...' with Numba's colour codes, graded
    error. It now gets the compile check's sentence, graded failed, as in CPU mode."""
    from numba.core.errors import NumbaRuntimeError, TypingError

    from helpers.exercises.executor import _refusal
    from refused.kernels import uses_list

    refused = _refusal(uses_list, ARGS, NumbaRuntimeError("NRT required but not enabled"))
    assert refused is not None and refused.refused and "Python list" in str(refused)
    assert "\x1b" not in str(refused) and "\n" not in str(refused)
    assert _refusal(good, ARGS, TypingError("a typing error of a kernel that compiles here")) is None
    assert _refusal(uses_list, ARGS, RuntimeError("an illegal address")) is None  # a crash, not a refusal


def test_one_submissions_slow_compile_does_not_hold_up_anothers():
    """The batch grader judges submissions side by side, each with its own compile server; their
    compiles used to wait in one shared queue, so a neighbour's 60 s compile delayed every other."""
    import threading

    release = threading.Event()

    class Server:
        def __init__(self, slow):
            self.slow = slow

        def ask(self, request, timeout):
            if self.slow:
                release.wait(10)
            return {"ok": True}

        def alive(self):
            return True

        def close(self):
            pass

    slow, quick = client.Private(lambda: Server(True)), client.Private(lambda: Server(False))
    try:
        stuck = client.submit({"k": 1}, state=slow)
        # The slow server answers only when released (in `finally`): on one shared waiting thread the
        # quick request would wait behind it for good, and this generous limit would end the test.
        assert client.submit({"k": 2}, state=quick).result(timeout=300) == {"ok": True}
        assert not stuck.done()
    finally:
        release.set()
        slow.close()
        quick.close()


def _answers_table(args) -> dict:
    """What a student's process that read the launch's inputs describes: a vector_add whose global
    table already holds a + b (issue 29: the description was asked for after the inputs were sent)."""
    a, b = args[0], args[1]
    src = "def vector_add(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = ANS[i]\n"
    return {
        "kernel": "vector_add",
        "functions": [{"name": "vector_add", "filename": "<cell>", "firstlineno": 1, "source": src, "device": False}],
        "globals": {"cuda": ("module", "numba.cuda"), "ANS": ("literal", repr(tuple(float(v) for v in a + b)))},
        "argtypes": [describe.arg_type(x) for x in args],
        "params": ["a", "b", "out"],
        "signature": None,
        "line": 1,
    }


class SmugglingServer(Loopback):
    """A student's process that patched its own describe (or json.dumps, or inspect) and answers any
    request that carries inputs with a kernel description built from them."""

    def request(self, op, **fields):
        if op == "compile":
            self.ops.append(op)
            return {"request": _answers_table(fields["args"])}
        return super().request(op, **fields)


@cuda.jit
def writes_nothing(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 0.0


def test_a_kernel_description_made_after_the_inputs_changes_nothing(monkeypatch):
    monkeypatch.setattr("support.loopback.Loopback", SmugglingServer)
    judged, chan = grade_judged(nb02.vector_add, writes_nothing, 4, {})
    assert judged.status == "failed", judged.line()
    assert "compile" not in chan.ops  # the judge never asks the student's process once inputs exist


def test_a_global_tuple_too_large_for_a_constant_table_is_refused():
    req = _answers_table([np.ones(300, np.float32), np.ones(300, np.float32), np.zeros(300, np.float32)])
    with pytest.raises(describe.NotDescribable, match="tuple of 300 values"):
        vet(req)


_ATTRIBUTE_X = """
@cuda.jit
def first_thread_only(x, out):
    if cuda.threadIdx.x == 0 and cuda.blockIdx.x == 0:
        out[0] = x[0] + len(TABLE)
"""


def test_an_attribute_named_like_a_big_global_is_not_sent_as_that_global():
    """cuda.threadIdx.x puts "x" among the code's names; the notebook's x = np.random...(300) of another
    cell (solutions/06 has one) is not the kernel's, so the description neither sends it nor gets refused."""
    import linecache

    linecache.cache["<cell x>"] = (len(_ATTRIBUTE_X), None, _ATTRIBUTE_X.splitlines(True), "<cell x>")
    ns = {"cuda": cuda, "x": np.zeros(300, np.float32), "threadIdx": np.zeros(300), "TABLE": (1, 2)}
    exec(compile(_ATTRIBUTE_X, "<cell x>", "exec"), ns)  # noqa: S102 - the test's own kernel
    req = describe.request(ns["first_thread_only"], (np.zeros(4, np.float32), np.zeros(1, np.float32)))
    assert set(req["globals"]) == {"cuda", "TABLE"}, req["globals"]
    assert vet(req) is req
