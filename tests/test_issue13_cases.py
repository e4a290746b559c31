"""Issue 13 (truthful feedback), case by case: every bullet under its "Why" is mapped to the tests
that prove it behaves as a careful teacher wants, and the map is itself tested so it cannot rot.

CASES below is the issue's list, one entry per case, each with the node ids of the tests that prove
it. Tests written for this audit (cases that had none, or only a weaker one) live in this file and
reproduce the case as a learner hits it: a real kernel or answer through the real check.
"""

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import cuda_c, geometry, trace
from helpers.errors import CourseError, LearnerError
from helpers.problems import nb02, nb04, nb05, nb06, nb09, nb10, nb11
from helpers.problems.nb05 import BLOCK, HALO_BLOCK
from helpers.problems.nb06 import BINS, SCAN

ROOT = Path(__file__).resolve().parent.parent
FT = "tests/test_feedback_truth.py"
PR = "tests/test_problems.py::test_wrong_solution_fails_with_its_message"
ME = "tests/test_issue13_cases.py"

CASES = {
    # -- wrong diagnoses
    "syncthreads() inside an if is reported as a race ('between the atomics and the read'), as uninitialised "
    "shared memory, or as 'put a syncthreads inside the loop' when one is already there; only some say "
    "'divergent barrier'": [
        f"{ME}::test_a_barrier_inside_an_if_is_a_divergent_barrier[histogram_shared-zeroing]",
        f"{ME}::test_a_barrier_inside_an_if_is_a_divergent_barrier[histogram_shared-counting]",
        f"{ME}::test_a_barrier_inside_an_if_is_a_divergent_barrier[stencil-guard]",
        f"{ME}::test_a_barrier_inside_an_if_is_a_divergent_barrier[scan-loop]",
        f"{ME}::test_a_barrier_inside_an_if_is_a_divergent_barrier[sum_atomic-loop]",
        f"{PR}[nb06.sum_atomic-divergent barrier]",
        f"{PR}[nb06.scan-divergent barrier]",
    ],
    "an in-place blur gets 'add a syncthreads at the end of the loop body' (a barrier cannot order blocks; the "
    "fix is to write out)": [
        f"{ME}::test_an_in_place_blur_is_told_to_write_out",
        f"{PR}[nb04.blur-race]",
    ],
    "a transpose without its barrier gets 'inside the loop'": [
        f"{ME}::test_a_transpose_without_its_barrier_gets_one_between_the_loops",
        f"{PR}[nb05.transpose_padded-race]",
    ],
    "an int32 shared buffer or int() truncation gets 'looks hard-coded'": [
        f"{FT}::test_truncated_values_are_called_truncated[ex0-add_int]",
        f"{FT}::test_truncated_values_are_called_truncated[ex1-sum_int32_buffer]",
    ],
    "parameters in the wrong order get 'out was never written' or 'IndexError: invalid index to scalar variable'": [
        f"{FT}::test_parameters_in_the_wrong_order_are_named",
        f"{FT}::test_function_parameters_in_the_wrong_order_are_named[ex0-blocks_2d_cols_first]",
        f"{FT}::test_function_parameters_in_the_wrong_order_are_named[ex1-blocks_per_grid_t_first]",
        f"{FT}::test_moved_parameters_are_named_even_with_other_names",
        f"{ME}::test_parameters_in_the_wrong_order_never_say_never_written_or_indexerror",
    ],
    "out[i] += ... reading the poison gets 'never written'": [
        f"{FT}::test_accumulating_into_an_output_is_read_before_write",
    ],
    "a computed NaN is reported garbled ('1 of 107 element 3 of out was never written') or as 'hard-coded'": [
        f"{FT}::test_a_computed_nan_is_called_computed",
    ],
    "a grid-stride loop with stride = blockDim.x gets 'use cuda.atomic.add'": [
        f"{ME}::test_a_grid_stride_loop_stepping_by_blockdim_is_told_gridsize",
        f"{PR}[nb02.square_stride-race]",
    ],
    "a debug print() trips the read budget with no hint": [
        f"{FT}::test_a_debug_print_over_budget_is_named",
    ],
    "about 15 messages end 'ex.hint() gives a nudge': there is no ex (name the learner's object, e.g. "
    "nb02.saxpy.hint())": [
        f"{FT}::test_value_and_function_messages_name_the_exercise",
        f"{FT}::test_kernel_messages_name_the_exercise",
        f"{FT}::test_hint_without_hints_names_the_exercise",
        f"{FT}::test_a_message_from_any_layer_names_the_exercise_not_ex",
        f"{PR}[nb07.roofline-bytes per FLOP]",  # every catalogued wrong answer: no generic `ex.` either
    ],
    # -- false fails
    "n[:, np.newaxis] and a docstring containing 'np.' are 'calls NumPy directly'": [
        "tests/test_numpy_direct.py::test_newaxis_and_dtypes_are_not_numpy_calls",
        "tests/test_numpy_direct.py::test_a_real_numpy_call_still_fails",
    ],
    "'CuPy', 'cupy ', 'import pycuda.autoprimaryctx' are 'not right'": [
        f"{FT}::test_string_answers_ignore_case_spaces_and_quotes[CuPy]",
        f"{FT}::test_string_answers_ignore_case_spaces_and_quotes[cupy ]",
        f"{FT}::test_an_import_statement_names_its_module[import pycuda.autoprimaryctx]",
        f"{ME}::test_the_real_exercises_take_any_spelling_of_the_name[CuPy]",
        f"{ME}::test_the_real_exercises_take_any_spelling_of_the_name[cupy ]",
    ],
    "ctypes.c_float storage for kernel_params": [
        f"{ME}::test_kernel_params_accepts_ctypes_storage",
    ],
    "np.float32 from bandwidth_gbs ('returned 0.004 but should return 0.004')": [
        f"{FT}::test_float32_results_pass_and_equal_looking_numbers_are_never_a_mismatch",
    ],
    "(x, y, 1) for a 2-D block": [
        f"{FT}::test_a_trailing_1_for_an_unused_dimension_passes",
    ],
    "lower-case quiz letters": [
        f"{FT}::test_quiz_letters_in_lower_case_pass",
    ],
    "'7' for 7 without saying the form is wrong": [
        f"{FT}::test_a_number_given_as_a_string_is_told_to_drop_the_quotes[ex0-2]",
        f"{FT}::test_a_number_given_as_a_string_is_told_to_drop_the_quotes[ex1- 1024]",
        f"{FT}::test_a_tuple_typed_as_a_string_is_told_so",
    ],
    # -- techniques not enforced
    "notebook 06's shared-memory histogram passes with plain global atomics": [
        f"{PR}[nb06.histogram_shared-over budget (global atomics only)]",
        f"{FT}::test_valid_alternatives_meet_the_budgets",
    ],
    "notebook 06's scan passes when thread 0 does it serially": [
        f"{PR}[nb06.scan-over budget (serial in one thread)]",
        f"{PR}[nb06.scan-over budget (every thread its own prefix)]",
    ],
    "notebook 07's occupancy passes while ignoring warp rounding (every test size a multiple of 32)": [
        f"{PR}[nb07.occupancy-ignores warp rounding]",
        f"{FT}::test_occupancy_sizes_include_blocks_that_are_not_warp_multiples",
    ],
    "notebook 03's run_on_device passes with an extra copy-in of zeros and an extra round trip, then announces "
    "'one copy in ... one copy out'": [
        f"{PR}[nb03.run_on_device-extra copy in]",
        f"{PR}[nb03.run_on_device-extra round trip]",
        f"{FT}::test_run_on_device_counts_copies_exactly",
    ],
    # -- pictures
    "draw_launch closes its figure, so three launch pictures never appear (02, 04 twice), while the cell still "
    "spends 3.5 s drawing": [
        f"{ME}::test_every_launch_picture_in_the_notebooks_is_shown",
        f"{ME}::test_the_notebooks_launch_pictures_draw_quickly",
    ],
    "show_banks() draws only conflict-free writes, never the 32-way conflicted reads of notebook 05 section 5": [
        "tests/test_bank_pictures.py::test_the_transpose_tiles_column_read_is_drawn_first_as_a_32_way_conflict",
        "tests/test_bank_pictures.py::test_notebook_05_shows_the_conflicted_read_and_its_text_says_so",
        "tests/test_bank_pictures.py::test_limit_picks_the_worst_first_and_the_arguments_are_still_checked",
    ],
    "the grid explorer's floor mode at its defaults turns nothing red, slider stops at 128, square blocks only, "
    "no warps": [
        "tests/test_geometry.py::test_floor_division_to_zero_blocks_shows_the_gpus_refusal",
        "tests/test_geometry.py::test_the_explorer_draws_non_square_blocks_up_to_1024_threads",
        "tests/test_geometry.py::test_the_2d_picture_outlines_and_numbers_the_warps",
        "tests/test_geometry.py::test_the_1d_picture_draws_warps_too",
        "tests/test_geometry.py::test_the_text_counts_warps_and_a_partly_filled_last_warp",
    ],
    "the matmul race picture is 987x3808 px and takes 7-9 s (under about 1,500 px tall and 2 s)": [
        f"{ME}::test_the_matmul_race_picture_is_small_and_quick",
        "tests/test_tracer.py::test_a_large_trace_picture_stays_about_1500_px_tall_and_draws_cells_as_collections",
    ],
    # -- numbers that contradict the text
    "notebook 05 says 40 -> 6 global reads per thread but printed 27.8 and 4.2: one definition of 'per thread' "
    "across demos and checks, and the printed numbers match the text": [
        f"{ME}::test_notebook_05_prints_the_reads_per_thread_its_text_states",
        f"{ME}::test_demos_and_checks_share_one_definition_of_per_thread",
        "tests/test_tracer.py::test_metrics",
    ],
    "'coalescing' and 'sectors' appear from notebook 02 on but are taught in 07: introduce coalescing briefly "
    "where it is first used": [
        f"{ME}::test_coalescing_is_introduced_where_it_is_first_used",
    ],
    # -- accuracy
    "'the simulator runs one thread after another': no notebook or helper text may claim it": [
        f"{ME}::test_no_text_says_the_simulator_runs_one_thread_after_another",
    ],
    "the course's own kernels use float64 constants after notebook 02 teaches float32": [
        f"{ME}::test_the_courses_kernels_keep_float32_after_notebook_02",
    ],
    "notebook 00's Numba row only imported Numba: compile one small kernel, report a numpy/numba-cuda mismatch "
    "with its fix, and helpers says it in one sentence at import": [
        f"{ME}::test_the_numba_row_compiles_and_runs_a_kernel_and_names_a_mismatch",
        "tests/test_env.py::test_the_banner_adds_the_mismatch_and_the_report_row_fails",
        "tests/test_env.py::test_a_numpy_too_new_for_numba_is_one_sentence_with_the_fix",
        "tests/test_env.py::test_a_numpy_the_course_excludes_is_named_even_when_numba_accepts_it",
    ],
    "notebook 02 says what Python a kernel may contain": [
        f"{ME}::test_notebook_02_says_what_python_a_kernel_may_contain",
    ],
    # -- progress file
    "progress file: a damaged file is moved aside and said once": [
        "tests/test_progress_file.py::test_damaged_file_is_moved_aside_said_once_and_not_lost",
        "tests/test_progress_file.py::test_deeply_nested_json_is_damaged_not_a_crash",
    ],
    "progress file: validated entries": [
        "tests/test_progress_file.py::test_entries_with_wrong_types_are_validated",
    ],
    "progress file: a lock so two kernels writing at once lose no attempt": [
        "tests/test_progress_file.py::test_two_processes_recording_at_once_lose_no_attempt",
    ],
    "progress file: symlinks and modes kept": [
        "tests/test_progress_file.py::test_a_symlink_stays_a_link_and_modes_are_kept",
    ],
    "progress file: one line when progress cannot be saved, temp files removed": [
        "tests/test_progress_file.py::test_an_unwritable_place_is_said_once_and_leaves_no_temp_files",
        "tests/test_progress_file.py::test_a_folder_where_the_file_should_be_is_said_in_one_line",
    ],
    # -- tracebacks (the specific examples; the fuzz suite lives on its own branch)
    **{
        f"traceback: {name}": [f"{ME}::test_a_wrong_call_is_one_sentence_not_a_traceback[{name}]"]
        for name in (
            "check seed='abc'",
            "unknown keyword to check",
            "cuda_c.compile(None)",
            "cuda_c.compile(non-UTF-8 bytes)",
            "cuda_c.compile(arch=90)",
            "cuda_c.compile(target='PTX')",
            "cuda_c.check(123)",
            "geometry.grid_explorer(3)",
            "geometry.launch_2d((10,), (8, 8))",
            "trace() with a forgotten launch",
            "trace(k, '12', 32, ...)",
            "geometry.launch_1d(10**9, 256)",
            "a 0-d array",
        )
    },
    "traceback: Trace.show(block=(1,1,1)) on a 3-D trace": [
        f"{ME}::test_show_takes_a_block_by_its_coordinates_on_a_3d_trace",
    ],
}


pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)


# ============================================================================ the map cannot rot


def test_every_case_maps_to_tests_that_exist():
    files = sorted({node.split("::")[0] for nodes in CASES.values() for node in nodes})
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    collected = {line.strip() for line in out.stdout.splitlines() if "::" in line}
    assert collected, out.stdout[-2000:] + out.stderr[-2000:]
    missing = {case: [n for n in nodes if n not in collected] for case, nodes in CASES.items()}
    missing = {case: nodes for case, nodes in missing.items() if nodes}
    assert not missing, missing
    assert all(CASES.values())  # every case has at least one test


# ============================================================================ wrong diagnoses


@cuda.jit
def hist_zero_barrier_in_if(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
        cuda.syncthreads()  # only the zeroing threads reach it
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def hist_count_barrier_in_if(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
        cuda.syncthreads()  # threads past the end never reach it
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def stencil_barrier_in_guard(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = x.size
    if i < n:
        tile[t] = x[i]
        if cuda.threadIdx.x == 0:
            tile[0] = x[i - 1] if i > 0 else 0.0
        if cuda.threadIdx.x == BLOCK - 1:
            tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
        cuda.syncthreads()  # inside the guard: the block's idle threads skip it
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


@cuda.jit
def scan_barrier_in_if(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t] if t < n else 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
            cuda.syncthreads()  # in the while, and in the if too
        else:
            buf[1 - src, t] = buf[src, t]
        src = 1 - src
        d *= 2
    if t < n:
        out[t] = buf[src, t]


@cuda.jit
def sum_barrier_in_if(x, total):
    buf = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
            cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


@pytest.mark.parametrize(
    "ex,kernel",
    [
        (nb06.histogram_shared, hist_zero_barrier_in_if),
        (nb06.histogram_shared, hist_count_barrier_in_if),
        (nb05.stencil, stencil_barrier_in_guard),
        (nb06.scan, scan_barrier_in_if),
        (nb06.sum_atomic, sum_barrier_in_if),
    ],
    ids=["histogram_shared-zeroing", "histogram_shared-counting", "stencil-guard", "scan-loop", "sum_atomic-loop"],
)
def test_a_barrier_inside_an_if_is_a_divergent_barrier(ex, kernel):
    r = _grade(ex, kernel)
    assert r.status == "failed" and "divergent barrier" in r.message, r.message
    assert "out of the `if`" in r.message
    for wrong in ("between the atomics and the read", "uninitialised", "inside the loop", "Race on"):
        assert wrong not in r.message, r.message


@cuda.jit
def blur_in_place(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = np.float32(0.0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[min(max(row + dr, 0), rows - 1), min(max(col + dc, 0), cols - 1)]
        img[row, col] = total / np.float32(9.0)  # neighbours, some in other blocks, still read img
        out[row, col] = img[row, col]


def test_an_in_place_blur_is_told_to_write_out():
    r = _grade(nb04.blur, blur_in_place)
    assert r.status == "failed" and "race" in r.message
    assert "write the results into the output array, not into img" in r.message, r.message
    assert "add a cuda.syncthreads()" not in r.message and "end of the loop body" not in r.message


@cuda.jit
def transpose_without_barrier(inp, out):
    tile = cuda.shared.array((32, 33), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * 32 + tx
    for j in range(0, 32, 8):  # the load loop
        y = cuda.blockIdx.y * 32 + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    x = cuda.blockIdx.y * 32 + tx
    for j in range(0, 32, 8):  # the store loop: its barrier belongs before it, not inside either loop
        y = cuda.blockIdx.x * 32 + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


def test_a_transpose_without_its_barrier_gets_one_between_the_loops():
    r = _grade(nb05.transpose_padded, transpose_without_barrier)
    assert r.status == "failed" and "race" in r.message
    lines = re.search(r"Put a cuda\.syncthreads\(\) between line (\d+) and line (\d+)", r.message)
    assert lines, r.message
    assert "inside the loop" not in r.message and "end of the loop body" not in r.message
    load, store = int(lines.group(1)), int(lines.group(2))
    first = transpose_without_barrier.py_func.__code__.co_firstlineno
    src = transpose_without_barrier.py_func.__code__.co_filename
    text = Path(src).read_text().splitlines()
    assert "tile[ty + j, tx] = inp[y, x]" in text[load - 1] and "out[y, x] = tile[tx, ty + j]" in text[store - 1]
    assert first < load < store


@cuda.jit
def add_out_first(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def saxpy_alpha_last(x, y, out, alpha):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def test_parameters_in_the_wrong_order_never_say_never_written_or_indexerror():
    for ex, kernel in ((nb02.vector_add, add_out_first), (nb02.saxpy, saxpy_alpha_last)):
        r = _grade(ex, kernel, **ex.reference_options())
        assert r.status == "failed" and "wrong order" in r.message, r.message
        assert "never written" not in r.message and "IndexError" not in r.message, r.message


@cuda.jit
def square_block_stride(x, out):
    for i in range(cuda.grid(1), x.size, cuda.blockDim.x):  # one block's width: blocks overlap
        out[i] = x[i] * x[i]


def test_a_grid_stride_loop_stepping_by_blockdim_is_told_gridsize():
    r = _grade(nb02.square_stride, square_block_stride)
    assert r.status == "failed" and "stride = cuda.gridsize(1)" in r.message, r.message
    assert "cuda.blockDim.x" in r.message and "atomic" not in r.message


# ============================================================================ false fails


@pytest.mark.parametrize("given", ["CuPy", "cupy ", "'cupy'", "CUPY"])
def test_the_real_exercises_take_any_spelling_of_the_name(given):
    assert _grade(nb11.choose_tool, given).status == "passed"
    module = "import pycuda.autoprimaryctx" if given != "CUPY" else "PyCUDA.autoprimaryctx"
    assert _grade(nb09.context_import, module).status == "passed"
    r = _grade(nb09.context_import, "import pycuda.autoinit")
    assert r.status == "failed" and "non-primary context" in r.message


_CTYPE = {"uint64": "c_uint64", "float32": "c_float", "int32": "c_int32", "float64": "c_double"}


def params_in_ctypes(*args):
    import ctypes

    storage = [getattr(ctypes, _CTYPE[a.dtype.name])(a.item()) for a in args]
    return np.array([ctypes.addressof(s) for s in storage], dtype=np.uint64), storage


def params_all_c_float(*args):
    import ctypes

    storage = [ctypes.c_float(float(a)) for a in args]  # the device pointer squeezed into 4 bytes
    return np.array([ctypes.addressof(s) for s in storage], dtype=np.uint64), storage


def test_kernel_params_accepts_ctypes_storage():
    r = _grade(nb10.kernel_params, params_in_ctypes)
    assert r.status == "passed", r.message
    r = _grade(nb10.kernel_params, params_all_c_float)
    assert r.status == "failed" and "points at 4 bytes" in r.message and "8 bytes" in r.message, r.message


# ============================================================================ pictures

PICTURES = ("draw_launch", "show", "show_banks", "show_coalescing", "draw_accesses")


def _code_cells(path):
    nb = json.loads(Path(path).read_text())
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            yield k, "".join(cell["source"])


def test_every_launch_picture_in_the_notebooks_is_shown():
    """A picture function returns a closed figure: Jupyter shows it only as the cell's last value, so
    a trailing `;` (or an assignment) hides it while the cell still pays for drawing it."""
    hidden, seen = [], 0
    for path in sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb")):
        for k, src in _code_cells(path):
            lines = [ln for ln in src.rstrip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            if not lines:
                continue
            last = lines[-1].split("#")[0].rstrip()
            call = re.search(r"\.(" + "|".join(PICTURES) + r")\(", last)
            if (
                call
                and not last.lstrip().startswith(("if ", "for ", "with ", "display("))
                and "=" not in last.split("(")[0]
            ):
                seen += 1
                if last.endswith(";"):
                    hidden.append(f"{path.relative_to(ROOT)} cell {k}: {last}")
    assert seen >= 10  # the notebooks draw launches, traces, banks and coalescing
    assert not hidden, hidden


def test_the_notebooks_launch_pictures_draw_quickly():
    launches = [
        geometry.launch_1d(n=20, threads_per_block=8),  # notebook 02, "the same launch as a picture"
        geometry.launch_2d((10, 13), block=(4, 4)),  # notebook 04, section 1
        geometry.launch_2d((20, 37), block=(8, 8), grid=(37 // 8, 20 // 8)),  # notebook 04, floor division
    ]
    for launch in launches:
        start = time.perf_counter()
        fig = geometry.draw_launch(launch)
        fig.savefig(io.BytesIO(), format="png")
        assert time.perf_counter() - start < 2.0
        assert fig.get_figheight() * fig.dpi <= 1500


def test_the_matmul_race_picture_is_small_and_quick():
    from wrong_solutions.nb05 import matmul_no_second_barrier

    r = _grade(nb05.matmul_tiled, matmul_no_second_barrier)
    assert r.status == "failed" and "race" in r.message and r.picture is not None
    start = time.perf_counter()
    r.picture.savefig(io.BytesIO(), format="png")
    rendered = time.perf_counter() - start
    width, height = r.picture.get_size_inches() * r.picture.dpi
    assert height <= 1500 + 1 and width <= 1500 + 1, (width, height)
    a = np.random.default_rng(0).random((14, 19), dtype=np.float32)
    b = np.random.default_rng(1).random((19, 21), dtype=np.float32)
    t = trace(matmul_no_second_barrier, (3, 2), (8, 8), a, b, np.zeros((14, 21), np.float32))
    start = time.perf_counter()
    t.show(block=0).savefig(io.BytesIO(), format="png")
    assert rendered < 2.0 and time.perf_counter() - start < 2.0


# ============================================================================ numbers that match the text


def _run_cells(path, upto):
    """Run a notebook's code cells up to the one containing `upto`; return that cell's printed text."""
    scope = {"__name__": "__main__"}
    for _, src in _code_cells(path):
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        if "gpu_only(" in src:
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(src, str(path), "exec"), scope)  # noqa: S102 - the notebook's own code
        if upto in src:
            return buf.getvalue()
    raise AssertionError(f"no cell with {upto!r}")


def test_notebook_05_prints_the_reads_per_thread_its_text_states():
    path = ROOT / "solutions" / "05_shared_memory.ipynb"
    printed = _run_cells(path, "for kernel in (matmul_naive, matmul_tiled)")
    got = dict(re.findall(r"(matmul_\w+)\s.*global reads per thread: ([\d.]+)", printed))
    text = next(
        "".join(c["source"])
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "markdown" and "global reads per thread down to" in "".join(c["source"])
    )
    naive, tiled = re.search(
        r"`2n = (\d+)` global reads per thread down to `2 x ceil\(n / TILE\) = (\d+)`", text
    ).groups()
    assert float(got["matmul_naive"]) == pytest.approx(float(naive)), (printed, text)
    assert float(got["matmul_tiled"]) == pytest.approx(float(tiled)), (printed, text)


@cuda.jit
def stencil_global(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        left = x[i - 1] if i > 0 else numba.float32(0.0)
        right = x[i + 1] if i + 1 < n else numba.float32(0.0)
        out[i] = left + x[i] + right


def test_demos_and_checks_share_one_definition_of_per_thread():
    from helpers.exercises.explain import metrics_dict

    x = np.random.default_rng(0).random(100, dtype=np.float32)
    t = trace(stencil_global, 4, 32, x, np.zeros_like(x), outputs=("out",))  # 28 idle threads of 128
    assert t.metrics.idle_threads == 28
    assert t.metrics.global_reads[0] == pytest.approx(298 / 100)  # over the threads that work
    assert metrics_dict(t.metrics, t)["global_reads_per_thread"] == pytest.approx(t.metrics.global_reads[0])
    r = _grade(nb05.stencil, stencil_global)
    shown = float(re.search(r"global reads per thread is ([\d.]+)", r.message).group(1))
    assert 2.9 < shown < 3.0, r.message  # the check says what the demo prints: about 3, not 2.3


def test_coalescing_is_introduced_where_it_is_first_used():
    r = _grade(nb02.vector_add, nb02.vector_add.reference)
    assert "coalesced" in r.message  # every passing kernel check from notebook 02 on reports it
    order = sorted((ROOT / "solutions").glob("*.ipynb"))
    first = next(p for p in order if re.search(r"coalesc", p.read_text(), re.I) or p.name.startswith("02_"))
    assert first.name.startswith("02_"), first
    cells = json.loads(first.read_text())["cells"]
    check = next(k for k, c in enumerate(cells) if ".check(" in "".join(c["source"]))
    before = " ".join("".join(c["source"]) for c in cells[:check] if c["cell_type"] == "markdown")
    assert "**coalesced**" in before and "**sectors**" in before and "warp" in before


# ============================================================================ accuracy

_SIMULATOR_CLAIM = re.compile(
    r"simulator\s+(?:runs|executes|steps through)\s+[^.]{0,40}?"
    r"(?:one thread after another|one thread at a time|one after another|in turn|thread by thread)",
    re.I,
)


def test_no_text_says_the_simulator_runs_one_thread_after_another():
    claims = []
    texts = [*(ROOT / "solutions").glob("*.ipynb"), *(ROOT / "notebooks").glob("*.ipynb")]
    texts += [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "helpers").rglob("*.py")]
    for path in texts:
        raw = path.read_text()
        if path.suffix == ".ipynb":
            raw = "\n".join("".join(c["source"]) for c in json.loads(raw)["cells"])
        claims += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in _SIMULATOR_CLAIM.finditer(raw)]
    assert not claims, claims
    assert _SIMULATOR_CLAIM.search("The simulator runs one thread after another, so the count")  # the old text


# kernels that compute in float64 on purpose, with the reason
FLOAT64_ON_PURPOSE = {
    "escape_steps": "notebook 04's Mandelbrot: the corners arrive as Python floats, so it is float64 throughout",
    "sum_kernel": "notebook 13 adds in float64 on purpose (its comment says so) into a float64 total",
}


def _float64_literals(fn):
    """Float literals in a kernel that make float64 arithmetic: not inside float32(...), and not the
    whole value stored into an array element (a store converts once, at compile time)."""
    parents = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    found = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)):
            continue
        cur, parent, ok = node, parents.get(node), False
        while parent is not None:
            if isinstance(parent, ast.Call) and ast.unparse(parent.func).split(".")[-1] in ("float32", "int32"):
                ok = True
                break
            if isinstance(parent, ast.IfExp) and cur is not parent.test:
                cur, parent = parent, parents.get(parent)
                continue
            ok = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Subscript) for t in parent.targets)
            break
        if not ok:
            found.append(f"line {node.lineno}: {ast.unparse(parents[node])}")
    return found


def test_the_courses_kernels_keep_float32_after_notebook_02():
    sources = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        if path.name[:2] >= "03":
            sources += [(f"{path.name} cell {k}", src) for k, src in _code_cells(path)]
    sources += [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "helpers" / "problems").glob("*.py"))]
    sources.append(("bench/kernels.py", (ROOT / "bench" / "kernels.py").read_text()))
    bad, kernels = [], 0
    for where, src in sources:
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and any("cuda.jit" in ast.unparse(d) for d in fn.decorator_list):
                kernels += 1
                if fn.name not in FLOAT64_ON_PURPOSE:
                    bad += [f"{where} {fn.name} {f}" for f in _float64_literals(fn)]
    assert kernels > 30
    assert not bad, bad
    probe = ast.parse("def k(x, out):\n    t = 0.0\n    out[0] = x[0] if x[0] > 0 else 0.0\n    out[1] = t / 9.0\n")
    assert len(_float64_literals(probe.body[0])) == 2  # the check finds `t = 0.0` and `/ 9.0`, not the store


def test_the_numba_row_compiles_and_runs_a_kernel_and_names_a_mismatch(monkeypatch):
    from helpers import _numba_probe, env, versions

    row = next(r for r in env.checks() if r.component == "Numba (numba-cuda)")
    assert row.ok and "compiled with Numba's CUDA compiler" in row.detail and "right numbers" in row.detail, row

    def row_stack_gone():
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    line = "numpy 2.5.0 is outside what the course supports (numpy<2.5): run `make lab` again."
    monkeypatch.setattr(_numba_probe, "run", row_stack_gone)
    monkeypatch.setattr(versions, "problem_line", lambda: line)
    row = next(r for r in env.checks() if r.component == "Numba (numba-cuda)")
    assert not row.ok and "row_stack" in row.detail and row.fix == line, row
    notebook = (ROOT / "solutions" / "00_setup.ipynb").read_text()
    assert "compile_check(" in notebook  # notebook 00 compiles its first kernel with the real compiler too


@cuda.jit
def add_with_a_list(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        pair = [a[i], b[i]]
        out[i] = pair[0] + pair[1]


def test_notebook_02_says_what_python_a_kernel_may_contain():
    cells = json.loads((ROOT / "solutions" / "02_first_kernels.ipynb").read_text())["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    said = re.search(r"\*\*What a kernel may contain\.\*\*(.*?)(?:\n\n|$)", text, re.S)
    assert said, "notebook 02 should say what Python a kernel may contain"
    for word in ("lists", "dicts", "strings", "np.zeros", "math", "range", "device functions"):
        assert word in said.group(1), word
    r = _grade(nb02.vector_add, add_with_a_list)  # and the check says so when a kernel builds a list
    assert r.status == "failed" and "cannot build lists" in r.message, r.message


# ============================================================================ tracebacks


@cuda.jit
def copy_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


_X, _OUT = np.zeros(10, np.float32), np.zeros(10, np.float32)
WRONG_CALLS = {
    "check seed='abc'": (lambda: nb02.vector_add.grade(nb02.vector_add.reference, seed="abc"), "seed must be"),
    "unknown keyword to check": (
        lambda: nb02.vector_add.grade(nb02.vector_add.reference, lanch=3),
        "has no option lanch= (did you mean launch=?)",
    ),
    "cuda_c.compile(None)": (lambda: cuda_c.compile(None), "src must be a string of CUDA C"),
    "cuda_c.compile(non-UTF-8 bytes)": (
        lambda: cuda_c.compile(b'\xff\xfeextern "C" __global__ void f() {}'),
        "not UTF-8 text",
    ),
    "cuda_c.compile(arch=90)": (lambda: cuda_c.compile('extern "C" __global__ void f() {}', arch=90), "'sm_90'"),
    "cuda_c.compile(target='PTX')": (
        lambda: cuda_c.compile('extern "C" __global__ void f() {}', target="PTX"),
        "target must be 'ptx' or 'cubin'",
    ),
    "cuda_c.check(123)": (lambda: cuda_c.check(123), "pass the call's result itself"),
    "geometry.grid_explorer(3)": (lambda: geometry.grid_explorer(3), "takes 1 (a 1D launch) or 2"),
    "geometry.launch_2d((10,), (8, 8))": (lambda: geometry.launch_2d((10,), (8, 8)), "shape must be a pair"),
    "trace() with a forgotten launch": (lambda: trace(copy_kernel, _X, _OUT), "griddim must be an int"),
    "trace(k, '12', 32, ...)": (lambda: trace(copy_kernel, "12", 32, _X, _OUT), "not '12'"),
    "geometry.launch_1d(10**9, 256)": (lambda: geometry.launch_1d(10**9, 256), "at most 16,777,216"),
    "a 0-d array": (lambda: trace(copy_kernel, 1, 32, np.array(1.0, np.float32), _OUT), "0-dimensional"),
}


@pytest.mark.parametrize("name", list(WRONG_CALLS))
def test_a_wrong_call_is_one_sentence_not_a_traceback(name):
    call, says = WRONG_CALLS[name]
    try:
        result = call()
    except CourseError as e:  # LearnerError (and KernelError for the kernel's own line): one line in Jupyter
        message = str(e)
    else:  # grade() never raises: the sentence is its message
        assert result.status == "error", result
        message = result.message
    assert says in message, message
    assert "\n" not in message and "Traceback" not in message and "helpers/" not in message, message


@cuda.jit
def copy_3d(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_show_takes_a_block_by_its_coordinates_on_a_3d_trace():
    x = np.arange(64, dtype=np.float32)
    t = trace(copy_3d, (2, 2, 2), (8, 1, 1), x, np.zeros_like(x))
    from matplotlib.text import Text

    titles = lambda fig: sorted(t.get_text() for t in fig.findobj(Text) if "block" in t.get_text())  # noqa: E731
    assert titles(t.show(block=(1, 1, 1))) == titles(t.show(block=7)) != titles(t.show(block=0))
    with pytest.raises(LearnerError, match=r"block must be a block of this trace's 2 x 2 x 2 grid"):
        t.show(block=(2, 0, 0))
