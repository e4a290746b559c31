"""Notebook 01 - threads, blocks and grids: arithmetic about launches, no kernels yet.

Conventions follow helpers.geometry: 1D index i = blockIdx.x * blockDim.x + threadIdx.x; for an
image of shape (rows, cols), x runs along columns and y along rows.
"""

from helpers.exercises import FunctionExercise, Ints, ValueExercise, register

_N, _T = Ints(1, 5_000_000), Ints(choices=(32, 64, 96, 128, 256, 512, 1024))


def _blocks_per_grid(n, t):
    return (n + t - 1) // t


blocks_per_grid = FunctionExercise(
    prompt="Return the number of blocks needed so that n elements get one thread each, with t threads per block.",
    reference=_blocks_per_grid,
    inputs={"n": _N, "t": _T},
    edge_cases=((1, 256), (256, 256), (257, 256), (1000, 256)),
    mistakes=(
        (
            lambda n, t: n // t,
            "n // t rounds down, so the elements of the last, partial block get no thread: round up with (n + "
            "t - 1) // t.",
        ),
        (lambda n, t: n // t + 1, "n // t + 1 adds a spare block when n is a multiple of t: use (n + t - 1) // t."),
    ),
    hints=(
        "Blocks are whole: 1000 elements with 256 threads per block need 4 blocks, not 3.9.",
        "Round the division up: (n + t - 1) // t, or math.ceil(n / t) converted to int.",
    ),
)


def _global_index(block_idx, block_dim, thread_idx):
    return block_idx * block_dim + thread_idx


global_index = FunctionExercise(
    prompt="Return the global index of thread thread_idx in block block_idx, with block_dim threads per block.",
    reference=_global_index,
    inputs={"block_idx": Ints(0, 10_000), "block_dim": _T, "thread_idx": Ints(0, 1023)},
    where=lambda block_idx, block_dim, thread_idx: thread_idx < block_dim,
    edge_cases=((0, 256, 0), (0, 256, 255), (1, 256, 0), (3, 128, 5)),
    mistakes=(
        (
            lambda block_idx, block_dim, thread_idx: block_idx + thread_idx,
            "each earlier block holds block_dim threads: multiply block_idx by block_dim.",
        ),
        (
            lambda block_idx, block_dim, thread_idx: thread_idx * block_dim + block_idx,
            "block_idx and thread_idx are swapped: it is block_idx * block_dim + thread_idx.",
        ),
    ),
    hints=(
        "Block 0 holds threads 0 to block_dim - 1; block 1 starts right after.",
        "block_idx * block_dim + thread_idx (what cuda.grid(1) computes).",
    ),
)


def _idle_threads(n, t):
    return (n + t - 1) // t * t - n


idle_threads = FunctionExercise(
    prompt=(
        "With one thread per element, return how many launched threads have no element (n elements, t threads "
        "per block)."
    ),
    reference=_idle_threads,
    inputs={"n": _N, "t": _T},
    edge_cases=((1000, 256), (256, 256), (1, 32), (33, 32)),
    mistakes=(
        (
            lambda n, t: n % t,
            "n % t counts the elements in the last block; the idle threads are the rest of that block.",
        ),
        (lambda n, t: t - n % t, "when n is a multiple of t the last block is full and no thread is idle."),
    ),
    hints=("Threads launched = blocks * t, with blocks rounded up.", "blocks * t - n, with blocks = (n + t - 1) // t."),
)


def _blocks_2d(rows, cols):
    return ((cols + 15) // 16, (rows + 15) // 16)


blocks_2d = FunctionExercise(
    prompt=(
        "Return blocks per grid (x, y) for an image of shape (rows, cols) with 16x16 blocks (x runs along columns)."
    ),
    reference=_blocks_2d,
    inputs={"rows": Ints(1, 5000), "cols": Ints(1, 5000)},
    edge_cases=((16, 16), (1080, 1920), (17, 33), (1, 1)),
    mistakes=(
        (
            lambda rows, cols: (cols // 16, rows // 16),
            "floor division drops the partly covered blocks at the right and bottom edges: round up with (cols "
            "+ 15) // 16.",
        ),
        (
            lambda rows, cols: ((rows + 15) // 16, (cols + 15) // 16),
            "x runs along columns, so the first number covers cols and the second rows.",
        ),
    ),
    hints=(
        "Do the 1D ceiling division twice, once per axis.",
        "x covers columns: ((cols + 15) // 16, (rows + 15) // 16).",
    ),
)

threads_launched = ValueExercise(
    prompt="1000 elements, 256 threads per block, one thread per element: how many threads does the launch start?",
    answer=1024,
    explanation="4 blocks (1000 / 256 rounded up) of 256 threads: 1024 threads, 24 of them idle.",
    mistakes={
        1000: "blocks are whole, so the launch starts more threads than elements.",
        768: "3 blocks is 1000 // 256 rounded down; 232 elements would get no thread.",
    },
    hints=("First work out the number of blocks, rounded up.", "4 blocks x 256 threads."),
)

EXERCISES = register(__name__, globals())
