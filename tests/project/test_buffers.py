"""No buffer a library writes into is an immutable `bytes` object, in the course's code or in what its
notebooks teach. `b" " * size` is the common idiom for NVRTC's log and PTX; with size 1 it is CPython's one
shared single-byte object, and the NUL NVRTC writes turns every `b" "` in the process into `b"\\x00"`
(tests/test_cuda_c.py runs every compile path and then checks the interpreter). Use `bytearray(size)`."""

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _is_repeated_bytes(node) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult)
        and any(isinstance(side, ast.Constant) and isinstance(side.value, bytes) for side in (node.left, node.right))
    )


def repeated_bytes(source: str, where: str) -> list[str]:
    """`name = b"…" * n` (or `n * b"…"`) in `source`: a bytes object made to be filled in. Repetition inside
    a larger expression (padding added to other bytes) makes a value, not a buffer, and is fine."""
    return [
        f"{where}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source, where))
        if isinstance(node, ast.Assign) and _is_repeated_bytes(node.value)
    ]


def _code() -> list[tuple[str, str]]:
    out = [
        (str(p.relative_to(ROOT)), p.read_text())
        for d in ("helpers", "bench", "tools", "tests")
        for p in (ROOT / d).rglob("*.py")
    ]
    for nb in sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb")):
        for k, cell in enumerate(json.loads(nb.read_text())["cells"]):
            if cell["cell_type"] == "code":
                src = "\n".join(
                    ln for ln in "".join(cell["source"]).splitlines() if not ln.lstrip().startswith(("%", "!"))
                )
                out.append((f"{nb.relative_to(ROOT)} cell {k}", src))
    return out


def test_the_scan_finds_the_idiom():
    src = 'log = b" " * size\nout = 4 * b"\\0"\nok = bytearray(size)\npadded = raw + b"\\0" * 8'
    assert repeated_bytes(src, "x.py") == ["x.py:1: log = b' ' * size", "x.py:2: out = 4 * b'\\x00'"]


def test_no_buffer_is_made_of_repeated_bytes():
    found = [hit for where, src in _code() for hit in repeated_bytes(src, where)]
    assert not found, "pass a bytearray(size) to a library that writes into it:\n" + "\n".join(found)
