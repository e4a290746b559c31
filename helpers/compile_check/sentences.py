"""Numba's refusal, turned into one plain sentence naming the construct and the fix.

Numba's text is a typing dump meant for Numba developers; a learner needs the construct and what
to write instead. Each family is recognised from the error text and, where Numba gives no line,
from the learner's own lines (the first line that shows the construct).
"""

from __future__ import annotations

import re

GENERIC = "the GPU compiler refuses your kernel{where}: {first}."
# Also the tracer's own refusal (helpers/tracer/shapes.py), which needs no compiler to see it.
SHAPE_NOT_CONSTANT = (
    "the shape of a shared or local array must be a constant known when the kernel compiles{where}: "
    "use a number or a global constant such as `TPB = 128` (arithmetic too: `HALO = TPB + 2` at the top of "
    "the file), not a size computed from an array or from cuda.blockDim."
)


def _where(line, code):
    return f" (line {line}: `{code}`)" if line and code else ""


# (pattern on Numba's text or None, pattern on a source line, sentence). First match wins.
FAMILIES = [
    (
        r"SignatureMismatch",
        None,
        "your kernel is declared with a signature{where} whose parameter {name} is {declared} but the check "
        "passes {actual}; on a GPU Numba launches it anyway and reads the {actual} data as {declared} (on an "
        "H100 that crashed with a misaligned address): remove the signature (plain @cuda.jit) or make its types "
        "match the arrays.",
    ),
    (
        r"void return type",
        r"^\s*return\s+\S",
        "your kernel returns a value{where}: a kernel cannot return anything; write the result into an "
        "output array instead, e.g. `out[i] = ...`.",
    ),
    (
        r"(shared|local|const)\.array|array\(int64, class",
        r"(shared|local)\.array\(",
        SHAPE_NOT_CONSTANT,
    ),
    (
        r"exception_match|Exception matching",
        r"^\s*(try\s*:|except\b)",
        "your kernel uses try/except{where}: a GPU kernel cannot catch exceptions; test the condition with "
        "`if` instead (for bounds: `if i < n:`).",
    ),
    (
        r"<class 'str'>|unicode_type|format_value|build_string",
        r"print\(\s*f[\"']",
        "your kernel prints an f-string{where}: print on a GPU takes constant text and plain values, "
        'e.g. `print("thread", i, x[i])`.',
    ),
    (
        r"<class 'str'>|unicode_type|Literal\[str\]|build_string",
        r"[\"']",
        "your kernel works with strings{where}: a GPU kernel has no strings (only constant text inside "
        "print); compute with numbers.",
    ),
    (
        r"list\(|reflected list|build_list|<class 'list'>",
        r"=\s*\[|\blist\(",
        "your kernel uses a Python list{where}: a GPU kernel cannot build lists; use a local array "
        "`cuda.local.array(2, numba.float32)` or separate variables.",
    ),
    (
        r"<class 'dict'>|DictType|build_map|\bdict\(",
        r"\{|\bdict\(",
        "your kernel uses a Python dict{where}: a GPU kernel has no dicts; use an array indexed by number, "
        "or separate variables.",
    ),
    (
        r"<class 'set'>|build_set|\bset\(",
        r"\bset\(",
        "your kernel uses a Python set{where}: a GPU kernel has no sets; use an array or separate variables.",
    ),
    (
        r"function (np|numpy)\.|built-in function (zeros|ones|empty|full|arange|array)|"
        r"function (zeros|ones|empty|full|arange|array|sum|mean|dot)\b",
        r"\b(np|numpy)\.(\w+)\(",
        "your kernel calls {npfunc}{where}: NumPy functions that create or reduce arrays cannot run inside "
        "a kernel; allocate with `cuda.local.array(SIZE, numba.float32)` (SIZE a constant) or pass a "
        "preallocated array in, and loop over elements yourself.",
    ),
    (
        r"Untyped global name '(?P<name>\w+)'.*<class 'function'>",
        None,
        "your kernel calls {name}{where}, a plain Python function: a kernel can only call device functions; "
        "put `@cuda.jit(device=True)` above `def {name}` and run that cell again.",
    ),
    (
        r"NameError: name '(?P<name>\w+)'|Untyped global name '(?P<name2>\w+)': Cannot determine Numba type "
        r"of <class '(?P<cls>[\w.]+)'>",
        None,
        "your kernel uses {name}{where}, a Python {cls} a GPU kernel cannot use: kernels work with numbers, "
        "arrays and constants; pass it as an array argument or a number instead.",
    ),
    (
        r"recurs",
        None,
        "your kernel calls itself{where}: a GPU kernel cannot recurse; use a loop.",
    ),
]


def _first_line(message):
    for raw in message.splitlines():
        line = raw.strip()
        if line and not line.startswith(("Failed in", "No implementation", "During:", "There are")):
            return line[:160].rstrip(".:")
    return (message.strip().splitlines() or ["unknown error"])[0][:160].rstrip(".:")


def sentence(answer: dict, lines: dict[int, str]) -> str:
    """One sentence for the server's `answer`; `lines` maps line numbers to the learner's code."""
    kind, message, line = answer.get("kind", ""), answer.get("message", ""), answer.get("line")
    text = f"{kind}: {message}"
    for pattern, source_pattern, template in FAMILIES:
        m = re.search(pattern, text, re.S)
        if not m:
            continue
        use = line if line in lines else None
        if source_pattern and (use is None or not re.search(source_pattern, lines[use])):
            hits = [n for n, code in sorted(lines.items()) if re.search(source_pattern, code)]
            if not hits and "f-string" in template:  # the same error as any string: needs the f"
                continue
            use = hits[0] if hits else use
        fields = {"where": _where(use, lines.get(use, "").strip()), "npfunc": "a NumPy function"}
        fields.update({k: v for k, v in m.groupdict().items() if v})
        fields.setdefault("name", fields.get("name2", "a name"))
        fields.setdefault("cls", "object")
        if kind == "SignatureMismatch":
            name, declared, actual = (message.split("|") + ["", "", ""])[:3]
            fields.update(name=f"`{name}`", declared=declared, actual=actual)
        npm = re.search(r"\b(np|numpy)\.(\w+)\(", lines.get(use, ""))
        if npm:
            fields["npfunc"] = f"{npm.group(1)}.{npm.group(2)}"
        return template.format(**fields)
    return GENERIC.format(where=_where(line, lines.get(line, "").strip()), first=_first_line(message))
