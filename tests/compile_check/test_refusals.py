"""The compile check refuses, with its own sentence, each kernel a GPU compiler refuses but the
CPU tracer runs (tests/refused/kernels.py), passes a correct kernel, caches, and keeps one server."""

import pytest  # noqa: E402

import helpers  # noqa: E402,F401 - decides CPU/GPU mode before numba is imported
from helpers.compile_check import client, compile_check  # noqa: E402
from refused.kernels import ARGS, CASES, good  # noqa: E402


def test_a_correct_kernel_compiles():
    r = compile_check(good, ARGS)
    assert r.ok is True, r.message


@pytest.mark.parametrize("family,kernel,words", CASES, ids=[c[0] for c in CASES])
def test_refused_kernel_fails_with_its_sentence(family, kernel, words):
    r = compile_check(kernel, ARGS)
    assert r.ok is False, f"{family}: {r.message}"
    assert words in r.message, r.message
    assert "\n" not in r.message and "No implementation" not in r.message and len(r.message) < 400


def test_sentences_are_distinct():
    messages = {compile_check(k, ARGS).message.split(":")[0].split(" (line")[0] for _, k, _ in CASES}
    assert len(messages) >= len(CASES) - 2  # the three shared-shape cases share one sentence


def test_repeated_check_is_cached(monkeypatch):
    first = compile_check(good, ARGS)
    monkeypatch.setattr(client._STATE, "get", lambda: pytest.fail("a repeated check asked the compile server again"))
    r = compile_check(good, ARGS)
    assert r.ok is True and r == first


def test_server_process_is_reused():
    compile_check(good, ARGS)
    pid = client.server().pid
    client.clear_cache()
    assert compile_check(good, ARGS).ok is True
    assert client.server().pid == pid


def test_dead_server_is_not_the_learners_fault(monkeypatch):
    monkeypatch.setattr(client, "SERVER", client.SERVER.with_name("missing_server.py"))
    client.shutdown()
    client.clear_cache()
    r = compile_check(good, ARGS)
    assert r.ok is None and "not your mistake" in r.message
    monkeypatch.undo()
    client.shutdown()


def test_trace_reports_a_refusal_when_asked():
    from helpers import trace
    from refused.kernels import uses_list

    t = trace(uses_list, 2, 32, *[a.copy() if hasattr(a, "copy") else a for a in ARGS], compile_check=True)
    assert t.compiled.ok is False and not t.ok and "Python list" in t.summary()
    assert trace(good, 2, 32, *[a.copy() if hasattr(a, "copy") else a for a in ARGS]).compiled is None


# -- a broken compiler install is never blamed on the learner's kernel -----------------------------
def test_the_server_tells_a_broken_install_from_a_refused_kernel():
    """Run the server module's classifier in its own process (it imports the real Numba there)."""
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('srv', {str(client.SERVER)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "from numba.core.errors import TypingError\n"
        "print(m._environment_problem(AttributeError(\"module 'numpy' has no attribute 'row_stack'\")),\n"
        "      m._environment_problem(OSError('libnvvm.so: cannot open shared object file')),\n"
        "      m._environment_problem(TypingError('No implementation of function')),\n"
        "      m._environment_problem(AttributeError(\"'list' object has no attribute 'x'\")))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True", "False", "False"], out.stdout + out.stderr


def test_a_broken_install_answer_is_could_not_run():
    from helpers.compile_check import _result

    r = _result({"functions": [], "kernel": "k"}, {"ok": None, "kind": "AttributeError", "message": "module numpy"})
    assert r.ok is None and "could not run" in r.message and "not your mistake" in r.message


def test_a_right_kernel_whose_compile_check_could_not_run_is_unchecked_not_passed(monkeypatch):
    from helpers import compile_check as cc
    from helpers.problems import nb02

    broken = cc.CompileResult(None, "the GPU compile check could not run (no NVVM); this is not your mistake.")
    monkeypatch.setattr(cc, "start", lambda kernel, args, timeout=None: cc.Pending(None, done=broken))
    r = nb02.saxpy.grade(nb02.saxpy.reference_answer(), seed=1, **nb02.saxpy.reference_options())
    assert r.status == "unchecked" and r.points == 0, r.line()
    assert "right numbers on the CPU tracer" in r.message and "make lab" in r.message, r.message
