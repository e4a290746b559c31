"""The fuzz suite's table: what a learner types into a notebook cell, and what the answer must say.

Each ``Case`` is one cell, run in a real ipykernel by ``tests/e2e/test_fuzz.py`` after ``PRELUDE`` (the
imports a notebook starts with). ``expect`` is a regular expression the cell's output must match
(case-insensitive): the sentence that names the cause. Whatever the case, no traceback may come
from inside ``helpers/`` and the safety net's "bug in the course's helpers" line may not appear.

Grow it with every bug found: one case per bug, named after what the learner did.
``fresh=True`` (or an ``env``) runs the case in a kernel of its own, for cases that break or need
a kernel's state from the start (numba imported before helpers, a bad COURSE_MODE).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRELUDE = """\
import helpers
import numba
import numpy as np
from numba import cuda
from helpers import cuda_c, geometry, trace
from helpers.problems import nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11, nb12, nb13, nb14, nb15
from helpers.problems import nb16
from helpers.problems import nb17
from helpers.problems import nb18
from helpers.problems import nb19


class Evil:
    '''A hostile object: every protocol a checker might touch raises.'''

    def __eq__(self, other): raise RuntimeError("eq")
    def __len__(self): raise RuntimeError("len")
    def __iter__(self): raise RuntimeError("iter")
    def __repr__(self): raise RuntimeError("repr")
    def __bool__(self): raise RuntimeError("bool")
    def __float__(self): raise RuntimeError("float")
    def __int__(self): raise RuntimeError("int")
    def __index__(self): raise RuntimeError("index")
    def __hash__(self): raise RuntimeError("hash")


