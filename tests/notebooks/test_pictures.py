"""The notebooks' pictures are shown (a trailing `;` hides a closed figure) and stay on one screen, drawn as few
artists (collections, not one patch per cell), so Jupyter shows them at once."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import geometry, trace
from helpers.problems import nb05
from support import artists, code_cells

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)

PICTURES = ("draw_launch", "show", "show_banks", "show_coalescing", "draw_accesses")


def test_every_launch_picture_in_the_notebooks_is_shown():
    """A picture function returns a closed figure: Jupyter shows it only as the cell's last value, so
    a trailing `;` (or an assignment) hides it while the cell still pays for drawing it."""
    hidden, seen = [], 0
    for path in sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb")):
        for k, src in code_cells(path):
            lines = [ln for ln in src.rstrip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
            if not lines:
                continue
            last = lines[-1].split("#")[0].rstrip()
            call = re.search(r"\.(" + "|".join(PICTURES) + r")\(", last)
            if (
                call
                and not last.lstrip().startswith(("if ", "for ", "with ", "display("))
                and "=" not in last.split("(")[0]
            ):
                seen += 1
                if last.endswith(";"):
                    hidden.append(f"{path.relative_to(ROOT)} cell {k}: {last}")
    assert seen >= 10  # the notebooks draw launches, traces, banks and coalescing
    assert not hidden, hidden


# Drawn as collections, the pictures below have 24 to 501 artists today; one patch or label per thread or
# array cell would be thousands and take seconds to show (bench/picture_speed.py measures the time).
MAX_ARTISTS = 600


def test_the_notebooks_launch_pictures_are_drawn_as_few_artists():
    launches = [
        geometry.launch_1d(n=20, threads_per_block=8),  # notebook 02, "the same launch as a picture"
        geometry.launch_2d((10, 13), block=(4, 4)),  # notebook 04, section 1
        geometry.launch_2d((20, 37), block=(8, 8), grid=(37 // 8, 20 // 8)),  # notebook 04, floor division
    ]
    for launch in launches:
        fig = geometry.draw_launch(launch)
        fig.savefig(io.BytesIO(), format="png")
        assert artists(fig) <= MAX_ARTISTS and fig.get_figheight() * fig.dpi <= 1500


def test_the_matmul_race_picture_is_small_and_drawn_as_few_artists():
    from wrong_solutions.nb05 import matmul_no_second_barrier

    r = _grade(nb05.matmul_tiled, matmul_no_second_barrier)
    assert r.status == "failed" and "race" in r.message and r.picture is not None
    r.picture.savefig(io.BytesIO(), format="png")
    width, height = r.picture.get_size_inches() * r.picture.dpi
    assert height <= 1500 + 1 and width <= 1500 + 1, (width, height)
    a = np.random.default_rng(0).random((14, 19), dtype=np.float32)
    b = np.random.default_rng(1).random((19, 21), dtype=np.float32)
    t = trace(matmul_no_second_barrier, (3, 2), (8, 8), a, b, np.zeros((14, 21), np.float32))
    shown = t.show(block=0)
    shown.savefig(io.BytesIO(), format="png")
    assert artists(r.picture) <= MAX_ARTISTS and artists(shown) <= MAX_ARTISTS


