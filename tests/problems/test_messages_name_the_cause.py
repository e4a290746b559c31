"""Feedback that tells the truth (issue 13): valid answers pass, and each wrong answer gets the
sentence that names its real mistake, not a neighbouring one.

Every test here failed on the engine before the fix: a valid form was rejected, or the message
named the wrong cause (or an ``ex`` the learner does not have).
"""

import math

import numba
import numpy as np
import pytest
from numba import cuda

from helpers.exercises import DevicePipelineExercise, FunctionExercise, Ints, ValueExercise
from helpers.problems import nb01, nb02, nb03, nb06, nb07

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)


def _value(answer, mistakes=None, name="pick", notebook="nb09", hints=("think",)):
    return ValueExercise(answer=answer, mistakes=mistakes or {}, name=name, notebook=notebook, hints=hints)


# -- A. valid answers in another form pass; a number typed as a string is told so


@pytest.mark.parametrize("given", ["CuPy", "cupy ", "  CUPY", "'cupy'"])
def test_string_answers_ignore_case_spaces_and_quotes(given):
    assert _grade(_value("cupy"), given).status == "passed"


@pytest.mark.parametrize(
    "given", ["import pycuda.autoprimaryctx", "from pycuda import autoprimaryctx", "PyCUDA.autoprimaryctx"]
)
def test_an_import_statement_names_its_module(given):
    assert _grade(_value("pycuda.autoprimaryctx"), given).status == "passed"


def test_a_known_mistake_is_recognised_in_any_form():
    ex = _value("pycuda.autoprimaryctx", {"pycuda.autoinit": "autoinit makes a new context."})
    r = _grade(ex, "import pycuda.autoinit")
    assert r.status == "failed" and "autoinit makes a new context" in r.message


def test_quiz_letters_in_lower_case_pass():
    assert _grade(nb03.event_order, ("b", "c", "d", "a", "e")).status == "passed"
    assert _grade(nb03.event_order, ["B", "C", "D", "A", "E"]).status == "passed"
    assert _grade(nb03.event_order, ("b", "c", "d", "e", "a")).status == "failed"


@pytest.mark.parametrize("ex,given", [(nb03.right_allocation, "2"), (nb01.threads_launched, " 1024")])
def test_a_number_given_as_a_string_is_told_to_drop_the_quotes(ex, given):
    r = _grade(ex, given)
    assert r.status == "failed" and "a number, not a string" in r.message and "not right" not in r.message


def test_float32_results_pass_and_equal_looking_numbers_are_never_a_mismatch():
    r = _grade(nb03.bandwidth_gbs, lambda nbytes, ms: np.float32(nbytes / (ms * 1e-3) / 1e9))
    assert r.status == "passed", r.message
    r = _grade(nb03.bandwidth_gbs, lambda nbytes, ms: np.float32(nbytes / ms / 1e9))
    assert r.status == "failed" and "milliseconds" in r.message
    third = FunctionExercise(reference=lambda x: x / 3, inputs={"x": Ints(1, 9)}, name="third", notebook="nb01")
    r = _grade(third, lambda x: x / 3 * (1 + 1e-12))
    assert r.status == "failed"
    shown = r.message.split(" returned ")[1].split(" but should return ")
    assert shown[0] != shown[1].split(" (")[0], r.message