evil = Evil()
"""


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    expect: str  # regex, searched case-insensitively in everything the cell showed
    fresh: bool = False  # a kernel of its own (no PRELUDE)
    env: dict = field(default_factory=dict)  # extra environment for that kernel (implies fresh)
    timeout: float = 300.0  # a hang detector, not a speed limit: a busy machine must not fail a case
    traceback_ok: bool = False  # the learner asked for a traceback (helpers.last_error())


def _k(body: str) -> str:
    """A kernel cell: `body` is a @cuda.jit definition followed by the line that uses it."""
    return body.strip("\n")


ADD = """
@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
a, b, out = np.arange(10, dtype=np.float32), np.ones(10, np.float32), np.zeros(10, np.float32)
"""

SAXPY = """
@cuda.jit
def saxpy(alpha, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]
"""

CLAMP_HEAD = 'extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)'
ONE = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1; }'
CP = 'cp = helpers.standins.library("cupy")\n'
CORE = 'core = helpers.standins.library("cuda.core")\n'
DRIVER = 'driver = helpers.standins.library("cuda.bindings.driver")\n'
CC = 'cc = helpers.standins.library("cuda.compute")\ncp = helpers.standins.library("cupy")\n'
PYCUDA = "from helpers.standins.pycuda import ElementwiseKernel, SourceModule, gpuarray\n"
PYCUDA += "from helpers.standins.pycuda import driver as drv\n"
ONE_MODULE = f"{DRIVER}m = cuda_c.check(driver.cuModuleLoadData(cuda_c.compile('{ONE}', target='cubin')))\n"

CASES: list[Case] = []


def case(name, expect, code, **kw):
    CASES.append(Case(name, code.strip("\n"), expect, **kw))


# ============================================================================ import order and the mode
case(
    "numba_cuda_imported_before_helpers",
    r"imported before helpers.*restart the kernel",
    "from numba import cuda\nimport helpers",
    fresh=True,
)
case(
    "numba_cuda_module_imported_before_helpers_then_a_check",
    r"imported before helpers.*restart the kernel",
    "import numba.cuda\nimport helpers\nfrom helpers.problems import nb02\nnb02.vector_add.check(None)",
    fresh=True,
)
case(
    "course_mode_banana",
    r"COURSE_MODE='banana' is not understood: use cpu, gpu",
    "import helpers",
    env={"COURSE_MODE": "banana"},
)
case(
    "course_mode_gpu_without_a_gpu",
    r"COURSE_MODE=gpu, but no NVIDIA driver",
    "import helpers",
    env={"COURSE_MODE": "GPU"},
)
case("course_mode_empty_means_detect", r"CPU mode", "import helpers", env={"COURSE_MODE": ""})
case(
    "progress_file_in_a_missing_folder",
    r"Progress could not be saved.*✓ nb01.blocks_per_grid",
    "import helpers\nfrom helpers.problems import nb01\nnb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t)",
    env={"COURSE_PROGRESS_FILE": "/proc/no-such-folder/progress.json"},
)

# ============================================================================ helpers (the package root)
case("trace_no_launch_given", r"Give the launch: trace\(kernel, griddim, blockdim", ADD + "trace(add)")
case("trace_launch_forgotten_with_brackets", r"Give the launch", ADD + "trace(add[1, 32])")
case(
    "trace_griddim_a_string",
    r"griddim must be an int or a tuple of 1 to 3 ints.*not '12'",
    ADD + "trace(add, '12', 32, a, b, out)",
)
case(
    "trace_one_argument_missing",
    r"add takes 3 argument\(s\) \(a, b, out\) but 2 were given",
    ADD + "trace(add, 1, 32, a, b)",
)
case("trace_unknown_keyword", r"unexpected keyword argument 'bogus'", ADD + "trace(add, 1, 32, a, b, out, bogus=1)")
case("trace_an_int_not_a_kernel", r"trace\(\) needs a @cuda.jit kernel, not int", "trace(42, 1, 32)")
case("trace_none", r"trace\(\) needs a @cuda.jit kernel", "trace(None)")
case(
    "trace_outputs_unknown_name",
    r"'zzz' is not an array parameter of add",
    ADD + "trace(add, 1, 32, a, b, out, outputs=('zzz',))",
)
case(
    "trace_outputs_none",
    r"outputs names the output arrays.*not None",
    ADD + "trace(add, 1, 32, a, b, out, outputs=None)",
)
case("trace_zero_blocks", r"griddim must be 1 to 3 positive ints, not 0", ADD + "trace(add, 0, 32, a, b, out)")
case("trace_negative_blocks", r"griddim must be 1 to 3 positive ints, not -1", ADD + "trace(add, -1, 32, a, b, out)")
case("trace_block_too_big", r"2048 threads per block is more than the 1024", ADD + "trace(add, 1, 2048, a, b, out)")
case(
    "trace_four_grid_dimensions",
    r"tuple of 1 to 3 ints.*\(1, 1, 1, 1\)",
    ADD + "trace(add, (1, 1, 1, 1), 32, a, b, out)",
)
case("trace_giant_grid", r"too many to run one by one on the CPU", ADD + "trace(add, 10**9, 1024, a, b, out)")
case("trace_0d_array", r"0-dimensional.*at line \d+", ADD + "trace(add, 1, 32, np.array(3.0), b, out)")
case(
    "trace_nested_list_argument",
    r"a is a Python list: a kernel takes NumPy arrays \(and numbers\), so pass np.array\(a, dtype=np.float32\)",
    ADD + "trace(add, 1, 32, [[1, 2], [3]], b, out)",
)
case(
    "trace_flat_list_argument",
    r"a is a Python list: a kernel takes NumPy arrays",
    ADD + "trace(add, 1, 32, [1.0, 2.0, 3.0], b, out)",
)
case(
    "trace_none_arguments",
    r"Your kernel raised AttributeError.*'NoneType'.*Fix that line",
    ADD + "trace(add, 1, 32, None, None, None)",
)
case(
    "trace_bytes_and_str_arguments",
    r"Your kernel raised TypeError.*Fix that line",
    ADD + "trace(add, 1, 32, 'abc', b'abc', np.zeros(3, np.float32))",
)
case(
    "trace_watchdog_a_string",
    r"watchdog is a time in seconds.*not 'x'",
    ADD + "trace(add, 1, 32, a, b, out, watchdog='x')",
)
case(
    "trace_sharedmem_a_string",
    r"sharedmem is a number of bytes.*not 'x'",
    ADD + "trace(add, 1, 32, a, b, out, sharedmem='x')",
)
case(
    "trace_giant_arrays_small_launch",
    r"<Trace of add: 1 block\(s\) x 32 threads",
    ADD + "z = np.zeros(10**8, np.float32)\ntrace(add, 1, 32, z, z, z)",
)
case(
    "trace_missing_guard_summary",
    r"Out of bounds: thread 10 of block 0 read a\[10\]",
    "@cuda.jit\ndef add_ng(a, b, out):\n    i = cuda.grid(1)\n    out[i] = a[i] + b[i]\n"
    "a, b, out = np.arange(10, dtype=np.float32), np.ones(10, np.float32), np.zeros(10, np.float32)\n"
    "print(trace(add_ng, 1, 32, a, b, out).summary())",
)
case(
    "trace_empty_output_array",
    r"1 verdict",
    "@cuda.jit\ndef k(out):\n    out[0] = 1\ntrace(k, 1, 1, np.zeros(0, np.float32))",
)
case(
    "trace_int_division_by_zero_in_kernel",
    r"Your kernel raised OverflowError.*Fix that line",
    "@cuda.jit\ndef k(out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = out.size / 0\ntrace(k, 1, 8, np.zeros(8, np.int32))",
)
case(
    "trace_threadidx_w",
    r"'Dim3' object has no attribute 'w'.*Fix that line",
    "@cuda.jit\ndef k(out):\n    out[0] = cuda.threadIdx.w\ntrace(k, 1, 8, np.zeros(8, np.float32))",
)
case(
    "trace_negative_index",
    r"negative|Out of bounds",
    "@cuda.jit\ndef k(out):\n    i = cuda.grid(1)\n    out[-1 - i] = 1\nprint(trace(k, 1, 16, np.zeros(8, np.int32)).summary())",
)
case(
    "trace_uninitialised_shared_read",
    r"never (set|written)|uninitiali[sz]ed|before any thread wrote",
    "@cuda.jit\ndef k(out):\n    s = cuda.shared.array(8, numba.float32)\n    t = cuda.threadIdx.x\n    s[t] = t\n    out[t] = s[(t + 1) % 8]\nprint(trace(k, 1, 8, np.zeros(8, np.float32)).summary())",
)
case(
    "trace_infinite_loop_within_the_watchdog",
    r"has run line \d+ \(`while True:`\) for \d+ s: is a loop missing its exit",
    "@cuda.jit\ndef k(out):\n    while True:\n        pass\ntrace(k, 1, 4, np.zeros(4, np.float32), watchdog=2)",
    timeout=120,  # a hang detector only: the watchdog (2 s) stops the cell, however busy the machine
)
# -- issue 27's fuzz leftovers: each found by trying the course as a learner would -------------------------
case(
    "trace_0d_array_then_show",
    r"Race on x\[\(\)\]",
    "@cuda.jit\ndef k(x):\n    x[()] = 1.0\nt = trace(k, 1, 4, np.zeros((), np.float32))\nt.show()\nprint(t.summary())",
)
case(
    "trace_ballot_stored_into_uint32",
    r"0xfffffff0",
    "@cuda.jit\ndef k(out):\n    i = cuda.threadIdx.x\n    out[i] = cuda.ballot_sync(0xFFFFFFFF, i >= 4)\n"
    "u = np.zeros(32, np.uint32)\ntrace(k, 1, 32, u)\nprint(hex(u[0]))",
)
case(
    "trace_a_view_of_x_passed_as_a_second_argument",
    r"Race on x\[1\] \(x and y are views of the same memory\)",
    "@cuda.jit\ndef k(x, y):\n    i = cuda.grid(1)\n    if i < x.size - 1:\n        x[i] = y[i + 1]\n"
    "x = np.arange(32, dtype=np.float32)\nprint(trace(k, 1, 32, x, x[:]).summary())",
)
case(
    "trace_float64_arrays_for_a_float32_signature",
    r"declared with a signature whose parameter a is a 1-D float32 array, but a is a 1-D float64 array",
    '@cuda.jit("void(float32[:], float32[:])")\ndef k(a, out):\n    i = cuda.grid(1)\n    if i < out.size:\n'
    "        out[i] = a[i] * 2\ntrace(k, 1, 32, np.ones(32), np.zeros(32))",
)
case(
    "trace_without_a_launch_after_launching",
    r"trace\(add, \.\.\.\) names no launch.*holds the \[4, 256\] of an earlier launch",
    ADD + "add[4, 256](a, b, out)\ntrace(add, a, b, out)",
)
case(
    "trace_shared_array_sized_by_an_argument",
    r"shape of a shared or local array must be a constant known when the kernel compiles \(line \d+",
    "@cuda.jit\ndef k(out):\n    s = cuda.shared.array(out.size, np.float32)\n    i = cuda.grid(1)\n    s[i] = i\n"
    "    cuda.syncthreads()\n    out[i] = s[i]\ntrace(k, 1, 32, np.zeros(32, np.float32))",
)
case(
    "progress_file_with_bytes_that_are_not_utf8",
    r"could not be read \(not UTF-8 text.*moved to progress\.json\.damaged-.*✓ nb01.blocks_per_grid",
    "import os\nopen(os.environ['COURSE_PROGRESS_FILE'], 'wb').write(b'{\"version\": 1, \"exercises\": {\"nb\\xff\": {}}}')\n"
    "import helpers\nfrom helpers.problems import nb01\nnb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t)",
    fresh=True,
)
case(
    "trace_a_long_loop_in_every_thread",
    r"has run line \d+ \(`s \+= j`\) for \d+ s and its variables keep changing: more work per thread",
    "@cuda.jit\ndef k(out):\n    s = 0.0\n    for j in range(10**12):\n        s += j\n    out[cuda.grid(1)] = s\n"
    "trace(k, 1, 4, np.zeros(4, np.float32), watchdog=2)",
    timeout=120,  # a hang detector only: the watchdog (2 s) stops the cell, however busy the machine
)
case(
    "trace_show_block_out_of_range",
    r"block must be a whole number from 0 to 0 for this trace, not 5",
    ADD + "trace(add, 1, 32, a, b, out).show(block=5)",
)
case(
    "trace_show_block_a_string",
    r"block must be a whole number.*not '0'",
    ADD + "trace(add, 1, 32, a, b, out).show(block='0')",
)
case(
    "trace_show_array_an_int",
    r"name an array by its parameter name as a string",
    ADD + "trace(add, 1, 32, a, b, out).show(array=3)",
)
case(
    "trace_show_unknown_array",
    r"No array called 'zz' in this trace; arrays: a, b, out",
    ADD + "trace(add, 1, 32, a, b, out).show(array='zz')",
)
case(
    "trace_show_max_rows_zero",
    r"max_rows must be a whole number >= 1",
    ADD + "trace(add, 1, 32, a, b, out).show(max_rows=0)",
)
case(
    "trace_show_coalescing_warp_out_of_range",
    r"warp must be a whole number from 0 to 0",
    ADD + "trace(add, 1, 32, a, b, out).show_coalescing(warp=9)",
)
case(
    "trace_show_banks_negative_limit",
    r"limit must be a whole number >= 1",
    ADD + "trace(add, 1, 32, a, b, out).show_banks(limit=-1)",
)
case(
    "trace_const_reads_without_a_table",
    r"constant memory: no reads",
    ADD + "print(trace(add, 1, 32, a, b, out).const_reads())",
)
case(
    "trace_block_of_huge_id",
    r"global thread id must be a whole number from 0 to 31",
    ADD + "trace(add, 1, 32, a, b, out).block_of(10**6)",
)
case(
    "trace_thread_of_a_string",
    r"global thread id must be a whole number",
    ADD + "trace(add, 1, 32, a, b, out).thread_of('x')",
)
case(
    "trace_show_3d_block_as_a_tuple",
    r"block must be a block of this trace's 1 x 1 x 2 grid, such as \(0, 0, 0\) or its number 0 to 1, not \(1, 1, 1\)",
    "@cuda.jit\ndef k3(out):\n    x, y, z = cuda.grid(3)\n    out[0] = 1\n"
    "trace(k3, (1, 1, 2), (2, 2, 2), np.zeros(1, np.float32)).show(block=(1, 1, 1))",
)
case(
    "trace_summary_given_an_argument",
    r"TypeError: Trace.summary\(\) takes 1 positional argument",
    ADD + "trace(add, 1, 32, a, b, out).summary(1)",
)
case("trace_of_a_plain_function", r"<Trace of plain", "def plain(a):\n    pass\ntrace(plain, 1, 4, np.zeros(4))")
case("gpu_only_given_none", r"\[GPU only\] Skipped: None", "helpers.gpu_only(None)")
case("size_with_no_argument", r"size\(\) missing 1 required positional argument: 'gpu'", "helpers.size()")
case("progress_with_a_strange_argument", r"exercise\s+status\s+attempts", "helpers.progress(show='yes')")
case("last_error_asked_for", r"Traceback|No error from helpers", "helpers.last_error()", traceback_ok=True)
case("banner_given_an_argument", r"banner\(\) takes 0 positional arguments", "helpers.banner(1)")
case("env_report_in_cpu_mode", r"NumPy / Numba versions", "helpers.env.report()")

# ============================================================================ helpers.geometry
case("grid_explorer_three_dims", r"grid_explorer\(dims\) takes 1 .* or 2 .*, not 3", "geometry.grid_explorer(3)")
case("grid_explorer_a_string", r"grid_explorer\(dims\) takes 1 .*not '2'", "geometry.grid_explorer('2')")
case("grid_explorer_true", r"grid_explorer\(dims\) takes 1 .*not True", "geometry.grid_explorer(True)")
case(
    "launch_2d_shape_of_one_number",
    r"shape must be a pair of whole numbers.*got \(10,\)",
    "geometry.launch_2d((10,), (8, 8))",
)
case(
    "launch_2d_block_of_one_number",
    r"block must be a pair of whole numbers.*got \(8,\)",
    "geometry.launch_2d((10, 10), (8,))",
)
case(
    "launch_2d_block_too_big",
    r"a 64x64 block has 4096 threads, more than the 1024",
    "geometry.launch_2d((10, 10), (64, 64))",
)
case(
    "launch_2d_grid_of_one_number",
    r"grid must be a pair of whole numbers",
    "geometry.launch_2d((10, 10), (8, 8), grid=(1,))",
)
case("launch_2d_none", r"shape must be a pair of whole numbers.*got None", "geometry.launch_2d(None, None)")
case("launch_2d_shape_a_string", r"shape must be a pair.*got 'ab'", "geometry.launch_2d('ab', (8, 8))")
case(
    "launch_2d_fractional_rows",
    r"rows must be a positive whole number, got 10.5",
    "geometry.launch_2d((10.5, 10), (8, 8))",
)
case("launch_1d_a_billion", r"use at most 16,777,216 of each here", "geometry.launch_1d(10**9, 256)")
case("launch_1d_negative_n", r"n must be a positive whole number, got -5", "geometry.launch_1d(-5, 256)")
case("launch_1d_zero_threads", r"threads_per_block must be a positive whole number, got 0", "geometry.launch_1d(10, 0)")
case("launch_1d_too_many_threads", r"threads_per_block=2000 is more than the 1024", "geometry.launch_1d(10, 2000)")
case("launch_1d_n_a_string", r"n must be a positive whole number, got '10'", "geometry.launch_1d('10', 32)")
case(
    "launch_1d_negative_blocks",
    r"blocks must be a whole number of at least 0, got -1",
    "geometry.launch_1d(10, 32, blocks=-1)",
)
case(
    "launch_1d_fractional_blocks",
    r"blocks must be a whole number of at least 0, got 2.5",
    "geometry.launch_1d(10, 32, blocks=2.5)",
)
case(
    "launch_1d_numpy_ints_work",
    r"Launch\(shape=\(10,\), block=\(32, 1\), grid=\(1, 1\)\)",
    "geometry.launch_1d(np.int64(10), np.int32(32))",
)
case(
    "blocks_for_zero_threads", r"threads_per_block must be a positive whole number, got 0", "geometry.blocks_for(10, 0)"
)
case("blocks_for_a_float", r"n must be a whole number of at least 0, got 10.0", "geometry.blocks_for(10.0, 32)")
case("draw_launch_an_int", r"draw_launch needs a launch made by geometry.launch_1d", "geometry.draw_launch(42)")
case(
    "draw_launch_ax_a_string",
    r"ax must be a matplotlib Axes",
    "geometry.draw_launch(geometry.launch_1d(10, 4), ax='x')",
)

# ============================================================================ helpers.cuda_c
case("compile_none", r"src must be a string of CUDA C, not None", "cuda_c.compile(None)")
case(
    "compile_non_utf8_bytes",
    r"src is bytes that are not UTF-8 text \(byte 0 is 0xff\)",
    "cuda_c.compile(b'\\xff\\xfe __global__ void k(){}')",
)
case(
    "compile_arch_an_int",
    r"arch must be a string such as 'sm_90'.*not 90",
    "cuda_c.compile('__global__ void k(){}', arch=90)",
)
case(
    "compile_arch_unknown",
    r"invalid value for --gpu-architecture",
    "cuda_c.compile('__global__ void k(){}', arch='sm_9000')",
)
case(
    "compile_target_upper_case",
    r"target must be 'ptx' or 'cubin', not 'PTX'",
    "cuda_c.compile('__global__ void k(){}', target='PTX')",
)
case(
    "compile_options_a_string",
    r"options must be a tuple of strings",
    "cuda_c.compile('__global__ void k(){}', options='-lineinfo')",
)
case(
    "compile_unknown_option",
    r"unrecognized option --bogus-flag",
    "cuda_c.compile('__global__ void k(){}', options=('--bogus-flag',))",
)
case(
    "compile_syntax_error",
    r"kernel.cu does not compile: .*expected an expression",
    "cuda_c.compile('__global__ void k(){ int x = ; }')",
)
case("compile_name_none", r"name must be a string", "cuda_c.compile('__global__ void k(){}', name=None)")
case("compile_a_megabyte_of_garbage", r"kernel.cu does not compile", "cuda_c.compile('x' * 10**6)")
case("cuda_check_an_int", r"check\(\) expects the tuple a cuda.bindings call returns.*not 123", "cuda_c.check(123)")
case("cuda_check_empty_tuple", r"check\(\) expects the tuple", "cuda_c.check(())")
case("cuda_check_a_list", r"check\(\) expects the tuple.*\[0, 1\]", "cuda_c.check([0, 1])")
case("cuda_check_error_code", r"CUDA call failed: .*999999", "cuda_c.check((999999,))")
case("entry_points_none", r"ptx must be a string", "cuda_c.entry_points(None)")
case("cubin_arch_a_string", r"cubin_arch needs a CUBIN's bytes", "cuda_c.cubin_arch('abc')")
case("cubin_arch_not_elf", r"not a CUBIN", "cuda_c.cubin_arch(b'abc')")
case("cubin_arch_truncated_elf", r"not a CUBIN", "cuda_c.cubin_arch(b'\\x7fELF')")
case("source_of_none", r"source_of needs what compile\(\) returned", "cuda_c.source_of(None)")
case(
    "elementwise_source_none",
    r"must be a string of CUDA C, not None",
    "cuda_c.elementwise_source(None, None, None, None)",
)
case(
    "elementwise_source_scalars_an_int",
    r"scalars must be a tuple of parameter names",
    "cuda_c.elementwise_source('float32 x', 'float32 z', 'z = x', 'k', scalars=5)",
)
case(
    "elementwise_source_unknown_type",
    r"unknown type 'floaty'",
    "cuda_c.elementwise_source('floaty x', 'float32 z', 'z = x', 'k')",
)
case(
    "elementwise_source_parameter_without_type",
    r"cannot read parameter 'x'",
    "cuda_c.elementwise_source('x', '', 'z = x', 'k')",
)
case(
    "reduction_source_none",
    r"must be a string of CUDA C, not None",
    "cuda_c.reduction_source(None, None, None, None, None, None)",
)
case(
    "pycuda_elementwise_source_none",
    r"arguments must be a string of CUDA C",
    "cuda_c.pycuda_elementwise_source(None, None)",
)
case("signature_probe_none", r"kernel must be a string of CUDA C", "cuda_c.signature_probe(None, None)")

# ============================================================================ helpers.ptx
PTX = "import helpers.ptx as ptx\n"
case(
    "ptx_run_none",
    r"run\(\) needs CUDA C source or PTX text as a string, not None",
    PTX + "ptx.run(None, 'k', 1, 1, ())",
)
case(
    "ptx_run_kernel_name_an_int",
    r"kernel_name must be the kernel's name as a string",
    PTX + "ptx.run('__global__ void k(){}', 5, 1, 1, ())",
)
case(
    "ptx_run_args_none",
    r"args must be a tuple of the kernel's arguments",
    PTX + "ptx.run('__global__ void k(){}', 'k', 1, 1, None)",
)
case(
    "ptx_run_unknown_kernel",
    r"No kernel called 'zz' in this code; kernels: k",
    PTX + f"ptx.run('{ONE}', 'zz', 1, 1, (np.zeros(1, np.float32),))",
)
case(
    "ptx_run_block_too_big",
    r"5000 threads per block is more than the 1024",
    PTX + f"ptx.run('{ONE}', 'k', 1, 5000, (np.zeros(1, np.float32),))",
)
case("ptx_run_missing_argument", r"k takes 1 argument\(s\) but 0 were given", PTX + f"ptx.run('{ONE}', 'k', 1, 4, ())")
case(
    "ptx_run_python_int_for_a_pointer",
    r"plain Python int; the kernel expects .u64",
    PTX + f"ptx.run('{ONE}', 'k', 1, 4, (5,))",
)
case(
    "ptx_run_string_argument",
    r"must be a NumPy array or a NumPy scalar, not str",
    PTX + f"ptx.run('{ONE}', 'k', 1, 4, ('abc',))",
)
case(
    "ptx_run_infinite_loop",
    r"is a loop missing its exit\? If not, run a smaller problem or raise max_steps",
    PTX
    + "ptx.run('extern \"C\" __global__ void k(float *x){ while (1) x[0] += 1; }', 'k', 1, 1, (np.zeros(4, np.float32),))",
)
case(
    "ptx_run_negative_shared_bytes",
    r"shared_bytes must be a whole number of at least 0, not -1",
    PTX + f"ptx.run('{ONE}', 'k', 1, 1, (np.zeros(4, np.float32),), shared_bytes=-1)",
)
case(
    "ptx_run_python_scalars_unknown",
    r"python_scalars must be 'refuse', 'cupy' or 'cast'",
    PTX + f"ptx.run('{ONE}', 'k', 1, 1, (np.zeros(4, np.float32),), python_scalars='x')",
)
case(
    "ptx_trace_summary_missing_guard",
    r"Out of bounds: thread 4 of block 0 wrote x\[4\]",
    PTX + f"print(ptx.trace('{ONE}', 'k', 1, 8, np.zeros(4, np.float32)).summary())",
)

# ============================================================================ helpers.profiling
PROF = "from helpers import profiling\n"
case("ncu_without_ncu", r"Nsight Compute \(ncu\) is not on PATH", PROF + "profiling.ncu(['python', 'x.py'])")
case("ncu_command_as_a_string", r"Nsight Compute \(ncu\) is not on PATH", PROF + "profiling.ncu('python x.py')")
case("parse_garbage", r"ncu profiled no kernel", PROF + "profiling.parse('garbage')")
case("parse_none", r"parse\(\) reads the text ncu --csv printed", PROF + "profiling.parse(None)")
case("parse_bytes_header_only", r"^\[\]$|\[\]", PROF + 'profiling.parse(b\'"ID","Kernel Name"\\n\')')
case(
    "parse_launch_id_not_a_number",
    r"'kernel': 'k'",
    PROF + 'profiling.parse(\'"ID","Kernel Name","Metric Name","Metric Value"\\n"x","k","m","1"\')',
)
case("show_none", r"show\(\) takes the rows ncu\(\) or parse\(\) returned", PROF + "profiling.show(None)")
case("show_rows_without_kernel", r"show\(\) takes the rows", PROF + "profiling.show([{'a': 1}])")
case("show_a_string", r"show\(\) takes the rows", PROF + "profiling.show('rows')")

# ============================================================================ helpers.standins
case("library_numpy", r"no CPU stand-in for 'numpy'", "helpers.standins.library('numpy')")
case("library_none", r"no CPU stand-in for None", "helpers.standins.library(None)")
case("library_a_list", r"no CPU stand-in for \['cupy'\]", "helpers.standins.library(['cupy'])")
case("standins_unknown_attribute", r"helpers.standins has no 'nope'", "helpers.standins.nope")
case(
    "cupy_rawkernel_out_of_bounds",
    r"Out of bounds: thread 2 of block 0 wrote x\[2\]",
    CP + f"cp.RawKernel('{ONE}', 'k')((1,), (4,), (cp.zeros(2, cp.float32),))",
)
case(
    "cupy_rawkernel_args_not_a_tuple",
    r"the kernel's arguments go in one tuple",
    CP + f"cp.RawKernel('{ONE}', 'k')(1, 4, cp.zeros(4, cp.float32))",
)
case(
    "cupy_rawkernel_host_array",
    r"NumPy array in host memory; CuPy refuses it",
    CP + f"cp.RawKernel('{ONE}', 'k')(1, 4, (np.zeros(4, np.float32),))",
)
case(
    "cupy_rawkernel_unknown_name",
    r"No kernel called 'zz'",
    CP + f"cp.RawKernel('{ONE}', 'zz')(1, 4, (cp.zeros(4, cp.float32),))",
)
case(
    "cupy_rawkernel_syntax_error",
    r"does not compile: .*expected a \";\"",
    CP + "cp.RawKernel('extern \"C\" __global__ void k(float* x) { x[0] = 1 }', 'k')(1, 4, (cp.zeros(4, cp.float32),))",
)
case(
    "cupy_rawkernel_grid_a_string",
    r"grid must be an int or a tuple of 1 to 3 ints.*not 'a'",
    CP + f"cp.RawKernel('{ONE}', 'k')('a', 'b', (cp.zeros(4, cp.float32),))",
)
case(
    "cupy_rawkernel_code_none", r"RawKernel's code must be a string of CUDA C, not None", CP + "cp.RawKernel(None, 'k')"
)
case(
    "cupy_elementwise_none",
    r"the parameters must be a string such as 'float32 x",
    CP + "cp.ElementwiseKernel(None, None, None, None)",
)
case(
    "cupy_elementwise_string_argument",
    r"dbl: argument x must be an array or a number, not 'abc'",
    CP + "cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x * 2', 'dbl')('abc')",
)
case(
    "cupy_elementwise_shapes_do_not_broadcast",
    r"shapes \(4,\), \(3,\) do not broadcast",
    CP
    + "cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x * 2', 'dbl')(cp.zeros(4, cp.float32), cp.zeros(3, cp.float32))",
)
case(
    "cupy_elementwise_no_arguments",
    r"dbl takes 1 or 2 arguments, not 0",
    CP + "cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x * 2', 'dbl')()",
)
case(
    "cupy_elementwise_syntax_error",
    r"does not compile",
    CP + "cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x +* 2', 'dbl')(cp.zeros(4, cp.float32))",
)
case(
    "cupy_reduction_axis",
    r"with axis or keepdims needs a GPU",
    CP
    + "cp.ReductionKernel('float32 x', 'float32 y', 'x', 'a + b', 'y = a', '0', 'r')(cp.zeros((2, 2), cp.float32), axis=5)",
)
case("cupy_memory_pool", r"get_default_memory_pool needs a GPU", CP + "cp.get_default_memory_pool()")
case("cupy_unknown_function", r"cupy.not_a_function needs a GPU", CP + "cp.not_a_function()")
case("cupy_zeros_negative", r"cupy.zeros refused its arguments: negative dimensions", CP + "cp.zeros(-1)")
case("cupy_arange_a_string", r"cupy.arange refused its arguments", CP + "cp.arange('a')")
case(
    "pycuda_sourcemodule_none",
    r"SourceModule's source must be a string of CUDA C, not None",
    PYCUDA + "SourceModule(None)",
)
case(
    "pycuda_get_function_unknown",
    r"SourceModule has no kernel called 'zz'",
    PYCUDA + "SourceModule('__global__ void k(float *x) { x[0] = 1; }').get_function('zz')",
)
case(
    "pycuda_host_array_without_in_out",
    r"PyCUDA refuses parameter #0 \(0-based\) of k, a ndarray",
    PYCUDA
    + "SourceModule('__global__ void k(float *x) { x[0] = 1; }').get_function('k')(np.zeros(4, np.float32), block=(4, 1, 1), grid=(1, 1))",
)
case(
    "pycuda_out_too_small",
    r"Out of bounds: thread 2 of block 0 wrote x\[2\]",
    PYCUDA
    + "SourceModule('__global__ void k(float *x) { x[threadIdx.x] = 1; }').get_function('k')(drv.Out(np.zeros(2, np.float32)), block=(4, 1, 1), grid=(1, 1))",
)
case(
    "pycuda_launch_without_block",
    r"k\(...\) needs block=\(threads, 1, 1\)",
    PYCUDA
    + "SourceModule('__global__ void k(float *x) { x[0] = 1; }').get_function('k')(drv.Out(np.zeros(4, np.float32)))",
)
case(
    "pycuda_launch_unknown_keyword",
    r"k\(\) got the keyword\(s\) bogus, which PyCUDA does not take",
    PYCUDA
    + "SourceModule('__global__ void k(float *x) { x[0] = 1; }').get_function('k')(drv.Out(np.zeros(4, np.float32)), block=(4, 1, 1), grid=(1, 1), bogus=3)",
)
case(
    "pycuda_prepare_none",
    r"prepare\(\) takes the parameters' types as a string such as 'PPfi'",
    PYCUDA + "SourceModule('__global__ void k(float *x) { x[0] = 1; }').get_function('k').prepare(None)",
)
case(
    "pycuda_prepared_call_without_prepare",
    r"prepared_call of k got 1 argument\(s\) for the format None",
    PYCUDA
    + "SourceModule('__global__ void k(float *x, int n) { x[0] = n; }').get_function('k').prepared_call((1, 1), (4, 1, 1), 5)",
)
case(
    "pycuda_mem_alloc_a_string",
    r"mem_alloc's size in bytes must be a whole number of at least 0, not 'a'",
    PYCUDA + "drv.mem_alloc('a')",
)
case(
    "pycuda_mem_alloc_negative",
    r"mem_alloc's size in bytes must be a whole number of at least 0, not -5",
    PYCUDA + "drv.mem_alloc(-5)",
)
case(
    "pycuda_memcpy_none",
    r"memcpy_htod's source must be a NumPy array of numbers, not None",
    PYCUDA + "drv.memcpy_htod(None, None)",
)
case(
    "pycuda_memcpy_to_a_list",
    r"memcpy needs device memory from drv.mem_alloc",
    PYCUDA + "drv.memcpy_htod([1], np.zeros(2))",
)
case(
    "pycuda_memcpy_past_the_allocation",
    r"800 bytes at 0x[0-9a-f]+ are not inside one mem_alloc allocation",
    PYCUDA + "drv.memcpy_htod(drv.mem_alloc(8), np.zeros(100))",
)
case(
    "pycuda_gpuarray_zeros_negative",
    r"a GPUArray of shape -3 .* is refused: negative dimensions",
    PYCUDA + "gpuarray.zeros(-3)",
)
case(
    "pycuda_elementwise_none",
    r"arguments must be a string of CUDA C, not None",
    PYCUDA + "ElementwiseKernel(None, None)",
)
case(
    "pycuda_elementwise_without_gpuarray",
    r"needs at least one GPUArray argument",
    PYCUDA + "ElementwiseKernel('float *x', 'x[i] = 2 * x[i]')(None)",
)
case("pycuda_context_needs_gpu", r"pycuda.driver.Context needs a GPU", PYCUDA + "drv.Context.get_device()")
case(
    "core_device_a_string",
    r"The CPU stand-in has one device, Device\(0\); Device\('zero'\) does not exist",
    CORE + "core.Device('zero')",
)
case("core_program_none", r"Program's code must be a string of CUDA C, not None", CORE + "core.Program(None, 'c++')")
case(
    "core_program_fortran",
    r"Program\(code_type='fortran'\) needs a GPU",
    CORE + "core.Program('__global__ void k(){}', 'fortran')",
)
case(
    "core_compile_to_exe",
    r"Program.compile\('exe'\) needs a GPU",
    CORE + "core.Program('__global__ void k(){}', 'c++').compile('exe')",
)
case(
    "core_compile_syntax_error",
    r"does not compile: .*expected an expression",
    CORE + "core.Program('__global__ void k(){ int x = ; }', 'c++').compile('cubin')",
)
case(
    "core_launchconfig_grid_a_string",
    r"LaunchConfig needs both grid= and block=|grid must be an int",
    CORE + "core.LaunchConfig(grid='a', block=None)",
)
case(
    "core_launchconfig_grid_text",
    r"grid must be an int or a tuple of 1 to 3 ints.*not 'a'",
    CORE + "core.LaunchConfig(grid='a', block=4)",
)
case(
    "core_launchconfig_shmem_a_string",
    r"shmem_size must be a whole number",
    CORE + "core.LaunchConfig(grid=1, block=4, shmem_size='x')",
)
case("core_launch_nones", r"takes a LaunchConfig and a Kernel from get_kernel", CORE + "core.launch(None, None, None)")
case(
    "core_launch_missing_argument",
    r"k takes 1 argument\(s\) but 0 were given",
    CORE
    + f"d = core.Device(0)\nk = core.Program('{ONE}', 'c++').compile('cubin').get_kernel('k')\ncore.launch(d.create_stream(), core.LaunchConfig(grid=1, block=4), k)",
)
case(
    "core_launch_wild_pointer",
    r"wrote address 0x3039.*which lies in none of the kernel's arrays",
    CORE
    + f"d = core.Device(0)\nk = core.Program('{ONE}', 'c++').compile('cubin').get_kernel('k')\ncore.launch(d.create_stream(), core.LaunchConfig(grid=1, block=4), k, 12345)",
)
case(
    "core_event_needs_gpu",
    r"Device.create_event \(timing with CUDA events\) needs a GPU",
    CORE + "core.Device(0).create_event()",
)
case(
    "driver_device_get_a_string",
    r"cuDeviceGet takes the device's number, such as cuDeviceGet\(0\), not 'a'",
    DRIVER + "driver.cuDeviceGet('a')",
)
case("driver_device_seven", r"CUDA_ERROR_INVALID_DEVICE", DRIVER + "cuda_c.check(driver.cuDeviceGet(7))")
case(
    "driver_module_load_none", r"cuModuleLoadData from a pointer needs a GPU", DRIVER + "driver.cuModuleLoadData(None)"
)
case(
    "driver_get_function_unknown",
    r"CUDA_ERROR_NOT_FOUND",
    ONE_MODULE + "cuda_c.check(driver.cuModuleGetFunction(m, b'zz'))",
)
case(
    "driver_get_function_module_none",
    r"cuModuleGetFunction needs the CUmodule that cuModuleLoadData returned",
    DRIVER + "driver.cuModuleGetFunction(None, b'k')",
)
case(
    "driver_mem_alloc_negative",
    r"cuMemAlloc's size in bytes must be a whole number of at least 0, not -1",
    DRIVER + "driver.cuMemAlloc(-1)",
)
case(
    "driver_memcpy_to_null",
    r"8 bytes at 0x0 are not inside one cuMemAlloc allocation",
    DRIVER + "driver.cuMemcpyHtoD(0, 0, 8)",
)
case(
    "driver_launch_function_none",
    r"cuLaunchKernel needs the CUfunction that cuModuleGetFunction returned",
    DRIVER + "driver.cuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, 0)",
)
case(
    "driver_launch_params_as_objects",
    r"kernelParams given as Python objects needs a GPU",
    ONE_MODULE
    + "f = cuda_c.check(driver.cuModuleGetFunction(m, b'k'))\ndriver.cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, None, None, 0)",
)
case("driver_event_needs_gpu", r"driver.cuEventCreate needs a GPU", DRIVER + "driver.cuEventCreate(0)")
case(
    "compute_reduce_none",
    r"d_in must be a device array or an iterator, not NoneType",
    CC + "cc.reduce_into(d_in=None, d_out=None, num_items=3, op=cc.OpKind.PLUS, h_init=np.zeros(1))",
)
case(
    "compute_reduce_too_many_items",
    r"num_items is 30 but d_in holds only 3 elements",
    CC + "cc.reduce_into(d_in=cp.zeros(3), d_out=cp.zeros(1), num_items=30, op=cc.OpKind.PLUS, h_init=np.zeros(1))",
)
case(
    "compute_reduce_op_a_string",
    r"op must be an OpKind \(e.g. OpKind.PLUS\), not str",
    CC + "cc.reduce_into(d_in=cp.zeros(3), d_out=cp.zeros(1), num_items=3, op='plus', h_init=np.zeros(1))",
)
case(
    "compute_reduce_negative_items",
    r"num_items must be a non-negative int, not -3",
    CC + "cc.reduce_into(d_in=cp.zeros(3), d_out=cp.zeros(1), num_items=-3, op=cc.OpKind.PLUS, h_init=np.zeros(1))",
)
case(
    "compute_reduce_positional_arguments",
    r"reduce_into\(\) takes 0 positional arguments but 5 were given",
    CC + "cc.reduce_into(cp.zeros(3), cp.zeros(1), 3, cc.OpKind.PLUS, np.zeros(1))",
)
case(
    "compute_scan_output_too_small",
    r"d_out holds 2 elements but the result needs 3",
    CC + "cc.inclusive_scan(d_in=cp.zeros(3), d_out=cp.zeros(2), op=cc.OpKind.PLUS, num_items=3)",
)
case(
    "compute_exclusive_scan_without_init",
    r"init_value is required",
    CC + "cc.exclusive_scan(d_in=cp.zeros(3), d_out=cp.zeros(3), op=cc.OpKind.PLUS, init_value=None, num_items=3)",
)
case(
    "compute_sort_order_a_string",
    r"order must be SortOrder.ASCENDING or SortOrder.DESCENDING",
    CC + "cc.radix_sort(d_in_keys=cp.zeros(3), d_out_keys=cp.zeros(3), num_items=3, order='down')",
)
case("compute_counting_iterator_python_int", r"CountingIterator needs a NumPy scalar", CC + "cc.CountingIterator(5)")
case(
    "compute_counting_a_trillion",
    r"CountingIterator over 1,000,000,000,000 items needs a GPU",
    CC
    + "cc.reduce_into(d_in=cc.CountingIterator(np.int64(1)), d_out=cp.zeros(1), num_items=10**12, op=cc.OpKind.PLUS, h_init=np.zeros(1))",
)
case(
    "compute_python_function_as_op",
    r"a Python function as op needs numba-cuda-mlir",
    CC + "cc.reduce_into(d_in=cp.zeros(3), d_out=cp.zeros(1), num_items=3, op=lambda a, b: a + b, h_init=np.zeros(1))",
)

# ============================================================================ helpers.exercises: check, hint, solution
case(
    "check_seed_a_string",
    r"seed must be a whole number.*not 'abc'",
    "nb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t, seed='abc')",
)
case(
    "check_seed_negative",
    r"seed must be a whole number.*not -1",
    "nb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t, seed=-1)",
)
case(
    "check_seed_a_float",
    r"seed must be a whole number.*not 1.5",
    "nb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t, seed=1.5)",
)
case(
    "check_seed_huge_is_fine",
    r"✓ nb01.blocks_per_grid",
    "nb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t, seed=10**30)",
)
case("check_kernel_seed_a_string", r"seed must be a whole number", ADD + "nb02.vector_add.check(add, seed='abc')")
case("grade_seed_a_string", r"seed must be a whole number", ADD + "print(nb02.vector_add.grade(add, seed='abc'))")
case(
    "check_unknown_keyword_function",
    r"check\(\) has no option bogus=: it takes your answer, then seed= and watchdog=",
    "nb01.blocks_per_grid.check(lambda n, t: n, bogus=1)",
)
case(
    "check_unknown_keyword_kernel",
    r"check\(\) has no option bogus=.*launch=",
    ADD + "nb02.vector_add.check(add, bogus=1)",
)
case("check_unknown_keyword_value", r"check\(\) has no option bogus=", "nb01.threads_launched.check(1024, bogus=1)")
case(
    "check_misspelt_launch",
    r"check\(\) has no option lanuch= \(did you mean launch=\?\)",
    SAXPY + "nb02.saxpy.check(saxpy, lanuch=lambda n: (1, 32))",
)
case(
    "check_watchdog_a_string",
    r"watchdog is a time in seconds.*not 'x'",
    "nb01.blocks_per_grid.check(lambda n, t: (n + t - 1) // t, watchdog='x')",
)
case("check_nothing", r"not attempted yet: replace the `# YOUR CODE HERE` line", "nb01.blocks_per_grid.check()")
case(
    "check_the_exercise_itself",
    r"pass your function itself.*not <FunctionExercise nb01.blocks_per_grid",
    "nb01.blocks_per_grid.check(nb01.blocks_per_grid)",
)
case(
    "check_the_hint_method",
    r"your function takes 0 arguments \(nothing\) but this exercise passes 2 \(n, t\)",
    "nb01.blocks_per_grid.check(nb01.blocks_per_grid.hint)",
)
case("check_a_module", r"pass your function itself.*not <module 'helpers'", "nb01.blocks_per_grid.check(helpers)")
case(
    "check_print_builtin",
    r"print\(n=1, t=256\) gave None \(NoneType\) but should give a whole number",
    "nb01.blocks_per_grid.check(print)",
)
case(
    "check_a_numpy_ufunc",
    r"your function takes 3 arguments \(x1, x2, out\) but this exercise passes 2",
    "nb01.blocks_per_grid.check(np.add)",
)
case(
    "check_too_few_parameters",
    r"your function takes 1 argument \(n\) but this exercise passes 2 \(n, t\)",
    "nb01.blocks_per_grid.check(lambda n: n)",
)
case(
    "check_function_raises",
    r"raised ZeroDivisionError: division by zero; fix it and check again",
    "nb01.blocks_per_grid.check(lambda *a, **k: 1/0)",
)
case(
    "check_returns_a_string", r"should be a number, got the string 'x'", "nb01.blocks_per_grid.check(lambda n, t: 'x')"
)
case(
    "check_returns_nan",
    r"gave nan, a float, but counts of blocks, threads and indices are whole numbers",
    "nb01.blocks_per_grid.check(lambda n, t: float('nan'))",
)
case("check_returns_a_googol", r"looks hard-coded for one example", "nb01.blocks_per_grid.check(lambda n, t: 10**100)")
case("check_returns_an_unprintable_int", r"✗ nb01.blocks_per_grid", "nb01.blocks_per_grid.check(lambda n, t: 10**5000)")
case(
    "check_function_calls_exit",
    r"your code called exit\(\) \(or sys.exit\(\)\), which stops the check",
    "import sys\nnb03.bandwidth_gbs.check(lambda nbytes, ms: sys.exit(3))",
)
case(
    "check_function_raises_keyboardinterrupt",
    r"check stopped: you interrupted it",
    "def bw(nbytes, ms):\n    raise KeyboardInterrupt\nnb03.bandwidth_gbs.check(bw)",
)
case(
    "check_kernel_where_a_function_is_expected",
    r"wants a plain Python function, not a @cuda.jit kernel: remove @cuda.jit",
    ADD + "nb01.blocks_per_grid.check(add)",
)
case(
    "check_function_where_a_kernel_is_expected",
    r"plain is a plain Python function, not a kernel: put @cuda.jit",
    "def plain(a, b, out):\n    pass\n    return 1\nnb02.vector_add.check(plain)",
)
case(
    "check_device_function",
    r"dev is a device function \(@cuda.jit\(device=True\)\), which cannot be launched",
    "@cuda.jit(device=True)\ndef dev(a):\n    return a\nnb02.vector_add.check(dev)",
)
case(
    "check_launch_for_a_fixed_launch",
    r"picks the launch itself: call check\(your_kernel\) without launch=",
    ADD + "nb02.vector_add.check(add, launch=5)",
)
case(
    "hint_given_an_argument",
    r"Exercise.hint\(\) takes 1 positional argument but 2 were given",
    "nb01.blocks_per_grid.hint(1)",
)
case(
    "solution_given_an_argument",
    r"Exercise.solution\(\) takes 1 positional argument",
    "nb01.blocks_per_grid.solution(1)",
)
case(
    "hint_three_times",
    r"Hint 2/2 for nb01.global_index.*last hint",
    "nb01.global_index.hint(); nb01.global_index.hint(); nb01.global_index.hint()",
)
case("solution_of_a_kernel_exercise", r"Solution for nb02.vector_add.*cuda.grid", "nb02.vector_add.solution()")
case("solution_of_a_cuda_c_exercise", r"Solution for nb08.clamp.*clamp", "nb08.clamp.solution()")
case(
    "grade_line_of_a_wrong_answer",
    r"✗ nb01.idle_threads: ",
    "print(nb01.idle_threads.grade(lambda n, t: n % t).line())",
)
case(
    "value_answer_a_0d_array",
    r"your answer gave array\(1024\) \(ndarray\) but should give a whole number",
    "nb01.threads_launched.check(np.array(1024))",
)
case(
    "value_answer_a_float",
    r"your answer is 1024.0, a float, but the answer is a whole number \(int\): write 1024",
    "nb01.threads_launched.check(1024.0)",
)
case(
    "value_answer_true",
    r"your answer gave True \(bool\) but should give a whole number",
    "nb01.threads_launched.check(True)",
)
case("value_answer_huge_int", r"✗ nb01.threads_launched: .{0,400}$", "nb01.threads_launched.check(10**1000)")
case(
    "value_answer_tuple_with_none",
    r"your answer gave None \(NoneType\) but should give a whole number",
    "nb07.sectors.check((1, 2, None))",
)
case(
    "value_answer_array_for_a_tuple",
    r"your answer should be a tuple of 3 values, got array\(\[1, 2, 3\]\)",
    "nb07.sectors.check(np.array([1, 2, 3]))",
)
case(
    "value_answer_list_for_a_tuple",
    r"\['A', 'B', 'C', 'D', 'E'\] is not right|should be a tuple",
    "nb03.event_order.check(list('ABCDE'))",
)
case(
    "value_answer_known_wrong",
    r"autoinit creates a NEW, non-primary context",
    "nb09.context_import.check('pycuda.autoinit')",
)
case("value_answer_none_is_not_attempted", r"not attempted yet", "nb15.race_tool.check(None)")

# ============================================================================ real learner mistakes, through real kernels
case(
    "kernel_race_writes_the_neighbour",
    r"the CPU tracer found a race. Race on out\[\d+\]",
    _k("""
