"""The kernel operators (helpers/mutation/kernel_ops.py), each applied through sites.mutate to a
small kernel written here: the exact mutant text and label of every site and variant, and the
places that are not sites."""

import ast
import textwrap

import pytest

import helpers  # noqa: F401  - the course rule: helpers before numba
from helpers.mutation import kernel_ops
from helpers.mutation.sites import Context, mutate

CTX = Context(inputs=("x",), outputs=("out",), block=(64, 2, 1), grid=(8, 3, 1), size=1000, arrays=("tile",))


def _src(text):
    return textwrap.dedent(text).strip()


def _mutants(source, name, ctx=CTX):
    """(label, mutant text) for every site and variant of the operators called ``name``."""
    tree = ast.parse(_src(source)).body[0]
    out = []
    for op in kernel_ops.OPERATORS:
        if op.name == name:
            out += [(label, ast.unparse(m)) for m, label in mutate(tree, op.match, op.variants, ctx)]
    return out


def _one_line(source, name, ctx=CTX):
    """(label, the one line of the mutant that differs) per mutant, for kernels whose mutants change one line."""
    original = _src(source).splitlines()
    out = []
    for label, text in _mutants(source, name, ctx):
        lines = text.splitlines()
        assert len(lines) == len(original), label
        (changed,) = [b.strip() for a, b in zip(original, lines) if a != b]
        out.append((label, changed))
    return out


def test_every_kernel_operator_is_tested_here():
    assert {op.name for op in kernel_ops.OPERATORS} == {
        "comparison_boundary",
        "comparison_negated",
        "guard_removed",
        "guard_inverted",
        "axes_swapped",
        "index_shifted",
        "launch_literal",
        "size_literal",
        "barrier_misplaced",
        "atomic_plain",
        "privatization_dropped",
        "serialized",
        "chunks_not_stride",
        "output_aliased",
        "dtype_changed",
    }


GUARD = """
def k(x, out):
    i = cuda.grid(1)
    if i {op} n:
        out[i] = x[i]
"""


@pytest.mark.parametrize(
    "op, boundary, negated",
    [("<", "<=", ">="), ("<=", "<", ">"), (">", ">=", "<="), (">=", ">", "<"), ("==", None, "!="), ("!=", None, "==")],
)
def test_a_guard_comparison_gets_its_boundary_and_its_negation(op, boundary, negated):
    source = GUARD.format(op=op)
    want = [] if boundary is None else [(f"line 3: boundary i {op} n -> i {boundary} n", f"if i {boundary} n:")]
    assert _one_line(source, "comparison_boundary") == want
    assert _one_line(source, "comparison_negated") == [
        (f"line 3: negated i {op} n -> i {negated} n", f"if i {negated} n:")
    ]


def test_a_chained_comparison_gives_one_mutant_per_operator():
    source = "def k(x, out):\n    i = cuda.grid(1)\n    if 0 <= i < n:\n        out[i] = x[i]"
    assert _one_line(source, "comparison_boundary") == [
        ("line 3: boundary 0 <= i < n -> 0 < i < n", "if 0 < i < n:"),
        ("line 3: boundary 0 <= i < n -> 0 <= i <= n", "if 0 <= i <= n:"),
    ]
    assert _one_line(source, "comparison_negated") == [
        ("line 3: negated 0 <= i < n -> 0 > i < n", "if 0 > i < n:"),
        ("line 3: negated 0 <= i < n -> 0 <= i >= n", "if 0 <= i >= n:"),
    ]


def test_a_guard_is_removed_or_inverted():
    source = """
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size and i > 0:
            out[i] = x[i]
        if i < 4:
            out[0] = 1
        else:
            out[1] = 2
        if flag:
            out[2] = 3
    """
    tail = "    if i < 4:\n        out[0] = 1\n    else:\n        out[1] = 2\n    if flag:\n        out[2] = 3"
    assert _mutants(source, "guard_removed") == [
        (
            "line 3: guard removed: if i < x.size and i > 0",
            f"def k(x, out):\n    i = cuda.grid(1)\n    out[i] = x[i]\n{tail}",
        )
    ]
    assert _one_line(source, "guard_inverted") == [
        ("line 3: guard inverted: if not (i < x.size and i > 0)", "if not (i < x.size and i > 0):")
    ]


