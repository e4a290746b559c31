"""helpers.mutation.c_tokens: CUDA C split into tokens that keep their offsets."""

from helpers.mutation.c_tokens import binary, body_start, match_bracket, params_of, span, tokens

SRC = (
    'extern "C" __global__ void k(const float* x, float *y, int n)\n'
    "{ // a comment (ignored)\n  y[0] = -x[0] * 2.0f;\n}\n"
)


def test_tokens_skip_space_and_comments_and_keep_offsets():
    toks = tokens(SRC)
    assert "comment" not in [t.text for t in toks]
    assert all(SRC[t.start : t.end] == t.text for t in toks)
    assert [t.text for t in toks if t.kind == "num"] == ["0", "0", "2.0f"]


def test_parameters_of_c_and_cupy_specs():
    assert [(p.name, p.pointer, p.ctype) for p in params_of("const float* x, float *y, int n")] == [
        ("x", True, "float"),
        ("y", True, "float"),
        ("n", False, "int"),
    ]
    assert [(p.name, p.ctype) for p in params_of("float32 x, raw int32 y")] == [("x", "float"), ("y", "int")]


def test_brackets_spans_and_the_body():
    toks = tokens(SRC)
    k = next(i for i, t in enumerate(toks) if t.text == "(")
    assert span(SRC, toks, k + 1, match_bracket(toks, k)) == "const float* x, float *y, int n"
    assert SRC[body_start(SRC, "k") :].lstrip().startswith("{")


def test_a_pointer_star_and_a_unary_minus_are_not_binary():
    toks = tokens(SRC)
    stars = [i for i, t in enumerate(toks) if t.text == "*"]
    assert [binary(toks, i) for i in stars] == [False, False, True]  # float*, *y, x[0] * 2.0f
    minus = next(i for i, t in enumerate(toks) if t.text == "-")
    assert not binary(toks, minus)
