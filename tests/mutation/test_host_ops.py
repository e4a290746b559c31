"""The host operators (helpers/mutation/host_ops.py), each applied through sites.mutate to a small
function written here: the exact mutant text and label of every site and variant, and the places
that are not sites."""

import ast
import textwrap

import pytest

import helpers  # noqa: F401  - the course rule: helpers before numba
from helpers.mutation import host_ops, kernel_ops
from helpers.mutation.sites import Context, mutate


def _src(text):
    return textwrap.dedent(text).strip()


def _mutants(source, name):
    tree = ast.parse(_src(source)).body[0]
    out = []
    for op in host_ops.OPERATORS:
        if op.name == name:
            out += [(label, ast.unparse(m)) for m, label in mutate(tree, op.match, op.variants, Context())]
    return out


def _one_line(source, name):
    """(label, the one line of the mutant that differs) per mutant."""
    original = _src(source).splitlines()
    out = []
    for label, text in _mutants(source, name):
        lines = text.splitlines()
        assert len(lines) == len(original), label
        (changed,) = [b.strip() for a, b in zip(original, lines) if a != b]
        out.append((label, changed))
    return out


def test_the_host_operators_are_these_and_share_the_kernels_guard_comparison_and_dtype_operators():
    names = [op.name for op in host_ops.OPERATORS]
    assert set(names) == {
        "comparison_boundary",
        "comparison_negated",
        "guard_removed",
        "guard_inverted",
        "dtype_changed",
        "arithmetic",
        "floor_for_ceiling",
        "constant_off_by_one",
        "min_max_swapped",
        "host_not_device",
        "returned_on_host",
        "target_dropped",
    }
    shared = [op for op in host_ops.OPERATORS if op in kernel_ops.OPERATORS]
    assert [op.name for op in shared] == [op.name for op in kernel_ops.OPERATORS if op.name in set(names)]
    assert len(shared) == 6  # guard_removed is two operators: the if statement and the conditional expression


def test_a_host_guard_is_mutated_as_a_kernels_is():
    source = "def f(n, t):\n    if n < t:\n        n = t\n    return n"
    assert _one_line(source, "comparison_boundary") == [("line 2: boundary n < t -> n <= t", "if n <= t:")]
    assert _one_line(source, "guard_inverted") == [("line 2: guard inverted: if not n < t", "if not n < t:")]


@pytest.mark.parametrize(
    "expression, variants",
    [
        ("a + b", ["a - b"]),
        ("a - b", ["a + b"]),
        ("a * b", ["a // b", "a + b"]),
        ("a / b", ["a // b", "a * b"]),
        ("a // b", ["a / b", "a * b"]),
        ("a % b", ["a // b"]),
        ("a ** b", []),
        ("a << b", []),
    ],
)
def test_an_arithmetic_operator_is_swapped_for_its_likely_slips(expression, variants):
    assert _one_line(f"def f(a, b):\n    return {expression}", "arithmetic") == [
        (f"line 2: operator: {expression} -> {v}", f"return {v}") for v in variants
    ]


def test_a_swapped_operator_keeps_the_meaning_of_the_tree_it_sits_in():
    got = _one_line("def f(a, b, c):\n    return (a + b) * c - (b - c)", "arithmetic")
    assert got == [
        ("line 2: operator: (a + b) * c - (b - c) -> (a + b) * c + (b - c)", "return (a + b) * c + (b - c)"),
        ("line 2: operator: (a + b) * c -> (a + b) // c", "return (a + b) // c - (b - c)"),
        ("line 2: operator: (a + b) * c -> a + b + c", "return a + b + c - (b - c)"),
        ("line 2: operator: b - c -> b + c", "return (a + b) * c - (b + c)"),
        ("line 2: operator: a + b -> a - b", "return (a - b) * c - (b - c)"),
    ]
    # each mutant is the reference with one operator changed: 20 + 1, 5 - 1, 12 - 1, 20 - 5, 8 - 1
    values = {"a": 7, "b": 3, "c": 2}
    assert [eval(line[len("return ") :], values) for _, line in got] == [21, 4, 11, 15, 7]


def test_the_three_forms_of_rounding_up_become_a_floor_division():
    source = """
    def f(n, t):
        a = (n + t - 1) // t
        b = -(-n // t)
        c = math.ceil(n / t)
        d = np.ceil(n / 2)
        return a + b + c + d
    """
    assert sorted(_one_line(source, "floor_for_ceiling")) == [
        ("line 2: floor for ceiling: (n + t - 1) // t -> n // t", "a = n // t"),
        ("line 3: floor for ceiling: -(-n // t) -> n // t", "b = n // t"),
        ("line 4: floor for ceiling: math.ceil(n / t) -> n // t", "c = n // t"),
        ("line 5: floor for ceiling: np.ceil(n / 2) -> n // 2", "d = n // 2"),
    ]


@pytest.mark.parametrize(
    "expression",
    [
        "(n * t - 1) // t",  # once labelled "floor for ceiling -> n // t": it is no rounding up
        "(n + t - 1) // s",  # the divisor is not what was added
        "(n - 1) // t",
        "(n + 255) // 256",
        "-(+n // t)",
        "math.ceil(n)",
        "n // t",
    ],
)
def test_other_divisions_are_not_a_ceiling(expression):
    assert _mutants(f"def f(n, t, s):\n    return {expression}", "floor_for_ceiling") == []


