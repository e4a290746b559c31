"""What a learner sees in JupyterLab: the notebooks run clean, the grid explorer reacts to its
controls, exercises answer in green and red, the tracer draws its picture."""

from __future__ import annotations

import re

import jlab
import nbformat
from playwright.sync_api import expect

BANNER = "CPU mode · Numba CUDA simulator"
WIDGET_TIMEOUT = jlab.REDRAW_S * 1000


def assert_clean(nb: jlab.Notebook, where: str) -> None:
    """No error or stderr output, no traceback, no broken widget, anywhere in the notebook."""
    errors = nb.error_outputs()
    assert not errors, f"{where}: the learner sees error output:\n" + "\n---\n".join(errors)[-3000:]
    text = nb.outputs_text()
    assert "Traceback" not in text, f"{where}: a traceback is shown:\n{text[-3000:]}"
    assert jlab.WIDGET_ERROR not in nb.panel.text_content(), f"{where}: '{jlab.WIDGET_ERROR}' is shown"


def assert_all_ran(nb: jlab.Notebook, where: str) -> None:
    prompts = nb.prompts()
    missing = [i for i, p in enumerate(prompts) if not re.search(r"\d", p)]
    assert not missing, f"{where}: code cells {missing} did not run (prompts {prompts})"


# ---------------------------------------------------------------------------------- notebook 00


def test_setup_notebook_runs_and_shows_the_mode(notebook, save_picture):
    nb = notebook.open("00_setup.ipynb")
    assert nb.kernel_display_name() == "Python 3 (ipykernel)"
    seconds = nb.run_all()
    assert_all_ran(nb, "00_setup")
    assert_clean(nb, "00_setup")
    first = nb.code_cell("import helpers")
    banner = jlab.normalized(nb.outputs_text(first))
    assert banner.startswith(BANNER), f"the mode banner is missing or wrong: {banner!r}"
    # the environment table and the first kernel's result are on screen
    assert "[1. 2. 3. 4. 5. 6. 7. 8.]" in nb.outputs_text(nb.code_cell("add_one[1, 8](a)"))
    save_picture(first, "00-banner.png")
    print(f"00_setup: Run All Cells took {seconds:.1f}s")


# ---------------------------------------------------------------------------------- notebook 01


BLOCK_XY = ("block x (blockDim.x)", "block y (blockDim.y)")  # shown when the block shape is "x by y"


class Explorer:
    """The grid explorer's widgets, found by their labels as a learner finds them."""

    def __init__(self, nb: jlab.Notebook):
        self.nb, self.page = nb, nb.page
        self.cell = nb.code_cell("grid_explorer()")
        self.box = self.cell.locator(".jp-OutputArea-output .widget-vbox").first

    def slider(self, label: str):
        return self.box.locator(".widget-slider", has=self.page.locator(f'.widget-label:text-is("{label}")'))

    @property
    def dropdown(self):
        return self.box.locator(".widget-dropdown select")

    @property
    def info(self):
        return self.box.locator(".widget-html")

    @property
    def picture(self):
        return self.box.locator(".widget-output img")

    def info_text(self) -> str:
        return jlab.normalized(self.info.text_content())

    def picture_src(self) -> str:
        return self.picture.get_attribute("src") or ""

    def drag(self, label: str, fraction: float) -> int:
        """Drag the slider's handle with the mouse to `fraction` of the track; the new value.
        (drag_to waits for both ends to stand still: cells above may still be growing as the
        browser lays out the ones it had skipped.)"""
        s = self.slider(label)
        handle, track = s.locator(".noUi-handle"), s.locator(".noUi-base")
        before = handle.get_attribute("aria-valuenow")
        box = track.bounding_box()
        handle.drag_to(track, target_position={"x": box["width"] * fraction, "y": box["height"] / 2})
        expect(handle).not_to_have_attribute("aria-valuenow", before)
        return int(float(handle.get_attribute("aria-valuenow")))

    def type_value(self, label: str, value: int) -> None:
        """Click the number next to the slider, type a new one, press Enter."""
        readout = self.slider(label).locator(".widget-readout")
        readout.click()
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.type(str(value))
        self.page.keyboard.press("Enter")

    def wait_redrawn(self, info_contains: str, old_src: str) -> str:
        """The info box says `info_contains`, the kernel has finished redrawing, the PNG changed."""
        expect(self.info).to_contain_text(info_contains, timeout=WIDGET_TIMEOUT)
        self.nb.wait_kernel_idle(jlab.REDRAW_S)
        expect(self.picture).to_have_count(1, timeout=WIDGET_TIMEOUT)
        # the Output widget swaps in a new <img>: re-query it until its PNG is not the old one
        expect(self.picture).not_to_have_attribute("src", old_src, timeout=WIDGET_TIMEOUT)
        expect(self.picture).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
        assert jlab.WIDGET_ERROR not in self.cell.text_content()
        return self.picture_src()


