"""Wrong answers for helpers/problems/nb01.py (function and value exercises)."""

import math

from . import Wrong

WRONG = {
    "blocks_per_grid": [
        Wrong("floor division", lambda n, t: n // t, "rounds down"),
        Wrong("off by one block", lambda n, t: n // t + 1, "spare block"),
        Wrong("hard-coded", lambda n, t: 4, "hard-coded"),
        Wrong("wrong dtype", lambda n, t: math.ceil(n / t) * 1.0, "a float"),
        Wrong("raises", lambda n, t: n // (t - t), "ZeroDivisionError", status="error"),
    ],
    "global_index": [
        Wrong(
            "wrong index",
            lambda block_idx, block_dim, thread_idx: block_idx + thread_idx,
            "multiply block_idx by block_dim",
        ),
        Wrong("swapped", lambda block_idx, block_dim, thread_idx: thread_idx * block_dim + block_idx, "swapped"),
        Wrong("hard-coded", lambda block_idx, block_dim, thread_idx: 261, "hard-coded"),
    ],
    "idle_threads": [
        Wrong("modulo", lambda n, t: n % t, "last block"),
        Wrong("full block", lambda n, t: t - n % t, "multiple of t"),
        Wrong("hard-coded", lambda n, t: 24, "hard-coded"),
    ],
    "blocks_2d": [
        Wrong("floor division", lambda rows, cols: (cols // 16, rows // 16), "floor division"),
        Wrong("swapped axes", lambda rows, cols: ((rows + 15) // 16, (cols + 15) // 16), "x runs along columns"),
        Wrong("hard-coded", lambda rows, cols: (120, 68), "hard-coded"),
        Wrong("wrong dtype", lambda rows, cols: (cols / 16, rows / 16), "a float"),
        Wrong("not a tuple", lambda rows, cols: (cols + 15) // 16, "tuple of 2"),
    ],
    "threads_launched": [
        Wrong("elements", 1000, "more threads than elements"),
        Wrong("floor division", 768, "rounded down"),
        Wrong("wrong dtype", 1024.0, "a float"),
        Wrong("unknown", 1023, "not right"),
    ],
}
