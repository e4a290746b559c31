"""helpers.mutation.call_ops: the host-code mistakes that still give the right numbers."""

import ast

from helpers.mutation.call_ops import OPERATORS, arrays_of
from helpers.mutation.sites import Context, mutate

LAUNCH = """
def double(twice, x, stream):
    twice(drv.InOut(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))
    core.launch(stream, config, kernel, x.data.ptr)
    return x
"""


def _made():
    tree = ast.parse(LAUNCH).body[0]
    return {
        (op.name, site): ast.unparse(m)
        for op in OPERATORS
        for m, site in mutate(tree, op.match, op.variants, Context())
    }


def test_each_family_appears():
    made = _made()
    names = {op for op, _ in made}
    assert names == {op.name for op in OPERATORS}
    texts = "\n".join(made.values())
    assert "drv.In(x)" in texts and "drv.Out(x)" in texts and "drv.InOut(x.copy())" in texts
    assert "block=((x.size + 255) // 256, 1), grid=(256, 1, 1)" in texts
    assert "core.Device().create_stream()" in texts
    assert "x[...] = 0\n    return x" in texts


def test_a_removed_launch_leaves_the_rest():
    made = _made()
    removed = [t for (op, _), t in made.items() if op == "call_removed"]
    assert len(removed) == 2 and all("return x" in t for t in removed)


def test_arrays_are_the_parameters_used_as_arrays():
    assert arrays_of(ast.parse(LAUNCH).body[0]) == ["x"]