@cuda.jit
def add_racy(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
        if i + 1 < out.size:
            out[i + 1] = a[i + 1] + b[i + 1]
nb02.vector_add.check(add_racy)"""),
)
case(
    "kernel_missing_guard",
    r"the CPU tracer found an out-of-bounds access.*Guard the access with a bounds check",
    _k("""
@cuda.jit
def add_no_guard(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]
nb02.vector_add.check(add_no_guard)"""),
)
case(
    "kernel_parameters_in_the_wrong_order",
    r"parameters are in the wrong order: def add_order\(out, a, b\).*reorder the def line",
    _k("""
@cuda.jit
def add_order(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
nb02.vector_add.check(add_order)"""),
)
case(
    "kernel_with_a_print",
    r"thread 0.*(✓|✗) nb02.vector_add",
    _k("""
@cuda.jit
def add_print(a, b, out):
    i = cuda.grid(1)
    if i == 0:
        print("thread", i)
    if i < out.size:
        out[i] = a[i] + b[i]
nb02.vector_add.check(add_print)"""),
)
case(
    "kernel_infinite_loop_within_the_watchdog",
    r"thread 0 of block 0 has run line 4 \(`while True:`\) for \d+ s: is a loop missing its exit",
    _k("""
@cuda.jit
def add_loop(a, b, out):
    i = cuda.grid(1)
    while True:
        pass
nb02.vector_add.check(add_loop, watchdog=2)"""),
    timeout=120,  # a hang detector only: the watchdog (2 s) stops the cell, however busy the machine
)
case(
    "kernel_truncates_to_int",
    r"the values were truncated to integers",
    _k("""
@cuda.jit
def add_int(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = int(a[i]) + int(b[i])
nb02.vector_add.check(add_int)"""),
)
case(
    "kernel_nan_outputs",
    r"came out NaN.*your kernel computed a NaN",
    _k("""
@cuda.jit
def add_nan(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = (a[i] + b[i]) * float('nan')
nb02.vector_add.check(add_nan)"""),
)
case(
    "kernel_uses_an_undefined_name",
    r"your kernel uses undefined_name, a Python object a GPU kernel cannot use",
    _k("""
@cuda.jit
def add_undefined(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + undefined_name
nb02.vector_add.check(add_undefined)"""),
)
case(
    "kernel_returns_a_value",
    r"your kernel returns a value \(line 6: `return 1`\)",
    _k("""
@cuda.jit
def add_ret(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
    return 1
nb02.vector_add.check(add_ret)"""),
)
case(
    "kernel_syncthreads_inside_the_guard",
    r"found a divergent barrier",
    _k("""
@cuda.jit
def add_sync(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
        cuda.syncthreads()
nb02.vector_add.check(add_sync)"""),
)
case("kernel_launched_with_brackets_passes", r"✓ nb02.vector_add", ADD + "nb02.vector_add.check(add[1, 32])")
case(
    "saxpy_launch_a_string",
    r"your launch should give \(blocks_per_grid, threads_per_block\), got 'x'",
    SAXPY + "nb02.saxpy.check(saxpy, launch='x')",
)
case(
    "saxpy_launch_floor_division",
    r"starts \d+ blocks for n = \d+.*round the number of blocks up",
    SAXPY + "nb02.saxpy.check(saxpy, launch=lambda n: (n // 32, 32))",
)
case(
    "saxpy_launch_raises",
    r"your launch function raised ZeroDivisionError",
    SAXPY + "nb02.saxpy.check(saxpy, launch=lambda n: 1/0)",
)
case(
    "saxpy_launch_gives_garbage",
    r"blocks per grid must be whole numbers \(int\), got 'a'",
    SAXPY + "nb02.saxpy.check(saxpy, launch=lambda n: ('a', None))",
)
case(
    "saxpy_launch_a_billion_blocks",
    r"1,000,000,000 blocks of 1024 threads",
    SAXPY + "nb02.saxpy.check(saxpy, launch=lambda n: (10**9, 1024))",
)
case(
    "saxpy_launch_block_too_big",
    r"4096 threads per block is more than the 1024",
    SAXPY + "nb02.saxpy.check(saxpy, launch=lambda n: (1, 4096))",
)
case(
    "saxpy_kernel_for_vector_add",
    r"your kernel takes 3 arguments \(a, b, out\) but this exercise passes 4",
    ADD + "nb02.saxpy.check(add)",
)
case(
    "square_stride_missing_output",
    r"your kernel takes 1 argument \(x\) but this exercise passes 2 \(x, out\)",
    "@cuda.jit\ndef sq(x):\n    i = cuda.grid(1)\n    if i < x.size:\n        x[i] = x[i] * x[i]\nnb02.square_stride.check(sq)",
)
case(
    "histogram_without_atomics",
    r"the CPU tracer found a race. Race on bins\[\d+\]",
    "@cuda.jit\ndef hist(data, bins):\n    i = cuda.grid(1)\n    if i < data.size:\n        bins[data[i]] += 1\nnb02.histogram.check(hist)",
)
case(
    "pipeline_never_launches",
    r"run_on_device never launched the kernel",
    "def run_on_device(kernel, x):\n    return x\nnb03.run_on_device.check(run_on_device)",
)
case(
    "pipeline_passes_host_arrays",
    r"the kernel got a NumPy array: Numba then copies it",
    "def run_on_device(kernel, x):\n    out = cuda.device_array_like(x)\n    kernel[1, 32](x, out)\n    return out.copy_to_host()\nnb03.run_on_device.check(run_on_device)",
)
case(
    "pipeline_infinite_loop",
    r"your code has run line 2 \(`while True: pass`\) for \d+ s",
    "def run_on_device(kernel, x):\n    while True: pass\nnb03.run_on_device.check(run_on_device, watchdog=2)",
    timeout=120,  # a hang detector only: the watchdog (2 s) stops the cell, however busy the machine
)
case(
    "pipeline_wrong_arity",
    r"run_on_device should take 2 arguments \(kernel, x\), not 1",
    "def run_on_device(kernel):\n    return 1\nnb03.run_on_device.check(run_on_device)",
)
case(
    "pipeline_returns_device_array",
    r"returned a device array: bring the result back to the host with .copy_to_host\(\)",
    "def run_on_device(kernel, x):\n    d_x = cuda.to_device(x)\n    d_out = cuda.device_array_like(d_x)\n    kernel[(x.size + 127) // 128, 128](d_x, d_out)\n    return d_out\nnb03.run_on_device.check(run_on_device)",
)
case(
    "image_row_and_col_swapped",
    r"row and col look swapped",
    "@cuda.jit\ndef grayscale(img, out):\n    r, c = cuda.grid(2)\n    if r < out.shape[0] and c < out.shape[1]:\n        out[r, c] = img[r, c, 0]\nnb04.grayscale.check(grayscale)",
)
case(
    "image_missing_guard",
    r"out-of-bounds access.*img has shape",
    "@cuda.jit\ndef grayscale(img, out):\n    x, y = cuda.grid(2)\n    out[y, x] = 0.299 * img[y, x, 0] + 0.587 * img[y, x, 1] + 0.114 * img[y, x, 2]\nnb04.grayscale.check(grayscale)",
)
case(
    "image_mirror_off_by_one",
    r"out-of-bounds access.*index \d+ in dimension 1 is past the end",
    "@cuda.jit\ndef mirror(img, out):\n    x, y = cuda.grid(2)\n    if y < img.shape[0] and x < img.shape[1]:\n        out[y, x] = img[y, img.shape[1] - x]\nnb04.mirror.check(mirror)",
)
case(
    "image_blur_never_writes",
    r"pixels of out were never written on the \d+x\d+ image .*`cuda.grid\(1\)` is the 1-D index",
    "@cuda.jit\ndef blur(img, out):\n    x = cuda.grid(1)\nnb04.blur.check(blur)",
)
case(
    "stencil_skips_the_edges",
    r"2 of \d+ elements .* of out were never written",
    "@cuda.jit\ndef stencil(x, out):\n    i = cuda.grid(1)\n    if 0 < i < x.size - 1:\n        out[i] = x[i-1] + x[i] + x[i+1]\nnb05.stencil.check(stencil)",
)
case(
    "matmul_without_tiles",
    r"of C were never written|shared|tile",
    "@cuda.jit\ndef matmul(A, B, C):\n    r, c = cuda.grid(2)\n    if r < C.shape[0] and c < C.shape[1]:\n        s = 0.0\n        for k in range(A.shape[1]):\n            s += A[r, k] * B[k, c]\n        C[r, c] = s\nnb05.matmul_tiled.check(matmul)",
)
case(
    "transpose_naive",
    r"of out were never written|coalesc|shared",
    "@cuda.jit\ndef transpose(a, out):\n    x, y = cuda.grid(2)\n    if y < a.shape[0] and x < a.shape[1]:\n        out[x, y] = a[y, x]\nnb05.transpose_padded.check(transpose)",
)
case(
    "histogram_shared_plain_increment",
    r"found a race. Race on hist\[\d+\]",
    "@cuda.jit\ndef hist(data, hist):\n    i = cuda.grid(1)\n    if i < data.size:\n        hist[data[i]] += 1\nnb06.histogram_shared.check(hist)",
)
case(
    "sum_without_atomic",
    r"found a race. Race on total\[0\]",
    "@cuda.jit\ndef s(x, total):\n    i = cuda.grid(1)\n    if i < x.size:\n        total[0] += x[i]\nnb06.sum_atomic.check(s)",
)
case(
    "scan_copies_the_input",
    r"out\[\d+\] is -?\d+ but should be -?\d+",
    "@cuda.jit\ndef scan(x, out):\n    t = cuda.threadIdx.x\n    if t < x.size:\n        out[t] = x[t]\nnb06.scan.check(scan)",
)
case(
    "warp_sum_one_atomic_per_thread",
    r"atomics per thread is 1.00 and the budget is at most 0.1",
    "@cuda.jit\ndef warp_sum(x, total):\n    i = cuda.grid(1)\n    if i < x.size:\n        cuda.atomic.add(total, 0, x[i])\nnb06.warp_sum.check(warp_sum)",
)
case(
    "warp_scan_returns_early_before_the_shuffles",
    r"misused warp call.*had already finished \(returned early\)",
    "@cuda.jit\ndef warp_scan(x, out):\n    i = cuda.grid(1)\n    if i >= x.size:\n        return\n    v = x[i]\n"
    "    d = 1\n    while d < 32:\n        up = cuda.shfl_up_sync(0xFFFFFFFF, v, d)\n        if cuda.laneid >= d:\n"
    "            v += up\n        d *= 2\n    out[i] = v\nnb17.warp_scan.check(warp_scan)",
)
case(
    "row_sums_one_thread_per_row",
    r"let all 32 lanes of the row's block walk the row together",
    "@cuda.jit\ndef row_sums(A, out):\n    r = cuda.grid(1)\n    if r < A.shape[0]:\n        s = 0.0\n        for j in range(A.shape[1]):\n            s += A[r, j]\n        out[r] = s\nnb07.row_sums.check(row_sums)",
)
case("nb11_saxpy_correct", r"✓ nb11.saxpy", SAXPY.replace("alpha", "a") + "nb11.saxpy.check(saxpy)")
case("leaky_relu_unbalanced_braces", r"NVRTC rejects it", "nb08.leaky_relu.check('y = x > 0 ? x : alpha * x;;; }}}')")
case(
    "leaky_relu_identity",
    r"compiles with NVRTC, but the results are wrong: element \d+ is",
    "nb08.leaky_relu.check('y = x')",
)
case("leaky_relu_infinite_loop", r"is a loop missing its exit", "nb08.leaky_relu.check('while(1){}; y = x')")
case(
    "l2_norm_three_strings",
    r"give four strings: \(map_expr, reduce_expr, post_map_expr, identity\)",
    "nb08.l2_norm.check(('x * x', 'a + b', 'y = sqrt(a)'))",
)
case("l2_norm_identity_an_int", r"give four strings", "nb08.l2_norm.check(('x * x', 'a + b', 'y = sqrt(a)', 0))")
case(
    "clamp_missing_guard",
    r"wrote past the end of the output: threads with i >= n must do nothing",
    f"nb08.clamp.check('{CLAMP_HEAD} {{ int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = fminf(fmaxf(x[i], lo), hi); }}')",
)
case(
    "clamp_race_first_block_only",
    r"running it on the CPU found a mistake: Race on y\[0\]",
    f"nb08.clamp.check('{CLAMP_HEAD} {{ int i = threadIdx.x; y[i] = x[i]; }}')",
)
case(
    "clamp_parameters_in_the_wrong_order",
    r"its parameters are wrong: declare it as clamp\(const float\* x, float\* y",
    "nb08.clamp.check('extern \"C\" __global__ void clamp(float* y, const float* x, float lo, float hi, int n) { }')",
)
case(
    "clamp_double_instead_of_float",
    r"its parameters are wrong",
    "nb08.clamp.check('extern \"C\" __global__ void clamp(const double* x, double* y, double lo, double hi, int n) { }')",
)
case(
    "normalize_rows_calls_numpy",
    r"your function calls NumPy directly \(np.…\): write xp.… instead",
    "def normalize_rows(xp, a):\n    return a / np.linalg.norm(a, axis=1, keepdims=True)\nnb08.normalize_rows.check(normalize_rows)",
)
case(
    "normalize_rows_forgets_xp",
    r"takes 1 positional argument but 2 were given",
    "def normalize_rows(a):\n    return a\nnb08.normalize_rows.check(normalize_rows)",
)
case(
    "normalize_rows_returns_none",
    r"the result has shape \(\), expected",
    "def normalize_rows(xp, a):\n    return None\nnb08.normalize_rows.check(normalize_rows)",
)
case("axpby_wrong_name", r"there is no kernel named axpby", "nb09.axpby.check('text')")
case(
    "axpby_off_by_one_guard",
    r"wrote past the end of the output",
    "nb09.axpby.check('__global__ void axpby(float* out, const float* x, const float* y, float a, float b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i <= n) out[i] = a * x[i] + b * y[i]; }')",
)
case(
    "lincomb_undefined_index",
    r"NVRTC rejects it: error: identifier \"j\" is undefined",
    "nb09.lincomb.check('z[i] = a * x[i] + b * y[j]')",
)
case(
    "lincomb_a_tuple", r"give the CUDA C as a string, not tuple", "nb09.lincomb.check(('z[i] = a * x[i] + b * y[i]',))"
)
case(
    "prepare_format_hard_coded",
    r"returned 'PPPfi' for every input: it looks hard-coded",
    "def prepare_format(params):\n    return 'PPPfi'\nnb09.prepare_format.check(prepare_format)",
)
case(
    "in_out_with_drv_in",
    r"x did not change: drv.In copies the array to the GPU but never back",
    PYCUDA
    + "def double_in_place(twice, x):\n    twice(drv.In(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))\nnb09.in_out.check(double_in_place)",
)
case(
    "in_out_host_array",
    r"PyCUDA refuses parameter #0 \(0-based\) of twice",
    "def double_in_place(twice, x):\n    twice(x, np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))\nnb09.in_out.check(double_in_place)",
)
case(
    "check_result_returns_one_value",
    r"returned 13, expected \(13, 2\): several values come back as a tuple",
    "def check_result(result):\n    return result[1]\nnb10.check_result.check(check_result)",
)
case(
    "kernel_params_one_array",
    r"return two things: \(params, storage\)",
    "def kernel_params(*args):\n    return np.array([a for a in args])\nnb10.kernel_params.check(kernel_params)",
)
case(
    "to_cubin_returns_ptx",
    r"returned PTX text: compile\(\"cubin\"\) gives the binary",
    "def to_cubin(src, arch):\n    return cuda_c.compile(src)\nnb10.to_cubin.check(to_cubin)",
)
case(
    "core_launch_floor_division",
    r"out\[\d+:\] was never written: the grid must cover every element",
    CORE
    + "def launch_saxpy(stream, kernel, x, y, out, a):\n    n = out.size\n    config = core.LaunchConfig(grid=n // 256, block=256)\n    core.launch(stream, config, kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))\nnb10.core_launch.check(launch_saxpy)",
)
case(
    "core_launch_config_none",
    r"takes a LaunchConfig and a Kernel from get_kernel",
    CORE
    + "def launch_saxpy(stream, kernel, x, y, out, a):\n    core.launch(stream, None, kernel, x, y, out, a)\nnb10.core_launch.check(launch_saxpy)",
)
case(
    "layout_uses_numpy_flags",
    r"raised AttributeError: 'FakeDeviceArray' object has no attribute 'flags'",
    "def layout(obj):\n    return obj.flags\nnb11.layout.check(layout)",
)
case(
    "layout_hard_coded",
    r"returned 'C' for every input: it looks hard-coded",
    "def layout(obj):\n    return 'C'\nnb11.layout.check(layout)",
)
case(
    "leaky_relu_not_a_ufunc",
    r"leaky_relu is function, not a ufunc: decorate the scalar function with @vectorize",
    "def leaky_relu(x, alpha):\n    return np.where(x > 0, x, alpha * x)\nnb12.leaky_relu.check(leaky_relu)",
)
case(
    "sum_of_squares_not_jitted",
    r"sum_of_squares is a plain Python function: decorate it with @njit\(parallel=True\)",
    "def sum_of_squares(x):\n    return float((x * x).sum())\nnb12.sum_of_squares.check(sum_of_squares)",
)
case(
    "gpu_wins_from_first_row",
    r"looks hard-coded|should return",
    "def gpu_wins_from(rows):\n    return rows[0]['n']\nnb12.gpu_wins_from.check(gpu_wins_from)",
)
case(
    "chunk_range_uneven_chunks",
    r"chunk_range\(n=\d+, k=\d+, d=\d+\) returned \(\d+, \d+\) but should return",
    "def chunk_range(n, k, d):\n    return (d * n // k, (d + 1) * n // k + 1)\nnb13.chunk_range.check(chunk_range)",
)
case(
    "combine_argmax_returns_a_triple",
    r"should have 2 values, got 3",
    "def combine_argmax(parts):\n    return max(parts)\nnb13.combine_argmax.check(combine_argmax)",
)
case(
    "copy_route_forgets_local",
    r"returned 'host' but should return 'local'|should return",
    "def copy_route(peer, src, dst):\n    return 'peer' if peer[src][dst] else 'host'\nnb13.copy_route.check(copy_route)",
)
case(
    "compaction_inclusive_scan",
    r"those are inclusive-scan offsets",
    "def compaction_offsets(flags):\n    return np.cumsum(flags), flags.sum()\nnb14.compaction_offsets.check(compaction_offsets)",
)
case(
    "compaction_returns_an_int",
    r"compaction_offsets returned 1; return a pair \(offsets, count\)",
    "def compaction_offsets(flags):\n    return 1\nnb14.compaction_offsets.check(compaction_offsets)",
)
case(
    "sort_ascending",
    r"sorted smallest first: pass order=cc.SortOrder.DESCENDING",
    "def sort_descending(keys):\n    return np.sort(keys)\nnb14.sort_descending.check(sort_descending)",
)
case(
    "sort_returns_a_giant_list",
    r"✗ nb14.sort_descending: .{0,1500}$",
    "def sort_descending(keys):\n    return sorted(keys)[::-1]\nnb14.sort_descending.check(sort_descending)",
)
case(
    "time_kernel_events_on_the_default_stream",
    r"an event was recorded on the default stream",
    "def time_kernel(kernel, d_x, d_out, stream):\n    start, end = cuda.event(), cuda.event()\n    start.record()\n"
    "    kernel[(d_x.size + 127) // 128, 128, stream](d_x, d_out)\n    end.record()\n    end.synchronize()\n"
    "    return start.elapsed_time(end)\nnb16.time_kernel.check(time_kernel)",
)
case(
    "pipeline_never_launches",
    r"the kernel was never launched",
    "def pipeline(kernel, x, n_streams):\n    return 2 * x + 1\nnb16.pipeline.check(pipeline)",
)
case(
    "capture_steps_returns_x",
    r"capture_steps returned .*; return the graph stream.end_capture\(\) gave",
    "def capture_steps(add_one, twice, x, n_steps):\n    return x\nnb16.capture_steps.check(capture_steps)",
)
case(
    "check_returns_everything_after_err",
    r"returned \(\d+,\), expected \d+: one value comes back on its own",
    "def check(result):\n    return result[1:]\nnb19.check_call.check(check)",
)
case(
    "chunk_sums_rounds_the_chunk_down",
    r"rounds down, so the last x.size % out.size elements belong to no thread",
    "@cuda.jit\ndef chunk_sums(x, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        chunk = x.size // out.size\n"
    "        s = 0\n        for k in range(i * chunk, (i + 1) * chunk):\n            s += x[k]\n        out[i] = s\n"
    "nb19.chunk_sums.check(chunk_sums)",
)
case(
    "sticky_errors_from_a_typed_list",
    r"names more sticky errors than the usual list",
    "def sticky_errors(errors):\n    usual = {700, 702, 710, 714, 715, 716, 717, 718, 719}\n"
    "    return [e.name for e in errors if int(e) in usual]\nnb19.sticky_errors.check(sticky_errors)",
)
case(
    "dram_gbs_reads_only",
    r"count the bytes written too",
    "def dram_gbs(row):\n    return row['dram__bytes_read.sum'] / row['gpu__time_duration.sum']\nnb15.dram_gbs.check(dram_gbs)",
)
case(
    "dram_gbs_missing_key",
    r"raised KeyError: 'missing'; fix it and check again",
    "def dram_gbs(row):\n    return row['missing']\nnb15.dram_gbs.check(dram_gbs)",
)
case(
    "missed_by_all_empty_set",
    r"returned set\(\) for every input: it looks hard-coded",
    "def missed_by_all(results):\n    return set()\nnb15.missed_by_all.check(missed_by_all)",
)
case(
    "occupancy_threads_only",
    r"returned \d+ but should return \d+",
    "def occ(threads, regs, smem):\n    return threads // 32\nnb07.occupancy.check(occ)",
)
case(
    "roofline_gflops",
    r"returned [\d.e+]+ but should return",
    "def roof(flops, dram_bytes, bandwidth_gbs, peak_tflops):\n    return flops / dram_bytes * bandwidth_gbs\nnb07.roofline.check(roof)",
)
case(
    "bandwidth_bytes_per_ms",
    r"returned 2e\+09 but should return 2000.0|returned [\d.e+]+ but should return",
    "def bw(nbytes, ms):\n    return nbytes / ms\nnb03.bandwidth_gbs.check(bw)",
)
case(
    "bandwidth_returns_nan",
    r"returned nan for every input",
    "nb03.bandwidth_gbs.check(lambda nbytes, ms: float('nan'))",
)
case(
    "bandwidth_returns_a_giant_array",
    r"returned array\(\[0., 0., 0., ..., 0., 0., 0.\]",
    "nb03.bandwidth_gbs.check(lambda nbytes, ms: np.zeros(10**7))",
)
case("bandwidth_returns_complex", r"returned 1j for every input", "nb03.bandwidth_gbs.check(lambda nbytes, ms: 1j)")

# ============================================================================ every exercise: a wrong kind of answer, and a hostile object
# id -> (what the exercise takes, a wrong kind of answer, what its message must say)
FUNCTION, KERNEL, CUDA_C = (
    r"pass your function itself",
    r"pass your @cuda.jit kernel itself",
    r"give the CUDA C as a string",
)
EXERCISES = {
    "nb01.blocks_per_grid": ("'text'", FUNCTION),
    "nb01.global_index": ("42", FUNCTION),
    "nb01.idle_threads": ("b'\\xff'", FUNCTION),
    "nb01.blocks_2d": ("[[1, 2], [3]]", FUNCTION),
    "nb01.threads_launched": ("'text'", r"your answer should be a number, got the string 'text'"),
    "nb02.vector_add": ("42", KERNEL + r", not int 42"),
    "nb02.saxpy": ("'text'", KERNEL + r", not str 'text'"),
    "nb02.square_stride": ("b'\\xff'", KERNEL),
    "nb02.histogram": ("[[1, 2], [3]]", KERNEL + r", not list"),
    "nb03.right_allocation": ("'text'", r"should be the option's number \(1, 2, 3 or 4\); 'text' is not one of them"),
    "nb03.implicit_copies": (
        "[[1, 2], [3]]",
        r"your answer gave \[\[1, 2\], \[3\]\] \(list\) but should give a whole number",
    ),
    "nb03.event_order": ("'text'", r"should be a tuple of 5 values, not the string 'text'"),
    "nb03.bandwidth_gbs": ("42", FUNCTION),
    "nb03.run_on_device": ("'text'", r"pass your function itself, e.g. check\(run_on_device\)"),
    "nb04.grayscale": ("42", KERNEL),
    "nb04.mirror": ("np.float64('nan')", KERNEL + r", not float64 nan"),
    "nb04.blur": ("None", r"not attempted yet"),
    "nb05.stencil": ("42", KERNEL),
    "nb05.matmul_tiled": ("'text'", KERNEL),
    "nb05.transpose_padded": ("np.zeros(3)", KERNEL),
    "nb06.histogram_shared": ("42", KERNEL),
    "nb06.sum_atomic": ("[1.0]", KERNEL),
    "nb06.scan": ("'text'", KERNEL),
    "nb06.warp_sum": ("42", KERNEL),
    "nb06.atomic_mul": ("np.zeros(3)", KERNEL),
    "nb07.sectors": ("42", r"your answer should be a tuple of 3 values, got 42"),
    "nb07.row_sums": ("np.array(3.0)", KERNEL),
    "nb07.occupancy": ("42", FUNCTION),
    "nb07.roofline": ("'text'", FUNCTION),
    "nb07.pipeline": ("3.0", FUNCTION),
    "nb08.normalize_rows": ("42", r"pass your function itself, e.g. check\(normalize_rows\)"),
    "nb08.leaky_relu": ("42", CUDA_C + r", not int"),
    "nb08.l2_norm": ("'x * x'", r"give four strings: \(map_expr, reduce_expr, post_map_expr, identity\)"),
    "nb08.clamp": ("b'\\xff'", CUDA_C + r", not bytes"),
    "nb08.pool_after": ("[('alloc', 512)]", FUNCTION),
    "nb09.context_import": ("42", r"42 is not right; nb09.context_import.hint\(\) gives a nudge"),
    "nb09.prepare_format": ("'PPfi'", FUNCTION),
    "nb09.axpby": ("[[1, 2], [3]]", CUDA_C + r", not list"),
    "nb09.lincomb": ("np.float64('nan')", CUDA_C + r", not float64"),
    "nb09.in_out": ("42", r"pass your function itself, e.g. check\(in_out\)"),
    "nb10.check_result": ("(0, 1)", r"pass your function itself, e.g. check\(check_result\)"),
    "nb10.kernel_params": ("'text'", r"pass your function itself, e.g. check\(kernel_params\)"),
    "nb10.to_cubin": ("b'\\x7fELF'", r"pass your function itself, e.g. check\(to_cubin\)"),
    "nb10.core_launch": ("42", r"pass your function itself, e.g. check\(core_launch\)"),
    "nb11.saxpy": ("'text'", KERNEL),
    "nb11.layout": ("'C'", FUNCTION),
    "nb11.zero_copy": ("'text'", r"should be a number, got the string 'text'"),
    "nb11.choose_tool": ("42", r"should be one of the names .*not the number 42"),
    "nb12.parallel_loops": ("3.5", r"your answer is 3.5, a float, but the answer is a whole number"),
    "nb12.leaky_relu": ("42", r"pass your function itself, e.g. check\(leaky_relu\)"),
    "nb12.sum_of_squares": ("'text'", r"pass your function itself, e.g. check\(sum_of_squares\)"),
    "nb12.gpu_wins_from": ("1024", FUNCTION),
    "nb13.chunk_range": ("(0, 10)", FUNCTION),
    "nb13.combine_argmax": ("42", FUNCTION),
    "nb13.copy_route": ("'peer'", FUNCTION),
    "nb14.scan_offset": ("'text'", r"should be a number, got the string 'text'"),
    "nb14.compaction_offsets": ("42", r"pass your function itself, e.g. check\(compaction_offsets\)"),
    "nb14.sort_descending": ("'text'", r"pass your function itself, e.g. check\(sort_descending\)"),
    "nb15.race_tool": ("42", r"should be one of the names .*not the number 42"),
    "nb15.dram_gbs": ("'text'", FUNCTION),
    "nb15.missed_by_all": ("[[1, 2], [3]]", FUNCTION),
    "nb16.time_kernel": ("42", r"pass your function itself, e.g. check\(time_kernel\)"),
    "nb16.pipeline": ("'text'", r"pass your function itself, e.g. check\(pipeline\)"),
    "nb16.capture_steps": ("3.5", r"pass your function itself, e.g. check\(capture_steps\)"),
    "nb17.warp_scan": ("42", KERNEL),
    "nb17.compact": ("'text'", KERNEL),
    "nb17.normalize": ("3.5", KERNEL),
    "nb18.to_bf16": ("42", FUNCTION),
    "nb18.wmma_gemm": ("42", CUDA_C + r", not int"),
    "nb18.dot_fp32_acc": ("'text'", FUNCTION),
    "nb19.check_call": ("42", r"pass your function itself, e.g. check\(check_call\)"),
    "nb19.chunk_sums": ("'text'", KERNEL),
    "nb19.sticky_errors": ("3.5", FUNCTION),
}
# What a hostile object (every protocol raises) must come back as, by the exercise's kind: never a repr that raised.
HOSTILE = r"(pass your (function|@cuda.jit kernel) itself|give the CUDA C as a string|give four strings|your (answer|code) raised RuntimeError|a Evil object)"
for _ex, (_answer, _expect) in EXERCISES.items():
    case(f"{_ex}_wrong_kind_of_answer", rf"nb\d\d\.\w+: .*{_expect}", f"{_ex}.check({_answer})")
    case(f"{_ex}_hostile_object", rf"✗ {_ex}: .*{HOSTILE}", f"{_ex}.check(evil)")

# --- wrong inputs that used to be accepted without a word (noticed in the fuzz round, fixed later)
case(
    "launch_made_by_hand_from_strings",
    r"Launch's shape must be a tuple of whole numbers of at least 0.*launch_1d",
    "geometry.Launch('a', 'b', 'c')",
)
case(
    "core_launch_config_zero_grid",  # the real cuda.core says "LaunchConfig.grid value must be >= 1 (got 0)"
    r"grid 0 launches nothing: every dimension must be at least 1",
    CORE + "core.LaunchConfig(grid=0, block=0)",
)
case(
    "core_launch_config_zero_block_dimension",
    r"block \(32, 0\) launches nothing",
    CORE + "core.LaunchConfig(grid=1, block=(32, 0))",
)
case(
    "elementwise_source_name_not_an_identifier",
    r"name must be a C identifier such as 'scale_add'",
    "cuda_c.elementwise_source('float32 x', 'float32 y', 'y = x', name='not a name')",
)
case(
    "driver_module_load_garbage",  # the driver (H200): CUDA_ERROR_INVALID_IMAGE, not a module
    r"CUDA_ERROR_INVALID_IMAGE",
    DRIVER + "cuda_c.check(driver.cuModuleLoadData(b'garbage'))",
)
case(
    "pycuda_launch_zero_grid",  # the real PyCUDA: "cuLaunchKernel failed: invalid argument"
    r"grid \(0, 1\) launches nothing",
    PYCUDA
    + "f = SourceModule('__global__ void k(float *x) { x[threadIdx.x] = 1; }').get_function('k')\n"
    + "f(drv.Out(np.zeros(4, np.float32)), grid=(0, 1), block=(4, 1, 1))",
)