def test_an_early_exit_without_its_guard_is_no_exit_not_an_exit_for_every_thread():
    # once `if i >= n: return` lost its test and kept the return: every thread left and nothing ran
    source = "def k(x, out):\n    i = cuda.grid(1)\n    if i >= x.size:\n        return\n    out[i] = x[i]"
    assert _mutants(source, "guard_removed") == [
        ("line 3: guard removed: if i >= x.size", "def k(x, out):\n    i = cuda.grid(1)\n    out[i] = x[i]")
    ]
    assert _one_line(source, "guard_inverted") == [
        ("line 3: guard inverted: if not i >= x.size", "if not i >= x.size:")
    ]


def test_a_conditional_expression_loses_its_guard():
    source = "def k(x, out):\n    i = cuda.grid(1)\n    out[i] = x[i] if i < n else 0\n    out[0] = a if flag else b"
    assert _one_line(source, "guard_removed") == [
        ("line 3: guard removed: x[i] if i < n else 0 -> x[i]", "out[i] = x[i]")
    ]


def test_axes_are_swapped_on_geometry_reads_on_a_pair_index_and_on_a_grid_unpack():
    source = """
    def k(A, B):
        r = cuda.threadIdx.y + cuda.blockIdx.x * cuda.blockDim.z
        x, y = cuda.grid(2)
        B[r, x] = A[y]
    """
    assert _one_line(source, "axes_swapped") == [
        (
            "line 2: axes swapped: cuda.threadIdx.y -> cuda.threadIdx.x",
            "r = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.z",
        ),
        (
            "line 2: axes swapped: cuda.blockIdx.x -> cuda.blockIdx.y",
            "r = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.z",
        ),
        ("line 4: index axes swapped: B[r, x] -> B[x, r]", "B[x, r] = A[y]"),
        ("line 3: axes swapped: x, y = cuda.grid(2) -> y, x = cuda.grid(2)", "y, x = cuda.grid(2)"),
    ]


def test_grid_and_block_dimensions_swap_axes_too_and_so_does_gridsize_2():
    source = "def k(A):\n    s = cuda.blockDim.x + cuda.gridDim.y\n    sx, sy = cuda.gridsize(2)"
    assert _one_line(source, "axes_swapped") == [
        ("line 2: axes swapped: cuda.blockDim.x -> cuda.blockDim.y", "s = cuda.blockDim.y + cuda.gridDim.y"),
        ("line 2: axes swapped: cuda.gridDim.y -> cuda.gridDim.x", "s = cuda.blockDim.x + cuda.gridDim.x"),
        ("line 3: axes swapped: sx, sy = cuda.gridsize(2) -> sy, sx = cuda.gridsize(2)", "sy, sx = cuda.gridsize(2)"),
    ]


def test_an_index_is_shifted_by_one_on_loads_and_stores_of_parameters_and_shared_arrays_only():
    source = """
    def k(x, out, other):
        tile[t] = x[i]
        out[n - i] = v[i] + other[i] + x.shape[0]
    """
    assert _one_line(source, "index_shifted") == [
        ("line 2: index +1: tile[t] -> tile[t + 1]", "tile[t + 1] = x[i]"),
        ("line 2: index -1: tile[t] -> tile[t - 1]", "tile[t - 1] = x[i]"),
        ("line 2: index +1: x[i] -> x[i + 1]", "tile[t] = x[i + 1]"),
        ("line 2: index -1: x[i] -> x[i - 1]", "tile[t] = x[i - 1]"),
        ("line 3: index +1: out[n - i] -> out[n - i + 1]", "out[n - i + 1] = v[i] + other[i] + x.shape[0]"),
        ("line 3: index -1: out[n - i] -> out[n - i - 1]", "out[n - i - 1] = v[i] + other[i] + x.shape[0]"),
    ]


def test_a_shift_of_a_sum_or_a_conditional_index_keeps_its_precedence():
    got = _one_line("def k(x, out):\n    out[0] = x[a if c else b] * x[i * 2]", "index_shifted")
    assert [line for _, line in got] == [
        "out[0 + 1] = x[a if c else b] * x[i * 2]",
        "out[0 - 1] = x[a if c else b] * x[i * 2]",
        "out[0] = x[(a if c else b) + 1] * x[i * 2]",
        "out[0] = x[(a if c else b) - 1] * x[i * 2]",
        "out[0] = x[a if c else b] * x[i * 2 + 1]",
        "out[0] = x[a if c else b] * x[i * 2 - 1]",
    ]


