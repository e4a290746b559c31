"""Wrong kernels for helpers/problems/nb04.py (2D grids and images), each a real learner mistake."""

from numba import cuda

from . import Wrong

# -- grayscale


@cuda.jit
def gray_swapped_axes(img, out):
    row, col = cuda.grid(2)  # x runs along columns, so this swaps them
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


@cuda.jit
def gray_no_guard(img, out):
    col, row = cuda.grid(2)
    out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


@cuda.jit
def gray_half_guard(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0]:  # guards rows only: threads past the last column write out of bounds
        out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


@cuda.jit
def gray_average(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = (img[row, col, 0] + img[row, col, 1] + img[row, col, 2]) / 3


@cuda.jit
def gray_first_block_only(img, out):
    col, row = cuda.threadIdx.x, cuda.threadIdx.y  # forgot the block offset
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


@cuda.jit
def gray_int_result(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        g = 0
        g += 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]  # g was typed as an int
        out[row, col] = int(g + 0.5)


# -- mirror


@cuda.jit
def mirror_off_by_one(img, out):
    col, row = cuda.grid(2)
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[row, cols - col]  # col = 0 reads column cols: one past the end


@cuda.jit
def mirror_copy(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = img[row, col]


@cuda.jit
def mirror_vertical(img, out):
    col, row = cuda.grid(2)
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[rows - 1 - row, col]


@cuda.jit
def mirror_negative_index(img, out):
    col, row = cuda.grid(2)
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[row, -1 - col]  # Numba wraps it as NumPy does; in CUDA C it reads before the row


# -- blur


@cuda.jit
def blur_no_clamp(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[row + dr, col + dc]
        out[row, col] = total / 9.0


@cuda.jit
def blur_skip_edges(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        count = 0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r, c = row + dr, col + dc
                if 0 <= r < rows and 0 <= c < cols:
                    total += img[r, c]
                    count += 1
        out[row, col] = total / count


@cuda.jit
def blur_in_place(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[min(max(row + dr, 0), rows - 1), min(max(col + dc, 0), cols - 1)]
        img[row, col] = total / 9.0  # neighbours are still reading img: a race
        out[row, col] = img[row, col]


@cuda.jit
def blur_center_only(img, out):
    col, row = cuda.grid(2)
    if row < img.shape[0] and col < img.shape[1]:
        out[row, col] = img[row, col]


@cuda.jit
def blur_swapped_axes(img, out):
    row, col = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[min(max(row + dr, 0), rows - 1), min(max(col + dc, 0), cols - 1)]
        out[row, col] = total / 9.0


# -- the family of a 1-D index in a 2-D launch, and of floor division


@cuda.jit
def gray_grid_1d(img, out):
    i = cuda.grid(1)  # the 1-D index: blocks along y repeat the first row of blocks
    rows, cols = out.shape
    row, col = i // cols, i % cols
    if row < rows:
        out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


@cuda.jit
def mirror_row_from_x(img, out):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.y  # the 1-D formula, with .y only on the thread
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[row, cols - 1 - col]


@cuda.jit
def blur_floor_division(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[min(max(row + dr, 0), rows - 1), min(max(col + dc, 0), cols - 1)]
        out[row, col] = total // 9  # floor division: every mean in [0, 1) becomes 0


WRONG = {
    "grayscale": [
        Wrong("wrong index", gray_swapped_axes, "row and col look swapped"),
        Wrong("missing guard", gray_no_guard, "out-of-bounds access"),
        Wrong("half guard", gray_half_guard, "out-of-bounds access"),
        Wrong("known mistake", gray_average, "plain average"),
        Wrong("first block only", gray_first_block_only, "only the first block"),
        Wrong("wrong dtype", gray_int_result, "integer type"),
        Wrong("1-D index", gray_grid_1d, "`cuda.grid(1)` is the 1-D index, but this launch is a 2-D grid"),
    ],
    "mirror": [
        Wrong("wrong index", mirror_off_by_one, "out-of-bounds access"),
        Wrong("no flip", mirror_copy, "copy of the image"),
        Wrong("flips rows", mirror_vertical, "top to bottom"),
        Wrong("negative index", mirror_negative_index, "wraps to the last element in Numba"),
        Wrong("1-D index", mirror_row_from_x, "cuda.threadIdx.y` is the 1-D index, but this launch is a 2-D grid"),
    ],
    "blur": [
        Wrong("missing clamp", blur_no_clamp, "out-of-bounds access"),
        Wrong("other edge rule", blur_skip_edges, "clamps instead"),
        Wrong("race", blur_in_place, "write the results into the output array, not into img"),
        Wrong("hard-coded", blur_center_only, "copy of img"),
        Wrong("wrong index", blur_swapped_axes, "row and col look swapped"),
        Wrong("floor division", blur_floor_division, "every value of out is 0 because `total // 9` is floor"),
    ],
}
