"""One small kernel that notebook 00's Numba row compiles and runs (imported only when asked:
it imports numba.cuda, which `import helpers` must not do before the mode is chosen)."""

import numpy as np
from numba import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def run():
    """Run add_one on 4 elements; returns the array (1, 2, 3, 4 when Numba works)."""
    x = np.arange(4, dtype=np.float32)
    add_one[1, 32](x)
    return x
