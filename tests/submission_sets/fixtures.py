"""Build a tiny course (one pristine notebook, four exercises) and a set of submissions.

The pristine notebook uses real exercises from ``helpers.problems`` so that grading runs the
real engine: a kernel (``nb02.vector_add``), an atomics kernel (``nb02.histogram``), a plain
function (``nb01.blocks_per_grid``) and a value (``nb01.threads_launched``).

Each submission is the pristine notebook with some cells changed; ``EXPECTED`` says how each
should grade (exercise -> status) and what its record should show.
"""

from __future__ import annotations

import json
from pathlib import Path

from submission_sets import smuggling as sm
from submission_sets.escapes import SECRET, SEGFAULT, alive, hostile_cells  # noqa: F401 - the sandbox tests read them here

STEM = "02_mini"
EXERCISES = ("nb02.vector_add", "nb01.blocks_per_grid", "nb01.threads_launched", "nb02.histogram")

IMPORTS = "import helpers\nimport numpy as np\nfrom numba import cuda"
PROBLEMS = "from helpers.problems import nb01, nb02"
TEACHING = "x = np.arange(8, dtype=np.float32)\nprint('teaching cell', x.sum())"

VECTOR_ADD_PLACEHOLDER = "@cuda.jit\ndef vector_add(a, b, out):\n    pass  # YOUR CODE HERE"
VECTOR_ADD = (
    "@cuda.jit\ndef vector_add(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] + b[i]"
)
VECTOR_ADD_CHECK = "nb02.vector_add.check(vector_add)"

BLOCKS_PLACEHOLDER = "def blocks_per_grid(n, t):\n    pass  # YOUR CODE HERE"
BLOCKS = "def blocks_per_grid(n, t):\n    return (n + t - 1) // t"
BLOCKS_CHECK = "nb01.blocks_per_grid.check(blocks_per_grid)"

THREADS_PLACEHOLDER = "threads = None  # YOUR CODE HERE"
THREADS = "threads = 1024"
THREADS_CHECK = "nb01.threads_launched.check(threads)"

HISTOGRAM_PLACEHOLDER = "@cuda.jit\ndef histogram(data, hist):\n    pass  # YOUR CODE HERE"
HISTOGRAM = (
    "@cuda.jit\ndef histogram(data, hist):\n    i = cuda.grid(1)\n    if i < data.size:\n"
    "        cuda.atomic.add(hist, data[i], 1)"
)
HISTOGRAM_CHECK = "nb02.histogram.check(histogram)"


def _code(src):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}


def _md(src):
    return {"cell_type": "markdown", "metadata": {}, "source": src}


def notebook(cells) -> dict:
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def cells(
    vector_add=VECTOR_ADD_PLACEHOLDER,
    blocks=BLOCKS_PLACEHOLDER,
    threads=THREADS_PLACEHOLDER,
    histogram=HISTOGRAM_PLACEHOLDER,
    extra=None,
    extra_at=4,
):
    """The pristine notebook's cells with the answer cells replaced; ``extra`` cells inserted."""
    out = [
        _md("# 02 · Mini\n\nA small notebook for the grader's tests."),
        _code(IMPORTS),
        _code(TEACHING),
        _md("## Exercises"),
        _code(PROBLEMS),
        _code(f"{vector_add}\n\n{VECTOR_ADD_CHECK}"),
        _code("# nb02.vector_add.hint()"),
        _code(f"{blocks}\n\n{BLOCKS_CHECK}"),
        _code(f"{threads}\n{THREADS_CHECK}"),
        _code(f"{histogram}\n\n{HISTOGRAM_CHECK}"),
        _md("## Key points\n- done"),
    ]
    for i, src in enumerate(extra or ()):
        out.insert(extra_at + 1 + i, _code(src))
    return out


def perfect_cells(**kw):
    return cells(**{"vector_add": VECTOR_ADD, "blocks": BLOCKS, "threads": THREADS, "histogram": HISTOGRAM, **kw})


