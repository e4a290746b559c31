"""The hardware limits of a CUDA launch, defined once for the whole course.

The geometry, the tracer and the exercise checks all refuse a launch a real GPU would
refuse, with the same numbers (CUDA C Programming Guide, "Compute Capabilities" table;
the same for every architecture from compute capability 5.0 to 9.0).
"""

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)  # threads per block along x, y, z
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)  # blocks per grid along x, y, z
MAX_STATIC_SHARED_BYTES = 48 * 1024  # per block, without the dynamic opt-in
