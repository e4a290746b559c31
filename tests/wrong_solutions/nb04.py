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


WRONG = {
    "grayscale": [
        Wrong("wrong index", gray_swapped_axes, "row and col look swapped"),
        Wrong("missing guard", gray_no_guard, "out-of-bounds access"),
        Wrong("half guard", gray_half_guard, "out-of-bounds access"),
        Wrong("known mistake", gray_average, "plain average"),
        Wrong("first block only", gray_first_block_only, "only the first block"),
        Wrong("wrong dtype", gray_int_result, "integer type"),
    ],
    "mirror": [
        Wrong("wrong index", mirror_off_by_one, "out-of-bounds access"),
        Wrong("no flip", mirror_copy, "copy of the image"),
        Wrong("flips rows", mirror_vertical, "top to bottom"),
        Wrong("negative index", mirror_negative_index, "wraps to the last element in Numba"),
    ],
    "blur": [
        Wrong("missing clamp", blur_no_clamp, "out-of-bounds access"),
        Wrong("other edge rule", blur_skip_edges, "clamps instead"),
        Wrong("race", blur_in_place, "write the results into the output array, not into img"),
        Wrong("hard-coded", blur_center_only, "copy of img"),
        Wrong("wrong index", blur_swapped_axes, "row and col look swapped"),
    ],
}
