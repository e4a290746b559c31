"""The interactive grid explorer of notebook 01: sliders that redraw a launch."""

from ..errors import LearnerError, shown
from .launch import Launch, launch_1d, launch_2d
from .pictures import draw_launch


def grid_explorer(dims: int = 1):
    """Sliders for array size, threads per block and blocks per grid, redrawing the launch.

    The block-count rule is a control of its own so the classic bug can be switched on:
    floor division ``n // t`` leaves the last partial block's elements unhandled.
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
    bxy = w.IntSlider(8, 1, 32, description="block side (x = y)", style=style, layout=lay())
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

    def current() -> Launch:
        if mode.value == 1:
            if rule.value == "ceil":
                return launch_1d(n.value, tpb.value)
            b = n.value // tpb.value if rule.value == "floor" else manual.value
            return launch_1d(n.value, tpb.value, b)
        shape, blk = (rows.value, cols.value), (bxy.value, bxy.value)
        if rule.value == "ceil":
            return launch_2d(shape, blk)
        if rule.value == "floor":
            return launch_2d(shape, blk, (cols.value // bxy.value, rows.value // bxy.value))
        return launch_2d(shape, blk, (manual.value, manual.value))

    def redraw(*_):
        for s in (n, tpb):
            s.layout.display = "" if mode.value == 1 else "none"
        for s in (rows, cols, bxy):
            s.layout.display = "" if mode.value == 2 else "none"
        manual.layout.display = "" if rule.value == "manual" else "none"
        launch = current()
        # pre-wrap keeps the formula's alignment but wraps long lines between words
        info.value = (
            f"<pre style='white-space: pre-wrap; word-break: normal; overflow-wrap: normal'>"
            f"{launch.formula()}\n{launch.describe()}</pre>"
        )
        out.clear_output(wait=True)
        with out:
            display(draw_launch(launch))

    for c in (mode, n, rows, cols, tpb, bxy, rule, manual):
        c.observe(redraw, names="value")
    box = w.VBox([mode, n, rows, cols, tpb, bxy, rule, manual, info, out])
    redraw()
    display(box)
    return box
