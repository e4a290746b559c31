"""The interactive grid explorer of notebook 01: sliders that redraw a launch."""

from ..errors import LearnerError, shown
from ..limits import MAX_THREADS_PER_BLOCK
from .launch import Launch, launch_1d, launch_2d
from .pictures import draw_launch


def too_big(bx: int, by: int) -> str | None:
    """The explorer's sentence for a block of more than 1,024 threads (None when it fits)."""
    if bx * by <= MAX_THREADS_PER_BLOCK:
        return None
    return (
        f"A ({bx}, {by}) block has {bx * by} threads, more than the {MAX_THREADS_PER_BLOCK} a CUDA block can hold: "
        f"make block x or block y smaller."
    )


def grid_explorer(dims: int = 1):
    """Sliders for array size, threads per block and blocks per grid, redrawing the launch.

    The block-count rule is a control of its own so the classic bug can be switched on:
    floor division ``n // t`` leaves the last partial block's elements unhandled. In 2D the block
    is square (one side) or x by y (``block shape``): a block of more than 1,024 threads is refused
    in one sentence, as a GPU refuses it. The pictures outline each block's warps.
    """
    if type(dims) is not int or dims not in (1, 2):  # exactly 1 or 2 (a bool or an array is not)
        raise LearnerError(f"grid_explorer(dims) takes 1 (a 1D launch) or 2 (a 2D launch), not {shown(dims)}.")
    import ipywidgets as w
    from IPython.display import display

    style = {"description_width": "150px"}

    def lay():  # one Layout per control: hiding one control must not hide the others
        return w.Layout(width="460px")

    mode = w.ToggleButtons(options=[("1D", 1), ("2D", 2)], value=dims, description="launch")
    n = w.IntSlider(5, 1, 200, description="array length n", style=style, layout=lay())
    rows = w.IntSlider(20, 1, 64, description="rows", style=style, layout=lay())
    cols = w.IntSlider(20, 1, 64, description="cols", style=style, layout=lay())
    tpb = w.IntSlider(32, 1, 1024, description="threads per block", style=style, layout=lay())
    shape = w.ToggleButtons(options=[("square", "square"), ("x by y", "free")], description="block shape")
    bxy = w.IntSlider(8, 1, 32, description="block side (x = y)", style=style, layout=lay())
    bx = w.IntSlider(8, 1, 64, description="block x (blockDim.x)", style=style, layout=lay())
    by = w.IntSlider(8, 1, 64, description="block y (blockDim.y)", style=style, layout=lay())
    rule = w.Dropdown(
        options=[("ceil: (n + t - 1) // t", "ceil"), ("floor: n // t  (the bug)", "floor"), ("manual", "manual")],
        value="ceil",
        description="blocks per grid",
        style=style,
        layout=lay(),
    )
    manual = w.IntSlider(1, 1, 64, description="manual blocks", style=style, layout=lay())
    out = w.Output()
    info = w.HTML()

    def block() -> tuple[int, int]:
        return (bxy.value, bxy.value) if shape.value == "square" else (bx.value, by.value)

    def current() -> Launch:
        if mode.value == 1:
            if rule.value == "ceil":
                return launch_1d(n.value, tpb.value)
            b = n.value // tpb.value if rule.value == "floor" else manual.value
            return launch_1d(n.value, tpb.value, b)
        array, blk = (rows.value, cols.value), block()
        if rule.value == "ceil":
            return launch_2d(array, blk)
        if rule.value == "floor":
            return launch_2d(array, blk, (cols.value // blk[0], rows.value // blk[1]))
        return launch_2d(array, blk, (manual.value, manual.value))

    quiet = []  # non-empty while reshape() moves two sliders: one redraw after, not one per slider

    def reshape(change):
        if change["new"] == "free":  # x by y starts from the square block on screen
            quiet.append(True)
            try:
                bx.value, by.value = bxy.value, bxy.value
            finally:
                quiet.clear()

    def show(text: str) -> None:
        # pre-wrap keeps the formula's alignment but wraps long lines between words
        info.value = f"<pre style='white-space: pre-wrap; word-break: normal; overflow-wrap: normal'>{text}</pre>"

    def redraw(*_):
        if quiet:
            return
        for s in (n, tpb):
            s.layout.display = "" if mode.value == 1 else "none"
        for s in (rows, cols, shape):
            s.layout.display = "" if mode.value == 2 else "none"
        bxy.layout.display = "" if mode.value == 2 and shape.value == "square" else "none"
        for s in (bx, by):
            s.layout.display = "" if mode.value == 2 and shape.value == "free" else "none"
        manual.layout.display = "" if rule.value == "manual" else "none"
        problem = too_big(*block()) if mode.value == 2 else None
        if problem:  # the picture would be of a launch a GPU refuses: say why instead
            show(problem)
            out.clear_output()
            return
        launch = current()
        show(f"{launch.formula()}\n{launch.describe()}")
        out.clear_output(wait=True)
        with out:
            display(draw_launch(launch))

    shape.observe(reshape, names="value")  # before redraw: it sets bx and by first
    for c in (mode, n, rows, cols, tpb, shape, bxy, bx, by, rule, manual):
        c.observe(redraw, names="value")
    box = w.VBox([mode, n, rows, cols, tpb, shape, bxy, bx, by, rule, manual, info, out])
    redraw()
    display(box)
    return box