def test_a_two_dimensional_index_is_shifted_on_each_axis_and_a_slice_is_left_alone():
    # x[i:] and tile[r, :] once crashed the operator (`(i:) + 1` is no expression): a slice is no index
    source = "def k(x, out):\n    out[r, c] = tile[r, :] + x[i:]"
    assert _one_line(source, "index_shifted") == [
        ("line 2: index +1: out[r, c] -> out[r + 1, c]", "out[r + 1, c] = tile[r, :] + x[i:]"),
        ("line 2: index -1: out[r, c] -> out[r - 1, c]", "out[r - 1, c] = tile[r, :] + x[i:]"),
        ("line 2: index +1: out[r, c] -> out[r, c + 1]", "out[r, c + 1] = tile[r, :] + x[i:]"),
        ("line 2: index -1: out[r, c] -> out[r, c - 1]", "out[r, c - 1] = tile[r, :] + x[i:]"),
        ("line 2: index +1: tile[r, :] -> tile[r + 1, :]", "out[r, c] = tile[r + 1, :] + x[i:]"),
        ("line 2: index -1: tile[r, :] -> tile[r - 1, :]", "out[r, c] = tile[r - 1, :] + x[i:]"),
    ]


BX, BY, BZ, GX, GY = "cuda.blockDim.x", "cuda.blockDim.y", "cuda.blockDim.z", "cuda.gridDim.x", "cuda.gridDim.y"


def test_launch_reads_become_the_literals_of_the_checks_first_launch():
    source = """
    def k(x, out):
        a = cuda.blockDim.x * cuda.gridDim.x + cuda.blockDim.y * cuda.gridDim.y + cuda.blockDim.z
        s = cuda.gridsize(1)
        sx, sy = cuda.gridsize(2)
    """
    assert _one_line(source, "launch_literal") == [
        ("line 3: literal from the check's launch: cuda.gridsize(1) -> 512", "s = 512"),
        # cuda.gridsize(2) once became the one number 512, which cannot be unpacked: it is a pair of strides
        ("line 4: literal from the check's launch: cuda.gridsize(2) -> (512, 6)", "sx, sy = (512, 6)"),
        ("line 2: literal from the check's launch: cuda.blockDim.x -> 64", f"a = 64 * {GX} + {BY} * {GY} + {BZ}"),
        ("line 2: literal from the check's launch: cuda.gridDim.x -> 8", f"a = {BX} * 8 + {BY} * {GY} + {BZ}"),
        ("line 2: literal from the check's launch: cuda.blockDim.y -> 2", f"a = {BX} * {GX} + 2 * {GY} + {BZ}"),
        ("line 2: literal from the check's launch: cuda.gridDim.y -> 3", f"a = {BX} * {GX} + {BY} * 3 + {BZ}"),
    ]


def test_a_size_read_of_a_parameter_becomes_the_checks_first_size():
    source = "def k(x, out):\n    a = x.size + len(out) + tmp.size + len(tmp)"
    assert _one_line(source, "size_literal") == [
        ("line 2: literal from the check's first size: x.size -> 1000", "a = 1000 + len(out) + tmp.size + len(tmp)"),
        ("line 2: literal from the check's first size: len(out) -> 1000", "a = x.size + 1000 + tmp.size + len(tmp)"),
    ]


def test_a_barrier_is_removed_or_moved_into_thread_0():
    source = "def k(x, out):\n    tile[t] = x[t]\n    cuda.syncthreads()\n    out[t] = tile[t]"
    head, tail = "def k(x, out):\n    tile[t] = x[t]\n", "    out[t] = tile[t]"
    assert _mutants(source, "barrier_misplaced") == [
        ("line 3: barrier removed", head + tail),
        (
            "line 3: barrier moved into `if cuda.threadIdx.x == 0:`",
            head + "    if cuda.threadIdx.x == 0:\n        cuda.syncthreads()\n" + tail,
        ),
    ]


def test_a_barrier_in_a_loop_is_moved_out_of_it_and_a_removed_only_barrier_leaves_pass():
    source = """
    def k(x, out):
        for s in range(4):
            if s > t:
                cuda.syncthreads()
            tile[t] += 1
            cuda.syncthreads()
    """
    got = dict(_mutants(source, "barrier_misplaced"))
    assert got["line 2: barrier moved out of the loop, after it"] == _src(
        """
        def k(x, out):
            for s in range(4):
                if s > t:
                    cuda.syncthreads()
                tile[t] += 1
            cuda.syncthreads()
        """
    )
    # the barrier was the if's only statement: removing it once left `if s > t:` with no body (no program)
    assert got["line 4: barrier removed"] == _src(
        """
        def k(x, out):
            for s in range(4):
                if s > t:
                    pass
                tile[t] += 1
                cuda.syncthreads()
        """
    )
    assert len(got) == 5