def assert_shown(ex: Explorer, shown, hidden) -> None:
    """Sliders on screen and off (plain checks: the widgets are drawn by now, and a failing
    expect() would bury the message under a dump of the whole page)."""
    missing = [label for label in shown if not ex.slider(label).is_visible()]
    extra = [label for label in hidden if ex.slider(label).is_visible()]
    assert not missing, f"the grid explorer does not show the {missing} slider(s)"
    assert not extra, f"the grid explorer shows the {extra} slider(s), which belong to the other mode"


def test_grid_explorer_redraws_when_the_controls_move(notebook, save_picture):
    nb = notebook.open("01_threads_blocks_grids.ipynb")
    seconds = nb.run_all()
    assert_all_ran(nb, "01_threads_blocks_grids")
    assert_clean(nb, "01_threads_blocks_grids")
    print(f"01_threads_blocks_grids: Run All Cells took {seconds:.1f}s")

    ex = Explorer(nb)
    expect(ex.box).to_be_visible(timeout=WIDGET_TIMEOUT)
    # every control drawn (ipywidgets attaches a box's children one by one), text and picture in
    expect(ex.box.locator(".widget-slider")).to_have_count(8, timeout=WIDGET_TIMEOUT)
    expect(ex.info).to_contain_text("i = blockIdx.x", timeout=WIDGET_TIMEOUT)
    expect(ex.picture).to_have_count(1, timeout=WIDGET_TIMEOUT)
    # 1D, the defaults: every control a learner needs for a 1D launch is on screen
    assert_shown(
        ex, ("array length n", "threads per block"), ("rows", "cols", "block side (x = y)", *BLOCK_XY, "manual blocks")
    )
    assert ex.dropdown.is_visible(), "the 'blocks per grid' dropdown is not visible"
    assert ex.info_text().startswith("i = blockIdx.x * blockDim.x + threadIdx.x")
    assert "5 elements, 1 blocks of 32 threads = 32 threads; 27 idle" in ex.info_text()
    src = ex.picture_src()
    assert src.startswith("data:image/png;base64,"), "the explorer shows no PNG drawing"

    # drag n with the mouse: the text and the drawing follow
    n = ex.drag("array length n", 0.5)
    assert n != 5, "dragging the 'array length n' handle did not move it"
    src = ex.wait_redrawn(f"{n} elements", src)

    # type 70 next to the slider, then switch to the floor-division bug: 6 elements get no thread
    ex.type_value("array length n", 70)
    src = ex.wait_redrawn("70 elements, 3 blocks of 32 threads = 96 threads; 26 idle", src)
    ex.dropdown.select_option(index=1)
    assert "floor" in ex.dropdown.evaluate("s => s.options[s.selectedIndex].text")
    src = ex.wait_redrawn("6 elements NOT handled by any thread", src)
    assert "70 elements, 2 blocks of 32 threads = 64 threads; 0 idle" in ex.info_text()
    nb.tidy_for_picture()
    save_picture(ex.cell, "grid-explorer.png", doc=True)  # the code line and what it draws

    # 2D: the 2D sliders replace the 1D ones and the formula becomes (col, row)
    ex.box.locator("button.widget-toggle-button", has_text="2D").click()
    src = ex.wait_redrawn("row = blockIdx.y * blockDim.y + threadIdx.y", src)
    assert_shown(ex, ("rows", "cols", "block side (x = y)"), ("array length n", "threads per block", *BLOCK_XY))
    save_picture(ex.cell, "grid-explorer-2d.png")

    # a block that is not square: "x by y" swaps the one side for blockDim.x and blockDim.y
    ex.box.locator("button.widget-toggle-button", has_text="x by y").click()
    expect(ex.slider(BLOCK_XY[0])).to_be_visible(timeout=WIDGET_TIMEOUT)
    assert_shown(ex, ("rows", "cols", *BLOCK_XY), ("block side (x = y)",))
    ex.type_value(BLOCK_XY[0], 16)
    src = ex.wait_redrawn("blocks of (16, 8) threads", src)
    assert "4 warps of 32 per block" in ex.info_text()
    ex.type_value(BLOCK_XY[1], 64)  # 16 x 64 = 1,024 threads: the most a block holds
    src = ex.wait_redrawn("blocks of (16, 64) threads", src)
    # more than 1,024 threads: one sentence instead of a picture
    ex.type_value(BLOCK_XY[0], 32)
    expect(ex.info).to_contain_text("more than the 1024 a CUDA block can hold", timeout=WIDGET_TIMEOUT)
    expect(ex.picture).to_have_count(0, timeout=WIDGET_TIMEOUT)
    assert_clean(nb, "01_threads_blocks_grids after moving the explorer")
    assert not [e for e in nb.page.console_errors if "widget" in e.lower()], nb.page.console_errors


# ---------------------------------------------------------------------------------- exercises

