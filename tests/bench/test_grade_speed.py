"""bench/grade_speed.py --distinct makes submissions whose kernels are the same code in different texts,
so that the judge's compile answers, shared within a run by exact text, cannot be (issue 29 item 8).

No duration is asserted here (tools/lint_tests.py): the figures are docs/grading.md's, from running the script.
"""

import ast
import json

from bench import grade_speed


def _code(folder, name):
    nb = json.loads(next((folder / name).glob("*.ipynb")).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_distinct_submissions_differ_in_text_only(tmp_path):
    grade_speed.make_submissions(tmp_path / "same", 4, "02")
    grade_speed.make_submissions(tmp_path / "distinct", 4, "02", distinct=True)
    same0, same3 = _code(tmp_path / "same", "student000"), _code(tmp_path / "same", "student003")
    signed0, signed3 = _code(tmp_path / "distinct", "student000"), _code(tmp_path / "distinct", "student003")
    assert same0 == same3 and signed0 != signed3
    kernels = [i for i, src in enumerate(same0) if "@cuda.jit" in src]
    assert kernels and all("# submission 3" in signed3[i] for i in kernels)
    for plain, signed in zip(same0, signed3):  # comments only: the same code
        if not plain.lstrip().startswith(("%", "!")):
            assert ast.dump(ast.parse(plain)) == ast.dump(ast.parse(signed))
