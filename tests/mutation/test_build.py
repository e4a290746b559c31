"""A mutant's tree made into a function with readable source (helpers/mutation/build.py), and the
names a mutant reads that nothing defines."""

import ast
import inspect
import re
import tempfile
import textwrap

import pytest

import helpers  # noqa: F401  - the course rule: helpers before numba
from helpers.mutation.build import build, function_tree, globals_of, mutant_dir, unresolved

SCALE = 3


def _reference(a, n):
    """A module-level reference: its tree and its globals are this file's."""
    return a * SCALE + n


def _tree(source):
    return ast.parse(textwrap.dedent(source).strip()).body[0]


@pytest.fixture(autouse=True)
def _mutants_here(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_MUTANT_DIR", str(tmp_path / "mutants"))
    return tmp_path / "mutants"


def test_mutant_dir_is_the_environments_or_one_in_the_temporary_directory(tmp_path, monkeypatch, _mutants_here):
    assert mutant_dir() == _mutants_here and _mutants_here.is_dir()
    monkeypatch.delenv("COURSE_MUTANT_DIR")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert mutant_dir() == tmp_path / "tmp" / "course-mutants" and mutant_dir().is_dir()


def test_function_tree_is_the_def_of_a_function_and_globals_of_its_module():
    tree = function_tree(_reference)
    assert isinstance(tree, ast.FunctionDef) and tree.name == "_reference"
    assert ast.unparse(tree.body[-1]) == "return a * SCALE + n"
    assert globals_of(_reference) is _reference.__globals__ and globals_of(_reference)["SCALE"] == 3


def test_function_tree_dedents_a_nested_def_with_its_decorator():
    def tag(fn):
        return fn

    @tag
    def inner(x):
        return x + 1

    tree = function_tree(inner)
    assert ast.unparse(tree) == "@tag\ndef inner(x):\n    return x + 1"


def test_function_tree_and_globals_of_look_through_a_kernel_object_to_its_python_function():
    class FakeCUDAKernel:  # what the simulator's @cuda.jit makes: the learner's function is .fn
        def __init__(self, fn):
            self.fn = fn

    kernel = FakeCUDAKernel(_reference)
    assert function_tree(kernel).name == "_reference"
    assert globals_of(kernel) is _reference.__globals__


def test_build_runs_the_namespaces_decorators_and_getsource_shows_the_mutant_text(_mutants_here):
    def tag(fn):
        fn.tagged = True
        return fn

    tree = _tree("@tag\ndef f(a):\n    return a + 1")
    made = build(tree, {"tag": tag})
    text = "@tag\ndef f(a):\n    return a + 1\n"
    assert made.tagged and made(1) == 2
    assert inspect.getsource(made) == text == ast.unparse(tree) + "\n"
    (path,) = _mutants_here.iterdir()
    assert re.fullmatch(r"mutant_[0-9a-f]{16}\.py", path.name) and path.read_text() == text
    assert made.__code__.co_filename == str(path)


def test_build_gives_source_and_a_module_of_its_own_and_leaves_the_namespace_alone(_mutants_here):
    tree = _tree("def f(a):\n    return a + K[0]")
    k = [10]
    namespace = {"K": k}
    made = build(tree, namespace)
    assert made(1) == 11
    assert inspect.getsource(made) == "def f(a):\n    return a + K[0]\n"
    assert inspect.getsourcefile(made).startswith(str(_mutants_here))
    assert made.__globals__["K"] is k and made.__globals__ is not namespace
    assert re.fullmatch(r"course_mutant_[0-9a-f]{16}", made.__module__)
    assert made.__globals__["__file__"] == made.__code__.co_filename
    assert namespace == {"K": k}  # f, __name__ and __file__ went into a copy
    namespace["K"] = [99]
    assert made(1) == 11  # the copy was taken at build time


def test_the_same_mutant_built_twice_is_one_file_and_two_mutants_are_two(_mutants_here):
    one, two = _tree("def f(a):\n    return a + 1"), _tree("def f(a):\n    return a - 1")
    first, again, other = build(one, {}), build(one, {}), build(two, {})
    assert first.__code__.co_filename == again.__code__.co_filename != other.__code__.co_filename
    assert len(list(_mutants_here.iterdir())) == 2
    assert (first(5), again(5), other(5)) == (6, 6, 4)


def test_a_file_with_other_text_at_the_mutants_path_is_rewritten(_mutants_here):
    tree = _tree("def f(a):\n    return a * 2")
    path = build(tree, {}).__code__.co_filename
    with open(path, "w") as fh:
        fh.write("garbage\n")
    assert inspect.getsource(build(tree, {})) == "def f(a):\n    return a * 2\n"


def test_build_with_call_returns_what_a_factory_makes():
    tree = _tree(
        """
        def factory():
            made.append(1)
            def inner(x):
                return x * STEP
            return inner
        """
    )
    made = []
    inner = build(tree, {"STEP": 4, "made": made}, call=True)
    assert inner.__name__ == "inner" and inner(2) == 8 and made == [1]
    factory = build(tree, {"STEP": 4, "made": made})
    assert factory.__name__ == "factory" and made == [1]  # not called without call=True


def test_unresolved_is_empty_when_every_name_is_defined_somewhere():
    tree = _tree(
        """
        def f(a, *rest, key=1, **more):
            import math as m
            import numpy.linalg
            from os import path
            total = G
            for i, (j, k) in enumerate(rest):
                total += i + j + k
            while total:
                del total
                total = 0
            squares = [s * s for s in range(a) if s]
            g = lambda z: z + key
            def helper(w):
                return w
            try:
                pass
            except ValueError as err:  # once reported: the handler's name is a local too
                print(err)
            return m.pi, numpy.linalg, path, more, squares, g, helper, len, total
        """
    )
    assert unresolved(tree, {"G": 1}) == set()


def test_unresolved_reports_the_names_nothing_defines():
    tree = _tree("def f(a):\n    b = a + c\n    return np.empty(b) + G + undefined(b)")
    assert unresolved(tree, {}) == {"c", "np", "G", "undefined"}
    assert unresolved(tree, {"np": object(), "G": 2}) == {"c", "undefined"}


def test_unresolved_finds_the_name_an_operator_brings_in():
    # a host array for cuda.device_array is np.empty: a module without numpy cannot run that mutant
    tree = _tree("def launch(n):\n    return np.empty(n)")
    assert unresolved(tree, {"cuda": object()}) == {"np"}
    assert unresolved(tree, {"cuda": object(), "np": object()}) == set()
