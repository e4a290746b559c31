"""helpers.mutation.c_ops: one C mistake per mutant, at the reference's own lines."""

from helpers.mutation.c_ops import OPERATORS, mutate_c
from helpers.mutation.c_tokens import CContext, body_start, params_of

CLAMP = """
extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""
CTX = CContext(
    params_of("const float* x, float* y, float lo, float hi, int n"), 96, 377, "n", body_start(CLAMP, "clamp")
)


def _made(src=CLAMP, ctx=CTX):
    return {(op, site): text for op, text, site in mutate_c(src, ctx)}


def test_every_mutant_changes_one_span_and_keeps_the_lines():
    for (_op, site), text in _made().items():
        assert text != CLAMP and text.count("\n") == CLAMP.count("\n"), site


def test_the_families_a_learner_gets_wrong_in_c():
    made = _made()
    assert made[("launch_literal", "line 3: blockDim.x -> 96")].count("blockIdx.x * 96") == 1  # the check's block
    assert "if (i < 377)" in made[("size_literal", "line 4: size n -> 377 (the check's first n)")]
    assert "if (i <= n)" in made[("comparison_boundary", "line 4: boundary < -> <=")]
    assert "if (" not in made[("guard_removed", "line 4: guard removed: if (i < n)")].split("{")[1]
    dropped = made[("index_formula", "line 3: block offset dropped: blockIdx * blockDim + ...")]
    assert "int i = threadIdx.x;" in " ".join(dropped.split())
    assert "fmaxf(x[i], hi), lo" in made[("operand_swapped", "line 4: operand lo -> hi")].replace("hi), hi", "hi), lo")
    assert "short i" in made[("dtype_changed", "line 3: type int -> short")]
    assert any(op == "parameter_order" for op, _ in made)


def test_barriers_atomics_and_shared_memory():
    src = (
        "__global__ void k(float* s, int n)\n{\n  __shared__ float t[32];\n  atomicAdd(&t[0], 1.0f);\n"
        "  __syncthreads();\n}\n"
    )
    made = _made(src, CContext(params_of("float* s, int n"), body_start=body_start(src, "k")))
    assert "(t[0] += 1.0f);" in made[("atomic_plain", "line 4: atomic made plain: atomicAdd")]
    assert "__syncthreads" not in made[("barrier_removed", "line 5: barrier removed: __syncthreads()")]
    assert "__shared__" not in made[("privatization_dropped", "line 3: __shared__ removed (one array per thread)")]


def test_a_ternary_loses_a_branch_or_swaps_them():
    made = _made("y = x > 0 ? x : alpha * x", CContext(params_of("float32 x, float32 alpha")))
    assert "y = x" in made.values() and "y = alpha * x" in made.values()
    assert "y = x > 0 ? alpha * x : x" in made.values()


def test_operator_names_are_unique():
    names = [op.name for op in OPERATORS]
    assert len(names) == len(set(names))