def test_a_rounding_up_of_a_product_keeps_its_precedence():
    assert _one_line("def f(n, t):\n    return (n * 2 + t - 1) // t * t", "floor_for_ceiling") == [
        ("line 2: floor for ceiling: (n * 2 + t - 1) // t -> n * 2 // t", "return n * 2 // t * t")
    ]


def test_a_number_is_moved_by_one_each_way_and_other_constants_are_not():
    source = "def f(a):\n    b = a * 256 + 0.5\n    c = True\n    d = 'n'\n    e = None"
    assert _one_line(source, "constant_off_by_one") == [
        ("line 2: constant 0.5 -> 1.5", "b = a * 256 + 1.5"),
        ("line 2: constant 0.5 -> -0.5", "b = a * 256 + -0.5"),
        ("line 2: constant 256 -> 257", "b = a * 257 + 0.5"),
        ("line 2: constant 256 -> 255", "b = a * 255 + 0.5"),
    ]


def test_min_and_max_are_swapped():
    source = "def f(a, n):\n    return min(n, 4) + max(n, 1) + np.minimum(a, 0) + np.maximum(a, 1) + abs(n)"
    head = "return min(n, 4) + max(n, 1)"
    assert _one_line(source, "min_max_swapped") == [
        ("line 2: np.maximum -> np.minimum", f"{head} + np.minimum(a, 0) + np.minimum(a, 1) + abs(n)"),
        ("line 2: np.minimum -> np.maximum", f"{head} + np.maximum(a, 0) + np.maximum(a, 1) + abs(n)"),
        ("line 2: min -> max", "return max(n, 4) + max(n, 1) + np.minimum(a, 0) + np.maximum(a, 1) + abs(n)"),
        ("line 2: max -> min", "return min(n, 4) + min(n, 1) + np.minimum(a, 0) + np.maximum(a, 1) + abs(n)"),
    ]


def test_a_host_array_is_used_where_a_device_array_is_asked():
    source = """
    def f(a, n):
        d = cuda.to_device(a)
        o = cuda.device_array(n, dtype=np.float32)
        p = cuda.device_array_like(a)
        q = np.asarray(a)
    """
    said = "a host array where a device array is asked"
    assert _one_line(source, "host_not_device") == [
        (f"line 2: {said}: cuda.to_device(a) -> a", "d = a"),
        (
            f"line 3: {said}: cuda.device_array(n, dtype=np.float32) -> np.empty(n, dtype=np.float32)",
            "o = np.empty(n, dtype=np.float32)",
        ),
        (f"line 4: {said}: cuda.device_array_like(a) -> np.empty_like(a)", "p = np.empty_like(a)"),
    ]


def test_a_returned_device_array_is_returned_on_the_host():
    source = "def f(a):\n    if a:\n        return out\n    if a > 1:\n        return (out, a)\n    return a + 1"
    assert _one_line(source, "returned_on_host") == [
        (
            "line 3: the result returned on the host: return out -> return out.copy_to_host()",
            "return out.copy_to_host()",
        )
    ]


def test_target_and_parallel_keywords_are_dropped_one_at_a_time_and_fastmath_is_kept():
    source = """
    def f(g):
        u = vectorize(['f4(f4)'], target='cuda', fastmath=True)(g)
        v = numba.njit(parallel=True, cache=True)(g)
        w = numba.njit(fastmath=True)(g)
    """
    assert _one_line(source, "target_dropped") == [
        (
            "line 2: target= dropped: vectorize(['f4(f4)'], target='cuda', fastmath=True) -> "
            "vectorize(['f4(f4)'], fastmath=True)",
            "u = vectorize(['f4(f4)'], fastmath=True)(g)",
        ),
        (
            "line 3: parallel= dropped: numba.njit(parallel=True, cache=True) -> numba.njit(cache=True)",
            "v = numba.njit(cache=True)(g)",
        ),
    ]


def test_both_keywords_of_one_call_give_two_mutants():
    got = _one_line("def f(g):\n    return guvectorize(sig, target='parallel', parallel=True)(g)", "target_dropped")
    assert [line for _, line in got] == [
        "return guvectorize(sig, parallel=True)(g)",
        "return guvectorize(sig, target='parallel')(g)",
    ]


@pytest.mark.parametrize("call", ["prange(n)", "numba.prange(n)", "nb.prange(n)"])
def test_prange_becomes_range(call):
    source = f"def f(a, n):\n    for i in {call}:\n        a[i] = i\n    for j in range(n):\n        a[j] += 1"
    assert _one_line(source, "target_dropped") == [
        (f"line 2: prange -> range: {call} -> range(n)", "for i in range(n):")
    ]


def test_no_host_operator_changes_the_function_it_is_given():
    source = """
    def launch(x, n):
        t = 256
        d = cuda.to_device(x)
        out = cuda.device_array(n, dtype=np.float32)
        if n > 0:
            k[(n + t - 1) // t, t](d, out)
        return out
    """
    tree = ast.parse(_src(source)).body[0]
    before, text = ast.dump(tree), ast.unparse(tree)
    labels = []
    for op in host_ops.OPERATORS:
        for mutant, label in mutate(tree, op.match, op.variants, Context()):
            assert ast.unparse(mutant) != text, label
            labels.append(label)
    assert ast.dump(tree) == before
    assert len(labels) == len(set(labels)) == 19