def test_a_warp_barrier_and_the_grid_sync_are_barriers_too():
    source = "def k(x, out):\n    out[i] = 0\n    cuda.syncwarp()\n    cuda.cg.this_grid().sync()\n    out[j] = x[i]"
    got = dict(_mutants(source, "barrier_misplaced"))
    assert got["line 3: barrier removed"] == _src(
        "def k(x, out):\n    out[i] = 0\n    cuda.cg.this_grid().sync()\n    out[j] = x[i]"
    )
    assert got["line 4: barrier removed"] == _src(
        "def k(x, out):\n    out[i] = 0\n    cuda.syncwarp()\n    out[j] = x[i]"
    )
    assert (
        "if cuda.threadIdx.x == 0:\n        cuda.cg.this_grid().sync()"
        in got["line 4: barrier moved into `if cuda.threadIdx.x == 0:`"]
    )
    loop = "def k(x, out):\n    while d < 32:\n        v += 1\n        cuda.syncwarp()"
    assert dict(_mutants(loop, "barrier_misplaced"))["line 2: barrier moved out of the loop, after it"] == _src(
        "def k(x, out):\n    while d < 32:\n        v += 1\n    cuda.syncwarp()"
    )
    assert _mutants("def k(x, out):\n    cuda.atomic.add(out, 0, 1)\n    g.sync()", "barrier_misplaced") == []


def test_an_atomic_statement_is_made_plain():
    source = """
    def k(x, out):
        cuda.atomic.add(out, x[i], 1)
        cuda.atomic.max(out, 0, x[i] * 2)
        cuda.atomic.min(out, (r, c), v)
        old = cuda.atomic.add(out, 0, 1)
    """
    assert _one_line(source, "atomic_plain") == [
        ("line 2: atomic made plain: cuda.atomic.add(out, x[i], 1) -> out[x[i]] += 1", "out[x[i]] += 1"),
        (
            "line 3: atomic made plain: cuda.atomic.max(out, 0, x[i] * 2) -> out[0] = max(out[0], x[i] * 2)",
            "out[0] = max(out[0], x[i] * 2)",
        ),
        (
            "line 4: atomic made plain: cuda.atomic.min(out, (r, c), v) -> out[(r, c)] = min(out[(r, c)], v)",
            "out[r, c] = min(out[r, c], v)",
        ),
    ]


def test_a_shared_atomic_goes_to_the_last_output_instead():
    source = "def k(x, hist, out):\n    cuda.atomic.add(tile, x[i], 1)\n    cuda.atomic.add(out, x[i], 1)"
    ctx = Context(inputs=("x",), outputs=("hist", "out"), arrays=("tile",))
    assert _one_line(source, "privatization_dropped", ctx) == [
        (
            "line 2: privatization dropped: cuda.atomic.add(tile, x[i], 1) -> cuda.atomic.add(out, x[i], 1)",
            "cuda.atomic.add(out, x[i], 1)",
        )
    ]
    assert _mutants(source, "privatization_dropped", Context(arrays=("tile",))) == []  # no output to fall back on


ONE_D = """
def k(x, out):
    tile = cuda.shared.array(64, float32)
    i = cuda.grid(1)
    tile[cuda.threadIdx.x] = x[i]
    cuda.syncthreads()
    if i < cuda.gridsize(1):
        out[cuda.blockIdx.x] = tile[0]
"""


def test_a_one_dimensional_kernel_is_serialized_in_thread_0_of_the_block_and_of_the_grid():
    assert _mutants(ONE_D, "serialized") == [
        (
            "line 1: the block's work serialized in thread 0",
            _src(
                """
                def k(x, out):
                    tile = cuda.shared.array(64, float32)
                    if cuda.threadIdx.x == 0:
                        for _t in range(cuda.blockDim.x):
                            i = cuda.blockIdx.x * cuda.blockDim.x + _t
                            tile[_t] = x[i]
                            if i < cuda.gridsize(1):
                                out[cuda.blockIdx.x] = tile[0]
                """
            ),
        ),
        (
            "line 1: the grid's work serialized in thread 0",
            _src(
                """
                def k(x, out):
                    tile = cuda.shared.array(64, float32)
                    if cuda.grid(1) == 0:
                        for _g in range(cuda.gridsize(1)):
                            i = _g
                            tile[_g % cuda.blockDim.x] = x[i]
                            if i < cuda.gridDim.x * cuda.blockDim.x:
                                out[_g // cuda.blockDim.x] = tile[0]
                """
            ),
        ),
    ]