def test_a_trailing_1_for_an_unused_dimension_passes():
    r = _grade(nb01.blocks_2d, lambda rows, cols: ((cols + 15) // 16, (rows + 15) // 16, 1))
    assert r.status == "passed", r.message
    r = _grade(nb01.blocks_2d, lambda rows, cols: ((cols + 15) // 16, (rows + 15) // 16, 2))
    assert r.status == "failed"
    assert _grade(_value((4, 8)), (4, 8, 1)).status == "passed"


# -- B. a failure names the object the learner has, never ``ex``


def test_value_and_function_messages_name_the_exercise():
    r = _grade(nb01.threads_launched, 999)
    assert "nb01.threads_launched.hint()" in r.message and "ex." not in r.message
    r = _grade(nb01.blocks_per_grid, lambda n, t: n // t + 7)
    assert "nb01.blocks_per_grid.hint()" in r.message and "ex." not in r.message


def test_hint_without_hints_names_the_exercise(capsys):
    _value(1, hints=()).hint()
    out = capsys.readouterr().out
    assert "nb09.pick.solution()" in out and "ex." not in out


@cuda.jit
def add_times_three(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + 3 * b[i]


def test_kernel_messages_name_the_exercise():
    r = _grade(nb02.vector_add, add_times_three)
    assert r.status == "failed" and "nb02.vector_add.hint()" in r.message and "ex." not in r.message


# -- D. the real cause, not a neighbouring one


@cuda.jit
def add_out_first(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def saxpy_scalar_third(x, y, alpha, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def add_b_first(b, a, out):  # same names, another order, and still right: addition commutes
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def test_parameters_in_the_wrong_order_are_named():
    r = _grade(nb02.vector_add, add_out_first)
    assert r.status == "failed" and "parameters are in the wrong order" in r.message, r.message
    r = _grade(nb02.saxpy, saxpy_scalar_third, **nb02.saxpy.reference_options())
    assert r.status == "failed" and "parameters are in the wrong order" in r.message, r.message
    assert "IndexError" not in r.message
    assert _grade(nb02.vector_add, add_b_first).status == "passed"


@cuda.jit
def add_accumulates(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] += a[i] + b[i]


@cuda.jit
def add_then_scale(a, b, out):  # reads out after writing it: right, if over vector_add's read budget
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
        out[i] = out[i] * 1


def test_accumulating_into_an_output_is_read_before_write():
    r = _grade(nb02.vector_add, add_accumulates)
    assert r.status == "failed" and "read before being written" in r.message and "never written" not in r.message
    r = _grade(nb02.vector_add, add_then_scale)
    assert "read before being written" not in r.message and "budget" in r.message


@cuda.jit
def add_nan_for_negatives(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        z = a[i] - a[i]
        out[i] = a[i] + b[i] if a[i] >= 0 else a[i] + b[i] + z * math.inf


def test_a_computed_nan_is_called_computed():
    with np.errstate(invalid="ignore"):
        r = _grade(nb02.vector_add, add_nan_for_negatives)
    assert r.status == "failed" and "computed a NaN" in r.message, r.message
    assert "never written" not in r.message and "hard-coded" not in r.message


@cuda.jit
def add_int(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = int(a[i] + b[i])


@cuda.jit
def sum_int32_buffer(x, total):
    buf = cuda.shared.array(64, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


@pytest.mark.parametrize("ex,kernel", [(nb02.vector_add, add_int), (nb06.sum_atomic, sum_int32_buffer)])
def test_truncated_values_are_called_truncated(ex, kernel):
    r = _grade(ex, kernel)
    assert r.status == "failed" and "truncated to integers" in r.message and "hard-coded" not in r.message


@cuda.jit
def add_with_debug_print(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        if i == 0:
            print(a[i], b[i])
        out[i] = a[i] + b[i]


def test_a_debug_print_over_budget_is_named():
    r = _grade(nb02.vector_add, add_with_debug_print)
    assert r.status == "failed" and "budget" in r.message and "print() inside a kernel" in r.message


# -- C. the technique the exercise asks for is enforced; other valid ways to do it pass


@cuda.jit
def hist_shared_one_pass_flush(data, hist):
    local = cuda.shared.array(16, numba.int32)
    t = cuda.threadIdx.x
    if t < 16:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < 16 and local[t] != 0:  # skip empty bins: fewer global atomics still
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def scan_one_buffer_two_barriers(x, out):
    buf = cuda.shared.array(64, numba.int32)
    t = cuda.threadIdx.x
    buf[t] = x[t] if t < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < 64:
        v = buf[t - d] if t >= d else 0
        cuda.syncthreads()
        buf[t] += v
        cuda.syncthreads()
        d *= 2
    if t < x.size:
        out[t] = buf[t]


@cuda.jit
def scan_blelloch(x, out):  # work-efficient: more steps, still parallel
    buf = cuda.shared.array(64, numba.int32)
    t = cuda.threadIdx.x
    v = x[t] if t < x.size else 0
    buf[t] = v
    cuda.syncthreads()
    d = 1
    while d < 64:  # up-sweep
        k = (t + 1) * 2 * d - 1
        if k < 64:
            buf[k] += buf[k - d]
        cuda.syncthreads()
        d *= 2
    if t == 0:
        buf[63] = 0
    cuda.syncthreads()
    d = 32
    while d > 0:  # down-sweep
        k = (t + 1) * 2 * d - 1
        if k < 64:
            tmp = buf[k - d]
            buf[k - d] = buf[k]
            buf[k] += tmp
        cuda.syncthreads()
        d //= 2
    if t < x.size:
        out[t] = buf[t] + v  # exclusive -> inclusive


def test_valid_alternatives_meet_the_budgets():
    r = _grade(nb06.histogram_shared, hist_shared_one_pass_flush)
    assert r.status == "passed", r.message
    r = _grade(nb06.scan, scan_one_buffer_two_barriers)
    assert r.status == "passed", r.message
    r = _grade(nb06.scan, scan_blelloch)
    assert r.status == "passed", r.message


def pipeline_copy_to_device_and_into_a_host_buffer(kernel, x):
    d_x = cuda.device_array_like(x)
    d_x.copy_to_device(x)
    d_out = cuda.device_array(x.shape, dtype=x.dtype)
    kernel[(x.size + 255) // 256, 256](d_x, d_out)
    out = np.empty_like(x)
    d_out.copy_to_host(out)
    return out


def test_run_on_device_counts_copies_exactly():
    r = _grade(nb03.run_on_device, pipeline_copy_to_device_and_into_a_host_buffer)
    assert r.status == "passed", r.message


def test_occupancy_sizes_include_blocks_that_are_not_warp_multiples():
    threads = {case[0] for case in nb07.occupancy.edge_cases} | set(nb07.occupancy.inputs["threads"].choices)
    assert any(t % 32 for t in threads)


def test_a_tuple_typed_as_a_string_is_told_so():
    r = _grade(nb07.sectors, "(4, 8, 32)")
    assert r.status == "failed" and "not a string" in r.message
    r = _grade(nb03.event_order, "BCDAE")
    assert r.status == "failed" and "not the string 'BCDAE'" in r.message and "('A', 'B', ...)" in r.message


def blocks_2d_cols_first(cols, rows):  # right formula, parameters swapped
    return ((cols + 15) // 16, (rows + 15) // 16)


def blocks_per_grid_t_first(t, n):
    return (n + t - 1) // t


@pytest.mark.parametrize(
    "ex,fn", [(nb01.blocks_2d, blocks_2d_cols_first), (nb01.blocks_per_grid, blocks_per_grid_t_first)]
)
def test_function_parameters_in_the_wrong_order_are_named(ex, fn):
    r = _grade(ex, fn)
    assert r.status in ("failed", "error") and "parameters are in the wrong order" in r.message, r.message


def pipeline_off_in_the_7th_digit(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out.copy_to_host() * 0 + np.float32(1.0000024)  # 6 digits say 1, the check's tolerance says wrong


def test_pipeline_mismatch_shows_enough_digits():
    ones = DevicePipelineExercise(
        reference=nb03.run_on_device.reference,
        kernel=nb03.run_on_device.kernel,
        expect=np.ones_like,
        name="ones",
        notebook="nb03",
    )
    r = _grade(ones, pipeline_off_in_the_7th_digit)
    assert r.status == "failed"
    shown = r.message.split(" is ")[1].split(" but should be ")
    assert shown[0] != shown[1].split(" (")[0], r.message


def test_a_message_from_any_layer_names_the_exercise_not_ex():
    class Says(ValueExercise):
        def _grade(self, given, rng):
            return (
                "failed",
                "wrong values: ex.hint() gives a nudge; ex.solution() shows one; index.hint() stays.",
                None,
                {},
            )

    r = Says(answer=1, name="cupy_norm", notebook="nb08").grade(2)
    assert "nb08.cupy_norm.hint()" in r.message and "nb08.cupy_norm.solution()" in r.message
    assert "index.hint()" in r.message and " ex." not in r.message


def test_counting_copies_leaves_device_arrays_as_they_were():
    kind = type(cuda.device_array(1))
    before = {k: v for k, v in vars(kind).items() if k.startswith("copy_to")}
    before_to_device = cuda.to_device
    _grade(nb03.run_on_device, pipeline_copy_to_device_and_into_a_host_buffer)
    assert {k: v for k, v in vars(kind).items() if k.startswith("copy_to")} == before
    assert cuda.to_device is before_to_device


@cuda.jit
def saxpy_out_first_other_names(out, a, x, y):  # `a` for alpha: only the shared names can tell
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_a_for_alpha(a, x, y, out):  # another name in the right place: graded like any other
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] - y[i]


def test_moved_parameters_are_named_even_with_other_names():
    opts = nb02.saxpy.reference_options()
    r = _grade(nb02.saxpy, saxpy_out_first_other_names, **opts)
    assert r.status == "failed" and "out is parameter 1" in r.message, r.message
    r = _grade(nb02.saxpy, saxpy_a_for_alpha, **opts)
    assert r.status == "failed" and "wrong order" not in r.message


def _handed_out_placeholders():
    """(exercise, value) for every answer a learner's notebook hands out as a literal placeholder
    (`clamp_src = '... { /* YOUR CODE HERE */ }'  # YOUR CODE HERE`), read from notebooks/."""
    import ast
    import json
    from pathlib import Path

    from helpers.problems import all_exercises

    by_id = {e.id: e for e in all_exercises()}
    out = []
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] != "code" or "YOUR CODE HERE" not in src:
                continue
            tree = ast.parse(src)
            values = {
                t.id: node.value
                for node in tree.body
                if isinstance(node, ast.Assign)
                for t in node.targets
                if isinstance(t, ast.Name)
            }
            for call in ast.walk(tree):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "check"
                    and call.args
                    and isinstance(call.args[0], ast.Name)
                    and call.args[0].id in values
                ):
                    ex_id = ast.unparse(call.func.value)
                    try:
                        value = ast.literal_eval(values[call.args[0].id])
                    except ValueError:
                        continue
                    if ex_id in by_id:
                        out.append((by_id[ex_id], value))
    return out


def test_every_handed_out_placeholder_is_not_attempted():
    """The handed-out notebook 08's clamp_src and 09's axpby_src (a kernel whose body is only the
    placeholder comment) were graded 'failed: element 0 is nan (never written)'."""
    cases = _handed_out_placeholders()
    assert {ex.id for ex, v in cases if isinstance(v, str)} >= {"nb08.clamp", "nb09.axpby"}
    for ex, value in cases:
        r = ex.grade(value, seed=1)
        assert r.status == "not_attempted", (ex.id, r.line())


def test_a_cuda_c_answer_that_kept_the_placeholder_comment_is_graded():
    from helpers.problems import nb08

    kept = nb08.clamp.reference.replace("{\n", "{ /* YOUR CODE HERE */\n", 1)
    assert "YOUR CODE HERE" in kept
    assert nb08.clamp.grade(kept, seed=1).status == "passed"
    empty = 'extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n) { }'
    assert nb08.clamp.grade(empty, seed=1).status == "failed"  # an empty body without the marker is an answer
