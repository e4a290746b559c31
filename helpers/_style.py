"""Colours and figure handling shared by every picture the course draws.

Red always means "a problem"; the launch pictures (geometry) and the trace pictures (tracer)
use the same palette so a learner reads them the same way.
"""

PROBLEM = "#d62728"  # red: anything a verdict points at, or an element no thread handles
UNTOUCHED = "#ffffff"
OTHER_BLOCK = "#d9d9d9"  # grey: other blocks' elements, idle threads
BLOCK_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
# ^ tab10 without its red


def pyplot():
    """matplotlib.pyplot, imported on first use so `import helpers` stays light."""
    import matplotlib.pyplot as plt

    return plt


def finish(fig):
    """Close the figure with pyplot and return it: Jupyter then shows it exactly once when it
    is a cell's last value, and `fig.savefig(...)` still works."""
    pyplot().close(fig)
    return fig