# For each exercise of helpers/problems/nb01.py: a right answer, a wrong one, and words the
# wrong answer's feedback must contain (the engine names the learner's likely mistake).
ANSWERS = {
    "blocks_per_grid": (
        "def {name}(n, t):\n    return (n + t - 1) // t",
        "def {name}(n, t):\n    return n // t",
        "rounds down",
    ),
    "global_index": (
        "def {name}(block_idx, block_dim, thread_idx):\n    return block_idx * block_dim + thread_idx",
        "def {name}(block_idx, block_dim, thread_idx):\n    return block_idx + thread_idx",
        "multiply block_idx by block_dim",
    ),
    "idle_threads": (
        "def {name}(n, t):\n    return (n + t - 1) // t * t - n",
        "def {name}(n, t):\n    return n % t",
        "idle threads are the rest",
    ),
    "blocks_2d": (
        "def {name}(rows, cols):\n    return ((cols + 15) // 16, (rows + 15) // 16)",
        "def {name}(rows, cols):\n    return ((rows + 15) // 16, (cols + 15) // 16)",
        "x runs along columns",
    ),
}
CHECK_CALL = re.compile(r"^(?P<module>\w+)\.(?P<exercise>\w+)\.check\((?P<arg>\w+)", re.MULTILINE)
GREEN, RED, GREY = "rgb(26, 127, 55)", "rgb(207, 34, 46)", "rgb(110, 119, 129)"


def _notebook01_exercise(course_dir):
    """(the check call, module alias, exercise, argument) of notebook 01's first exercise cell
    that ANSWERS knows, e.g. ("nb01.blocks_per_grid.check(blocks_per_grid", "nb01", ...)."""
    nb = nbformat.read(course_dir / "01_threads_blocks_grids.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for m in CHECK_CALL.finditer(cell.source):
            if m["exercise"] in ANSWERS:
                return m.group(0), m["module"], m["exercise"], m["arg"]
    raise AssertionError(f"notebook 01 has no exercise cell calling one of {sorted(ANSWERS)}.check(...)")


def _feedback(cell):
    """The exercise engine's one line (a coloured <div>) in the cell's output."""
    line = cell.locator(".jp-OutputArea-output div[style*='font-weight']").first
    expect(line).to_be_visible(timeout=WIDGET_TIMEOUT)
    return jlab.normalized(line.text_content()), line.evaluate("e => getComputedStyle(e).color")


def test_exercise_feedback_green_and_red(notebook, course_dir, save_picture):
    """Notebook 01's exercise cell: grey "not attempted" after Run All, then the learner types a
    wrong answer (red line naming the mistake) and a right one (green line)."""
    call, module, name, arg = _notebook01_exercise(course_dir)
    nb = notebook.open("01_threads_blocks_grids.ipynb")
    nb.run_all()
    assert_all_ran(nb, "01_threads_blocks_grids")
    cell = nb.code_cell(call)
    text, colour = _feedback(cell)
    assert text.startswith("·") and "not attempted" in text and colour == GREY, (text, colour)
    right, wrong, why = ANSWERS[name]
    for answer, mark, colour, words in ((wrong, "✗", RED, why), (right, "✓", GREEN, "")):
        nb.set_cell_source(cell, answer.format(name=arg) + f"\n\n{module}.{name}.check({arg})")
        nb.run_cell(cell)
        text, shown = _feedback(cell)
        assert text.startswith(f"{mark} nb01.{name}:"), text
        assert words in text, f"the feedback does not explain the mistake: {text!r}"
        assert shown == colour, f"{text!r} is drawn in {shown}, expected {colour}"
        save_picture(cell, f"exercise-{'passed' if mark == '✓' else 'failed'}.png")
    assert_clean(nb, "exercise")


# ---------------------------------------------------------------------------------- tracer

TRACER_CELLS = [  # the kernel and its trace in one cell, so the README picture tells the whole story
    "import helpers\nimport numpy as np\nfrom numba import cuda, float32\nfrom helpers.tracer import trace",
    """@cuda.jit
def reverse(a, out):
    tile = cuda.shared.array(16, float32)
    i = cuda.threadIdx.x
    tile[i] = a[i]
    # missing: cuda.syncthreads()
    out[i] = tile[15 - i]

a = np.arange(16, dtype=np.float32)
t = trace(reverse, 1, 16, a, np.zeros_like(a), outputs=("out",))
t.show()""",
    "print(t.summary())",
]


def test_tracer_picture_of_a_buggy_kernel(notebook, course_dir, save_picture):
    jlab.write_notebook(course_dir / "scratch_tracer.ipynb", TRACER_CELLS)
    nb = notebook.open("scratch_tracer.ipynb")
    nb.run_all()
    assert_all_ran(nb, "scratch_tracer")
    assert_clean(nb, "scratch_tracer")
    cell = nb.code_cell("t.show()")
    images = cell.locator(".jp-OutputArea-output img")
    expect(images, "t.show() should display its figure exactly once").to_have_count(1)
    assert (images.get_attribute("src") or "").startswith("data:image/png;base64,")
    assert images.evaluate("img => img.naturalWidth") > 300
    summary = jlab.normalized(nb.outputs_text(nb.code_cell("print(t.summary())")))
    assert "Race on shared tile" in summary and "cuda.syncthreads()" in summary, summary
    nb.tidy_for_picture()
    save_picture(cell, "tracer.png", doc=True)
