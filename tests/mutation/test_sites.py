"""Enumerating sites and rewriting one of them per mutant (helpers/mutation/sites.py): one change
per site and variant, in a deep copy, with a label that says where and what."""

import ast
import textwrap

import helpers  # noqa: F401  - the course rule: helpers before numba
from helpers.mutation.sites import Change, Context, call_name, expr, mutate, shown, stmts

SOURCE = """
def f(a, n):
    x = a + 1
    if n > 2:
        y = x * 3
    return y
"""


def _tree(source=SOURCE):
    return ast.parse(textwrap.dedent(source)).body[0]


def _src(text):
    return textwrap.dedent(text).strip()


def _ints(node, ctx):
    return isinstance(node, ast.Constant) and type(node.value) is int


def _two_ways(node, ctx):
    """Two variants a site: +10 (labelled) and 0 (no label: the site's text is the label)."""
    return [Change(ast.Constant(node.value + 10), f"plus ten: {node.value}"), Change(ast.Constant(0), "")]


def _all(tree, match, variants, ctx=Context()):
    return [(label, ast.unparse(m)) for m, label in mutate(tree, match, variants, ctx)]


def test_context_defaults_are_one_block_of_32_threads_and_no_roles():
    ctx = Context()
    assert (ctx.inputs, ctx.outputs, ctx.arrays) == ((), (), ())
    assert (ctx.block, ctx.grid, ctx.size) == ((32, 1, 1), (1, 1, 1), 0)


def test_one_mutant_per_site_and_variant_each_changing_only_that_site():
    got = _all(_tree(), _ints, _two_ways)
    assert [label for label, _ in got] == [
        "line 2: plus ten: 1",
        "line 2: 1",  # an empty label falls back to the site's own text
        "line 3: plus ten: 2",
        "line 3: 2",
        "line 4: plus ten: 3",
        "line 4: 3",
    ]
    original = ast.unparse(_tree()).splitlines()
    for (label, text), (line, new) in zip(
        got,
        [(1, "x = a + 11"), (1, "x = a + 0"), (2, "if n > 12:"), (2, "if n > 0:"), (3, "y = x * 13"), (3, "y = x * 0")],
    ):
        lines = text.splitlines()
        assert lines[line].strip() == new, label
        assert [k for k in range(len(lines)) if lines[k] != original[k]] == [line], label


def test_a_tree_without_sites_gives_no_mutant():
    assert _all(_tree("def f(a):\n    return a"), _ints, _two_ways) == []


def test_the_input_tree_is_never_changed_and_mutants_share_no_node_with_it():
    tree = _tree()
    before = ast.dump(tree, include_attributes=True)
    mutants = [m for m, _ in mutate(tree, _ints, _two_ways, Context())]
    assert ast.dump(tree, include_attributes=True) == before
    original_ids = {id(n) for n in ast.walk(tree)}
    for m in mutants:
        assert not original_ids & {id(n) for n in ast.walk(m)}
    assert len({id(m) for m in mutants}) == len(mutants) == 6


def test_a_statement_can_be_replaced_by_several_or_by_none():
    def is_assign_x(node, ctx):
        return isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "x"

    def split_or_drop(node, ctx):
        return [Change(stmts("x = a\nx += 1"), "split"), Change([], "dropped")]

    got = _all(_tree(), is_assign_x, split_or_drop)
    body = "    if n > 2:\n        y = x * 3\n    return y"
    assert got == [
        ("line 2: split", f"def f(a, n):\n    x = a\n    x += 1\n{body}"),
        ("line 2: dropped", f"def f(a, n):\n{body}"),
    ]


def test_a_block_emptied_by_a_removal_gets_pass_so_the_mutant_still_compiles():
    def is_y(node, ctx):
        return isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "y"

    ((label, text),) = _all(_tree(), is_y, lambda node, ctx: [Change([], "removed")])
    assert label == "line 4: removed"
    assert text == _src(
        """
        def f(a, n):
            x = a + 1
            if n > 2:
                pass
            return y
        """
    )
    compile(text, "<mutant>", "exec")


def test_the_whole_function_can_be_the_site():
    def rename(node, ctx):
        new = ast.FunctionDef(**{**vars(node), "name": "g"})
        return [Change(new, "renamed")]

    ((label, text),) = _all(_tree(), lambda n, c: isinstance(n, ast.FunctionDef), rename)
    assert label == "line 1: renamed" and text.startswith("def g(a, n):")


def test_lines_count_from_the_def_and_a_site_without_a_line_is_on_the_def():
    tree = _tree("def f(a):\n\n\n    return a + 7")
    assert [label for label, _ in _all(tree, _ints, _two_ways)] == ["line 4: plus ten: 7", "line 4: 7"]
    args = _all(tree, lambda n, c: isinstance(n, ast.arguments), lambda n, c: [Change(n, "")])
    assert [label for label, _ in args] == ["line 1: a"]


def test_the_context_reaches_match_and_variants():
    ctx = Context(size=5)
    got = _all(
        _tree(),
        lambda n, c: _ints(n, c) and n.value == c.size - 3,
        lambda n, c: [Change(ast.Constant(c.size), "size")],
        ctx,
    )
    assert got == [("line 3: size", ast.unparse(_tree()).replace("n > 2", "n > 5"))]


def test_call_name_reads_dotted_calls_and_attributes_only():
    assert call_name(expr("cuda.atomic.add(a, i, 1)")) == "cuda.atomic.add"
    assert call_name(expr("cuda.threadIdx.x")) == "cuda.threadIdx.x"
    assert call_name(expr("len(a)")) == "len"
    assert call_name(expr("x")) == "x"
    assert call_name(expr("f()[0].g()")) == ""
    assert call_name(expr("(lambda: 0)()")) == ""
    assert call_name(expr("a[0].b")) == ""


def test_expr_stmts_and_shown():
    assert isinstance(expr("a + 1"), ast.BinOp)
    assert [type(s) for s in stmts("x = 1\nif x:\n    pass")] == [ast.Assign, ast.If]
    assert shown(stmts("if x:\n    y = 1\n    z = 2")[0]) == "if x:"
    assert shown(expr("a  *  (b + c)")) == "a * (b + c)"
