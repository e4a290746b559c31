"""Launch geometry and the grid explorer: which thread handles which element.

Plain arithmetic on the CUDA execution model (no Numba, no tracer), so notebook 01 can show
the model before any kernel exists.

- ``launch``    ``Launch``, ``launch_1d``, ``launch_2d``, ``blocks_for``
- ``pictures``  ``draw_launch``: blocks, threads and elements, idle threads and skipped elements
- ``explorer``  ``grid_explorer``: sliders that redraw a launch
"""

from ..limits import MAX_THREADS_PER_BLOCK, WARP_SIZE
from .explorer import grid_explorer
from .launch import Launch, blocks_for, launch_1d, launch_2d
from .pictures import draw_launch

__all__ = [
    "Launch",
    "blocks_for",
    "launch_1d",
    "launch_2d",
    "draw_launch",
    "grid_explorer",
    "MAX_THREADS_PER_BLOCK",
    "WARP_SIZE",
]