@pytest.mark.parametrize(
    "source",
    [
        "def k(x, out):\n    i = cuda.threadIdx.x + cuda.threadIdx.y\n    out[i] = x[i]",
        "def k(x, out):\n    i, j = cuda.grid(2)\n    out[i, j] = x[cuda.threadIdx.x]",
        "def k(x, out):\n    out[0] = x[0]",
    ],
)
def test_two_dimensional_kernels_and_kernels_without_a_thread_index_are_not_serialized(source):
    assert _mutants(source, "serialized") == []


def test_a_strided_loop_becomes_contiguous_chunks():
    source = """
    def k(x, out):
        for s in range(i, n, stride):
            out[s] = x[s]
        for s in range(0, n):
            t = s
    """
    chunk = "(n + stride - 1) // stride"
    new = f"range(i * ({chunk}), min(i * ({chunk}) + {chunk}, n))"
    assert _one_line(source, "chunks_not_stride") == [
        (f"line 2: contiguous chunks per thread instead of a stride: range(i, n, stride) -> {new}", f"for s in {new}:")
    ]


def test_the_chunks_are_those_of_a_ceiling_split():
    chunk = (1000 + 96 - 1) // 96
    ranges = [range(t * chunk, min(t * chunk + chunk, 1000)) for t in range(96)]
    # what the mutant's range computes, evaluated for every thread of a 96-thread grid over 1,000 elements
    ((_, text),) = _mutants("def k(x, out):\n    for s in range(i, n, stride):\n        pass", "chunks_not_stride")
    it = ast.parse(text).body[0].body[0].iter
    assert [eval(ast.unparse(it), {"i": t, "n": 1000, "stride": 96}) for t in range(96)] == ranges
    assert sorted(s for r in ranges for s in r) == list(range(1000))


def test_an_output_store_is_written_over_the_first_input_first():
    source = "def k(x, y, out):\n    out[i, j] = x[i, j] * y[i]\n    out[i] += 1\n    tile[i] = x[i]"
    ctx = Context(inputs=("x", "y"), outputs=("out",), arrays=("tile",))
    assert _mutants(source, "output_aliased", ctx) == [
        (
            "line 2: the result written over the input x first",
            source.replace("out[i, j] = x[i, j] * y[i]", "x[i, j] = x[i, j] * y[i]\n    out[i, j] = x[i, j]"),
        )
    ]
    assert _mutants(source, "output_aliased", Context(outputs=("out",))) == []  # no input to alias


def test_dtypes_are_swapped_between_32_and_64_bits():
    source = "def k(x, out):\n    a = np.float32(x[0]) + float64(1) + numba.int32(2) + int64(3) + np.uint8(4)"
    rest = "numba.int32(2) + int64(3) + np.uint8(4)"
    assert _one_line(source, "dtype_changed") == [
        (
            "line 2: dtype changed: int64 -> int32",
            "a = np.float32(x[0]) + float64(1) + numba.int32(2) + int32(3) + np.uint8(4)",
        ),
        (
            "line 2: dtype changed: numba.int32 -> numba.int64",
            "a = np.float32(x[0]) + float64(1) + numba.int64(2) + int64(3) + np.uint8(4)",
        ),
        ("line 2: dtype changed: np.float32 -> np.float64", f"a = np.float64(x[0]) + float64(1) + {rest}"),
        ("line 2: dtype changed: float64 -> float32", f"a = np.float32(x[0]) + float32(1) + {rest}"),
    ]


def test_no_operator_changes_the_kernel_it_is_given_and_every_mutant_differs_from_it():
    tree = ast.parse(_src(ONE_D)).body[0]
    before, text = ast.dump(tree), ast.unparse(tree)
    count = 0
    for op in kernel_ops.OPERATORS:
        for mutant, label in mutate(tree, op.match, op.variants, CTX):
            assert ast.unparse(mutant) != text, label
            count += 1
    assert ast.dump(tree) == before
    assert count == 21