def make_course(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{STEM}.ipynb").write_text(json.dumps(notebook(cells()), indent=1))
    (folder / "00_setup.ipynb").write_text(json.dumps(notebook([_code("import helpers")])))  # no exercises: ignored
    return folder


PLOT_BYTES = 55 << 20  # saved outputs of the plot_outputs submission: past the grader's 50 MB limit on code
P, F, NA, NG, T, E = "passed", "failed", "not_attempted", "not_graded", "tampering", "error"
ALL_PASSED = dict.fromkeys(EXERCISES, P)


def _statuses(va, bl, th, hi):
    return dict(zip(EXERCISES, (va, bl, th, hi)))


def submissions() -> dict:
    """name -> (notebook JSON text, expected {exercise: status}, expected record facts)."""
    s = {}

    def add(name, nb_cells, expected, **facts):
        s[name] = (json.dumps(notebook(nb_cells)), expected, facts)

    add(
        "perfect",
        perfect_cells(
            extra=[
                "import sys, warnings\nprint('a warning', file=sys.stderr)\n"
                "warnings.warn('noise on stderr must not cost points')"
            ]
        ),
        ALL_PASSED,
    )
    add("untouched", cells(), _statuses(NA, NA, NA, NA))
    add("partial", cells(vector_add=VECTOR_ADD, threads=THREADS), _statuses(P, NA, P, NA))
    add(
        "wrong_index",
        cells(
            vector_add=VECTOR_ADD.replace("i = cuda.grid(1)", "i = cuda.threadIdx.x"),
            blocks=BLOCKS.replace("(n + t - 1) // t", "n // t"),
            threads="threads = 1000",
            histogram=HISTOGRAM,
        ),
        _statuses(F, F, F, P),
    )
    add(
        "racy",
        perfect_cells(histogram=HISTOGRAM.replace("cuda.atomic.add(hist, data[i], 1)", "hist[data[i]] += 1")),
        _statuses(P, P, P, F),
        message={"nb02.histogram": "race"},
    )
    add(
        "out_of_bounds",
        cells(
            vector_add=VECTOR_ADD.replace("    if i < out.size:\n        out[i]", "    out[i]"),
            blocks=BLOCKS,
            threads=THREADS,
            histogram=HISTOGRAM,
        ),
        _statuses(F, P, P, P),
        message={"nb02.vector_add": "out-of-bounds"},
    )
    add(
        "hard_coded",
        cells(
            vector_add="@cuda.jit\ndef vector_add(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n"
            "        out[i] = 0.5",
            blocks="def blocks_per_grid(n, t):\n    return 4",
            threads=THREADS,
            histogram=HISTOGRAM.replace("cuda.atomic.add(hist, data[i], 1)", "hist[0] = 7"),
        ),
        _statuses(F, F, P, F),
        message={"nb01.blocks_per_grid": "hard-coded"},
    )
    add(
        "prints_passed",
        cells(extra=["print('✓ nb02.vector_add: correct for n = 15, 120, 98')\nprint('✓ nb02.histogram: passed')"]),
        _statuses(NA, NA, NA, NA),
    )
    liar = "class Liar(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
    add(
        "liar",
        cells(threads=liar + "threads = Liar(5)", blocks=liar + "def blocks_per_grid(n, t):\n    return Liar(0)"),
        _statuses(NA, F, F, NA),
    )
    add(
        "reference",
        cells(
            vector_add="vector_add = nb02._vector_add",
            blocks="from helpers.geometry import blocks_for as blocks_per_grid",
        ),
        # The references live only in the judge: nb02._vector_add does not exist in the student's
        # process, so that cell fails and vector_add is never defined.
        _statuses(NA, F, NA, NA),
        review=True,
        cell_error="_vector_add",
    )
    add(
        "tamper_checker",
        cells(
            extra=[
                "from helpers.exercises import Exercise, Result\n"
                "def fake(self, *a, **k):\n    return Result(self.id, 'passed', 'correct', points=self.points)\n"
                "Exercise.grade = fake\nnb02.vector_add.check = lambda *a, **k: print('✓ passed')"
            ]
        ),
        dict.fromkeys(EXERCISES, T),
        tamper=True,
    )
    add(
        "tamper_numpy",
        cells(
            vector_add=VECTOR_ADD.replace("a[i] + b[i]", "a[i] - b[i]"),
            extra=["np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True"],
        ),
        dict.fromkeys(EXERCISES, T),
        tamper=True,
    )
    add("infinite_loop", perfect_cells(extra=["while True:\n    pass"]), ALL_PASSED, cell_error="did not finish")
    add(
        "stubborn_loop",
        perfect_cells(
            extra=[
                "import time\nwhile True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass"
            ],
            extra_at=6,
        ),
        ALL_PASSED,
        skipped=True,
    )
    add(
        "kernel_hangs",
        perfect_cells(
            vector_add=VECTOR_ADD.replace("    i = cuda.grid(1)", "    while True:\n        pass\n    i = cuda.grid(1)")
        ),
        _statuses(E, P, P, P),
        message={"nb02.vector_add": "is a loop missing its exit?"},  # the watchdog names the line
    )
    add(
        "kernel_exits",
        perfect_cells(
            vector_add=VECTOR_ADD.replace(
                "    i = cuda.grid(1)", "    import os\n    os._exit(7)\n    i = cuda.grid(1)"
            )
        ),
        _statuses(E, P, P, P),
        message={"nb02.vector_add": "grading did not finish"},
    )
    add("os_exit", perfect_cells(extra=["import os\nos._exit(3)"], extra_at=6), ALL_PASSED, skipped=True)
    add(
        "huge_output",
        perfect_cells(extra=["print('x' * 30_000_000)\nfor k in range(100_000):\n    print('line', k)"]),
        ALL_PASSED,
        big_output=True,
    )
    add("cells_deleted", _without_checks(), ALL_PASSED)
    add(
        "answer_deleted",
        [c for c in perfect_cells() if "def histogram" not in "".join(c["source"])],
        _statuses(P, P, P, NA),
    )
    add(
        "forger",
        cells(
            extra=[
                "import glob\nfor f in glob.glob('*.jsonl'):\n    open(f, 'a').write("
                '\'0\' * 64 + \' {"type": "result", "exercise": "nb02.vector_add", "status": "passed"}\\n\')',
                # and to every open descriptor: where the grader judges, its channel is one of them
                'import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b\'{"type": "result", '
                '"exercise": "nb02.vector_add", "status": "passed"}\\n\')\n    except OSError:\n        pass',
            ]
        ),
        _statuses(NA, NA, NA, NA),
        review=True,
    )
    # Hostile submissions against the judge: the expected values, references and exercise objects
    # are in the grader's own process, so none of these can find them (issue 15 item 1).
    add(
        "frame_reader",
        cells(
            blocks="import inspect, sys\n"
            "def blocks_per_grid(n, t):\n"
            "    for info in inspect.stack()[1:]:\n"
            "        for k, v in info.frame.f_locals.items():\n"
            "            if isinstance(v, int) and not isinstance(v, bool) and k not in ('n', 't') and v > 0:\n"
            "                return v\n"
            "    f = sys._getframe(1)\n"
            "    while f is not None:\n"
            "        for k, v in f.f_locals.items():\n"
            "            if 'expect' in k or 'want' in k:\n"
            "                return v\n"
            "        f = f.f_back\n"
            "    return -1"
        ),
        _statuses(NA, F, NA, NA),
    )
    add(
        "reference_hunter",
        cells(
            extra=[
                "import gc, os, importlib.util, helpers\n"
                "ref = None\n"
                "for o in gc.get_objects():\n"
                "    try:\n"
                "        found = getattr(o, 'id', None) == 'nb01.blocks_per_grid'\n"
                "        if found and callable(getattr(o, 'reference', None)):\n"
                "            ref = o.reference\n"
                "    except Exception:\n"
                "        pass\n"
                "path = os.path.join(os.path.dirname(helpers.__file__), 'problems', 'nb01.py')\n"
                "if ref is None and os.path.exists(path):\n"
                "    spec = importlib.util.spec_from_file_location('real_nb01', path)\n"
                "    mod = importlib.util.module_from_spec(spec)\n"
                "    spec.loader.exec_module(mod)\n"
                "    ref = mod.blocks_per_grid.reference\n"
                "print('found the reference' if ref else 'no reference here')"
            ],
            blocks="def blocks_per_grid(n, t):\n    return ref(n, t) if ref else 0",
        ),
        _statuses(NA, F, NA, NA),
        review=True,  # gc.get_objects is flagged by the static review
    )
    add(
        "numpy_liar",
        cells(
            extra=[
                "import numpy as np\n"
                "class Yes(np.int64):\n"
                "    def __eq__(self, other):\n        return True\n"
                "    def __ne__(self, other):\n        return False\n"
                "    __hash__ = np.int64.__hash__\n"
                "try:\n"
                "    from helpers.grading import cells as grading_cells\n"
                "    grading_cells.EXACT.add(Yes)\n"
                "except Exception:\n"
                "    pass"
            ],
            blocks="def blocks_per_grid(n, t):\n    return Yes(0)",
            threads="threads = Yes(0)",
        ),
        _statuses(NA, F, F, NA),
    )
    add(
        "exercise_mutator",
        cells(
            extra=[
                "object.__setattr__(nb01.blocks_per_grid, 'reference', lambda n, t: 0)\n"
                "object.__setattr__(nb01.threads_launched, 'expect', 0)"
            ],
            blocks="def blocks_per_grid(n, t):\n    return 0",
        ),
        dict.fromkeys(EXERCISES, T),
        tamper=True,
    )
    # Honest notebooks graded as they end (issue 29 item 5): the last check of an exercise counts,
    # both ways (a wrong kernel fixed and checked again; a right function broken and checked again).
    add(
        "checks_twice",
        cells(
            vector_add=VECTOR_ADD.replace("a[i] + b[i]", "a[i] - b[i]"),
            blocks=BLOCKS,
            extra=[
                f"{VECTOR_ADD}\n\n{VECTOR_ADD_CHECK}",
                f"{BLOCKS.replace('(n + t - 1) // t', 'n // t')}\n\n{BLOCKS_CHECK}",
            ],
            extra_at=9,
        ),
        _statuses(P, F, NA, NA),
        graded_from={"nb02.vector_add": "cell 11", "nb01.blocks_per_grid": "cell 12"},
    )
    # Answers made after the student's process read the grader's inputs (smuggling.py): never passed.
    smuggled = cells(vector_add=sm.WRITES_NOTHING, extra=[sm.FORGER])
    add("smuggler", smuggled, {**dict.fromkeys(EXERCISES, NA), "nb02.vector_add": F})
    # A kernel the notebook writes into its own folder and imports, as it works in Jupyter.
    add(
        "writefile",
        perfect_cells(
            vector_add="from my_kernels import vector_add",
            extra=[f"%%writefile my_kernels.py\n{IMPORTS}\n\n\n{VECTOR_ADD}\n"],
        ),
        ALL_PASSED,
    )
    # A correct notebook whose saved plots make the file larger than the code limit: outputs are
    # never graded, so they never count against it.
    big = perfect_cells()
    big[2]["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo" * (PLOT_BYTES // 10)}}
    ]
    add("plot_outputs", big, ALL_PASSED, big_file=True)
    s["invalid_json"] = (
        '{"cells": [ {"cell_type": "code", "source": "import helpers"',
        dict.fromkeys(EXERCISES, NG),
        {"outcome": "invalid"},
    )
    return s


def _without_checks():
    """Check calls, the hint cell and the teaching cell deleted; the answer cells in reverse order."""
    nb = perfect_cells()
    answers = []
    for c in nb[5:10]:
        src = "\n".join(ln for ln in c["source"].splitlines() if ".check(" not in ln and ".hint(" not in ln)
        if src.strip():
            answers.append(_code(src))
    return [nb[0], nb[1], nb[4], *answers[::-1]]


def write_submissions(folder: Path, names=None) -> dict:
    """One folder per student (the invalid one as a single file, LMS style); returns the table."""
    table = submissions()
    folder.mkdir(parents=True, exist_ok=True)
    for name, (text, _, _) in table.items():
        if names is not None and name not in names:
            continue
        if name == "invalid_json":
            (folder / f"{name}_{STEM}.ipynb").write_text(text)
        else:
            (folder / name).mkdir(exist_ok=True)
            (folder / name / f"{STEM}.ipynb").write_text(text)
    return {k: v for k, v in table.items() if names is None or k in names}
