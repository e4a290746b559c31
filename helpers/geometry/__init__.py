"""Launch geometry and the grid explorer: which thread handles which element.

Plain arithmetic on the CUDA execution model (no Numba, no tracer), so notebook 01 can show
the model before any kernel exists.

- ``launch``    ``Launch``, ``launch_1d``, ``launch_2d``, ``blocks_for``; ``block_warps``: which warp each thread is in
- ``pictures``  ``draw_launch``: blocks, warps, threads and elements, idle threads and skipped elements
- ``explorer``  ``grid_explorer``: sliders that redraw a launch
"""

from ..limits import MAX_THREADS_PER_BLOCK, WARP_SIZE
from .explorer import grid_explorer
from .launch import Launch, block_warps, blocks_for, launch_1d, launch_2d, warp_sizes
from .pictures import draw_launch

__all__ = [
    "Launch",
    "blocks_for",
    "block_warps",
    "warp_sizes",
    "launch_1d",
    "launch_2d",
    "draw_launch",
    "grid_explorer",
    "MAX_THREADS_PER_BLOCK",
    "WARP_SIZE",
]
