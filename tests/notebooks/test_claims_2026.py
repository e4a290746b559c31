"""Claims corrected for issue 30 (item 3), each checked against the installed packages, the compiler or the
repository's own records, so that the old wording fails here if it comes back.

- Numba and the SGEMM ladder: numba-cuda has `launch_bounds=` (the same PTX directives as CUDA C's
  `__launch_bounds__`) and `max_registers=`; its indexing compiles to 32-bit loads, and an `@intrinsic` with inline
  PTX emits a 128-bit one (compiled here with Numba's real compiler, in a process without the simulator).
- Figures: the transpose and register-blocking percentages agree with docs/benchmarks-h100-80gb.md and
  docs/data/sgemm_ladder.json and name the GPU they came from.
- The simulator's cost per thread agrees with the README's measured table, and the syllabus total with its rows.
- cuda-cccl: what the locked wheel contains (docs/data/cccl_package.json): no `cuda.coop`, and its [cu12]/[cu13]
  extras pull in numba-cuda-mlir, which the course's plain `cuda-cccl` pin does not.
- Pointers: warp divergence and streams/events are sent to notebooks that teach them; notebook 01 says what a warp
  does since Volta.
- Prose the cells contradicted: notebook 13's chunk sizes, notebook 02's "idle threads" line, notebook 12's CPU
  time / wall time ratio.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("solutions", "notebooks")


def _nb(folder: str, number: str):
    (path,) = (ROOT / folder).glob(f"{number}_*.ipynb")
    return nbformat.read(path, as_version=4)


def _markdown(folder: str, number: str) -> str:
    return "\n\n".join(c.source for c in _nb(folder, number).cells if c.cell_type == "markdown")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _line(text: str, start: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.startswith(start)]
    return line


def _paragraph(text: str, needle: str) -> str:
    """The paragraph (blank-line separated) of `text` that contains `needle`, whitespace flattened."""
    found = [p for p in re.split(r"\n\s*\n", text) if needle in _flat(p)]
    assert found, f"no paragraph with {needle!r}"
    return _flat(found[0])


# ============================================================== 1. what Numba can express on the SGEMM ladder

# Run with Numba's real compiler (NVVM, no GPU), in a process where the simulator is off and helpers is never
# imported (helpers switches the simulator on), as helpers/compile_check/server.py does.
_COMPILE = r"""
import inspect, json, os, re, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
from llvmlite import ir
from numba import cuda, types
from numba.cuda import decorators
from numba.cuda.extending import intrinsic

sys.path.insert(0, os.getcwd())
from bench import kernels, sgemm


def kinds(ptx):
    return sorted(set(re.findall(r"\b((?:ld|st)\.(?:global|shared)[\w.]*)", ptx)))


def consecutive(x, out):
    i = cuda.grid(1)
    if 4 * i + 3 < x.size:
        out[i] = x[4 * i] + x[4 * i + 1] + x[4 * i + 2] + x[4 * i + 3]


def packed(x, out):
    i = cuda.grid(1)
    if 4 * i + 3 < x.size:
        v = cuda.float32x4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3])
        out[i] = v.x + v.y + v.z + v.w


@intrinsic
def load4(typingctx, arr, i):
    sig = types.UniTuple(types.float32, 4)(arr, i)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        ptr = builder.gep(data, [args[1]])
        f = ir.FloatType()
        asm = ir.InlineAsm(ir.FunctionType(ir.LiteralStructType([f] * 4), [ptr.type]),
                           "ld.global.v4.f32 {$0, $1, $2, $3}, [$4];", "=f,=f,=f,=f,l", side_effect=True)
        res = builder.call(asm, [ptr])
        return context.make_tuple(builder, sig.return_type, [builder.extract_value(res, k) for k in range(4)])

    return sig, codegen


def with_intrinsic(x, out):
    i = cuda.grid(1)
    if 4 * i + 3 < x.size:
        a, b, c, d = load4(x, 4 * i)
        out[i] = a + b + c + d


def scale(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = 2 * x[i]


CC = (9, 0)
vec, mat = types.float32[::1], types.float32[:, ::1]
out = {name: kinds(cuda.compile_ptx(f, (vec, vec), cc=CC)[0])
       for name, f in (("consecutive", consecutive), ("float32x4", packed), ("intrinsic", with_intrinsic))}
steps = {"sgemm 1": kernels.sgemm_naive, "sgemm 2": kernels.sgemm_tiled, "sgemm 3": kernels.sgemm_regblock,
         "sgemm 6": sgemm.make_kernel(sgemm.tuned(), False)}  # steps 4 and 5 take long to compile: left out
for name, k in steps.items():
    out[name] = kinds(cuda.compile_ptx(k.py_func, (mat, mat, mat), cc=CC)[0])
out["sgemm 7"] = kinds(cuda.compile_ptx(sgemm.make_kernel(sgemm.VECTOR, False).py_func, (mat, mat, mat), cc=CC)[0])
ptx = cuda.compile_ptx(scale, (vec,), cc=CC, launch_bounds=(256, 2))[0]
out["launch_bounds"] = [ln.strip() for ln in ptx.splitlines() if ".maxntid" in ln or ".minnctapersm" in ln]
out["jit"] = {"launch_bounds": "launch_bounds" in inspect.signature(decorators.jit).parameters,
              "max_registers": ":param max_registers:" in decorators.jit.__doc__,
              "targetoptions": {k: v for k, v in cuda.jit(launch_bounds=(256, 2), max_registers=128)(scale)
                                .targetoptions.items() if k in ("launch_bounds", "max_registers")}}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def compiled():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run(
        [sys.executable, "-c", _COMPILE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _directives(ptx: str) -> list[str]:
    return [ln.strip() for ln in ptx.splitlines() if ".maxntid" in ln or ".minnctapersm" in ln]


def test_numba_indexing_compiles_to_32_bit_loads_and_an_intrinsic_to_a_128_bit_one(compiled):
    plain = {k: v for k, v in compiled.items() if k not in ("intrinsic", "launch_bounds", "jit", "sgemm 7")}
    assert len(plain) == 6 and sum(k.startswith("sgemm") for k in plain) == 4
    for name, kinds in plain.items():  # one 32-bit element per instruction: no .v2 / .v4
        assert kinds and all(re.fullmatch(r"(ld|st)\.(global|shared)\.[fubs]32", k) for k in kinds), (name, kinds)
    assert "ld.global.v4.f32" in compiled["intrinsic"]
    assert (
        "ld.shared.v4.f32" in compiled["sgemm 7"] and "ld.shared.f32" not in compiled["sgemm 7"]
    )  # bench/vector_loads.py
    # what the texts say: no "cannot issue/express", and what was found
    for folder in FOLDERS:
        section = _paragraph(_markdown(folder, "07"), "bench/sgemm_c.cu")
        assert "cannot" not in section, section
        assert "ld.global.v4.f32" in section and "@intrinsic" in section and "cuda.float32x4" in section
    ladder = _line((ROOT / "docs/sgemm-ladder.md").read_text(), "- **CUDA C (cuda.core):**")
    assert "cannot" not in ladder and "ld.global.v4.f32" in ladder and "@intrinsic" in ladder
    readme = _flat((ROOT / "README.md").read_text())
    assert "Numba cannot issue 128-bit loads" not in readme and "@intrinsic" in readme
    for path in ("bench/sgemm_c.py", "bench/sgemm_c.cu"):
        assert "Numba cannot express" not in _flat((ROOT / path).read_text()), path


def test_numba_has_launch_bounds_like_cuda_c_and_max_registers(compiled):
    assert compiled["jit"]["launch_bounds"] and compiled["jit"]["max_registers"]
    assert compiled["jit"]["targetoptions"] == {"launch_bounds": [256, 2], "max_registers": 128}
    from helpers.standins import _launch  # NVRTC, as the CUDA C step is compiled

    c_ptx = _launch.compile_ptx((ROOT / "bench/sgemm_c.cu").read_text(), ("-DBK=8", "-DMINB=2"))[0]
    assert _directives(c_ptx) == compiled["launch_bounds"] == [".maxntid 256, 1, 1", ".minnctapersm 2"]
    for folder in FOLDERS:
        section = _paragraph(_markdown(folder, "07"), "bench/sgemm_c.cu")
        assert "launch_bounds=(256, 2)" in section and "max_registers=" in section
        _quotes_launch_bounds_record(_flat(section))
    ladder = _line((ROOT / "docs/sgemm-ladder.md").read_text(), "- **CUDA C (cuda.core):**")
    assert "launch_bounds=(256, 2)" in ladder and "max_registers=" in ladder
    _quotes_launch_bounds_record(ladder)
    assert "launch_bounds=" in (ROOT / "bench/sgemm_c.py").read_text()


def _quotes_launch_bounds_record(text: str) -> None:
    """What launch_bounds= and max_registers= do to the ladder is said from bench/sgemm_launch_bounds.py's record:
    its GPU, the tile, cuBLAS, and each variant's TFLOP/s (with the spills of those that spill)."""
    rec = json.loads((ROOT / "docs/data/sgemm_launch_bounds.json").read_text())
    assert "not been measured" not in text
    assert rec["machine"]["GPU"] in text and rec["config"] in text
    assert f"cuBLAS {rec['cublas']['tflops']:.1f} TFLOP/s" in text
    for r in rec["variants"]:
        label = "" if r["variant"] == "as in the ladder" else f"`{r['variant']}` "
        assert r["status"] == "ok" and f"{r['tflops']:.1f}" in text, r["variant"]
        if r["local_bytes"]:
            assert f"{r['local_bytes']} B spilled" in text and label in text, r["variant"]


# ============================================================== 3 and 8. figures from the benchmark records


def _bench_rows() -> dict[str, int]:
    rows = {}
    for line in (ROOT / "docs/benchmarks-h100-80gb.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[4].endswith("%"):
            rows[cells[0]] = int(cells[4].rstrip("%"))
    return rows


def _bench_gpu() -> str:
    return re.search(r"^\| GPU \| (.+?) \|", (ROOT / "docs/benchmarks-h100-80gb.md").read_text(), re.M).group(1)


def test_transpose_and_streaming_figures_are_the_recorded_ones_and_name_the_gpu():
    rows, gpu = _bench_rows(), _bench_gpu()
    assert "H100" in gpu
    padded, fast = rows["transpose, tiled + padded"], rows["transpose, tiled + padded, no checks on interior tiles"]
    for folder in FOLDERS:
        text = _paragraph(_markdown(folder, "07"), "transpose_padded_fast")
        assert f"from {padded} % to {fast} % of copy bandwidth" in text and "H100" in text, text
    readme = _flat((ROOT / "README.md").read_text())
    row = readme.split("| Course kernels on an H100 |")[1].split(" | ")[0]
    assert f"vector add and SAXPY {rows['vector add']} %" in row and rows["vector add"] == rows["SAXPY"]
    assert f"block reduction {rows['block reduction (sum, two passes, 1056 blocks)']} %" in row
    assert f"tiled + padded transpose {padded} % and {fast} % once interior tiles skip" in row
    assert f"skips the bounds checks of interior tiles ({fast} % on the H100" in readme


def test_register_blocking_is_stated_as_the_recorded_fraction_of_cublas():
    ladder = json.loads((ROOT / "docs/data/sgemm_ladder.json").read_text())
    (step,) = [s for s in ladder["steps"] if s["step"].startswith("SGEMM 3: register blocking")]
    pct = round(100 * step["median"])
    assert "H100" in ladder["GPU"] and pct == _bench_rows()[step["step"]]
    for folder in FOLDERS:
        text = _paragraph(_markdown(folder, "05"), "register blocking")
        assert "within reach" not in text, text
        assert f"{pct} % of cuBLAS" in text and "H100" in text, text
        best = next(s for s in ladder["steps"] if s["step"].startswith("SGEMM 6:"))
        assert f"to {round(100 * best['median'])} % in Numba" in text, text


# ============================================================== 4. the simulator's cost per thread


def test_simulator_cost_per_thread_is_the_measured_one():
    readme = _flat((ROOT / "README.md").read_text())
    row = readme.split("| CPU tracer vs Numba's simulator |")[1].split(" | ")[0]
    threads = int(re.search(r"tracing a (\d+)-thread launch", row).group(1))
    saxpy_ms = int(re.search(r"SAXPY \d+ ms vs (\d+) ms", row).group(1))
    per_thread = f"{saxpy_ms / threads:.1f}"
    assert per_thread == "0.4"
    texts = {"README.md": readme, "docs/authoring.md": _flat((ROOT / "docs/authoring.md").read_text())}
    texts |= {f"{folder}/00": _flat(_markdown(folder, "00")) for folder in FOLDERS}
    for where, text in texts.items():
        assert "0.14 ms" not in text, where
        sentence = re.search(rf"about {re.escape(per_thread)} ms per (?:simulated )?thread[^.]*", text)
        assert sentence and "bench/trace_speed" in sentence.group(0), where  # [^.] stops at ".py"
    # helpers.size's docstring, which the learner reads with help(helpers.size)
    assert f"about {per_thread} ms per thread, README" in (ROOT / "helpers/sizes.py").read_text()


# ============================================================== 5. the syllabus total


def _minutes(text: str) -> int:
    m = re.fullmatch(r"(?:(\d+) h)?\s*(?:(\d+) min)?", text.strip())
    assert m and any(m.groups()), text
    return 60 * int(m.group(1) or 0) + int(m.group(2) or 0)


def test_syllabus_total_is_the_sum_of_its_rows():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Syllabus", 1)[1].split("\n\n", 2)[1]
    times = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        times[cells[0]] = _minutes(cells[3])
    assert sorted(times) == [p.name[:2] for p in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))]
    for number, minutes in times.items():  # each row is its notebook's own **Time:**
        assert f"**Time:** {minutes} minutes" in _markdown("solutions", number), number
    total = sum(times.values())
    stated = re.search(r"the syllabus times add up to (?:about )?(\d+ h \d+ min)", readme)
    assert stated and _minutes(stated.group(1)) == total, (stated and stated.group(1), total)
    first = re.search(r"00–02 \((\d+ h \d+ min)\)", readme)
    assert first and _minutes(first.group(1)) == times["00"] + times["01"] + times["02"]


# ============================================================== 6. cuda-cccl: what the locked wheel contains

CCCL = json.loads((ROOT / "docs/data/cccl_package.json").read_text())


def _lock_hashes(lock: str, name: str, version: str) -> list[str]:
    text = (ROOT / "requirements" / lock).read_text()
    block = re.search(
        rf"^{re.escape(name)}=={re.escape(version)} \\\n((?:\s+--hash=sha256:\w+(?: \\)?\n)+)", text, re.M
    )
    assert block, (lock, name, version)
    return re.findall(r"sha256:(\w+)", block.group(1))


def test_cccl_record_is_the_locked_wheel_and_the_installed_package_agrees():
    for lock in ("cu12", "cu13"):
        pin = re.search(r"^cuda-cccl==(\S+)", (ROOT / f"requirements/{lock}.in").read_text(), re.M).group(1)
        assert pin == CCCL["version"] and CCCL["sha256"] in _lock_hashes(f"{lock}.lock", "cuda-cccl", pin)
        assert "numba-cuda-mlir" not in (ROOT / f"requirements/{lock}.lock").read_text()  # the plain pin, no extra
    assert CCCL["has_cuda_coop"] is False and "cuda.compute" in CCCL["top_level_modules"]
    assert not any("coop" in p or "cooperative" in p for p in CCCL["packages"])
    for extra in ("cu12", "cu13"):
        assert any(r.startswith(f"numba-cuda-mlir[{extra}]") for r in CCCL["extras"][extra])
        assert f"cuda-cccl[{extra}]" in CCCL["readme_installs"]  # what the package's README tells you to install
    try:
        version = importlib.metadata.version("cuda-cccl")
    except importlib.metadata.PackageNotFoundError:
        return  # the CPU set: the record and the locks are all there is to check
    if version == CCCL["version"]:
        files = [str(f) for f in importlib.metadata.files("cuda-cccl") or ()]
        assert not any(f.startswith(("cuda/coop/", "cuda/cccl/cooperative/")) for f in files)
        requires = importlib.metadata.requires("cuda-cccl") or []
        for extra, reqs in CCCL["extras"].items():
            got = sorted(r.split(";")[0].strip() for r in requires if re.search(rf'extra\s*==\s*"{extra}"', r))
            assert got == sorted(reqs), (extra, got)
        readme = importlib.metadata.metadata("cuda-cccl").get_payload() or ""
        assert re.findall(r"^pip install (\S+)", readme, re.M) == CCCL["readme_installs"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_landscape_and_notebook_14_say_what_cuda_cccl_contains_and_installs(folder):
    (row,) = [ln for ln in _markdown(folder, "12").splitlines() if ln.startswith("| **cuda.compute**")]
    for m in re.finditer(r"`cuda\.coop`", row):  # mentioned only to say it is absent
        assert row[max(0, m.start() - 3) : m.start()] == "no ", row
    assert f"cuda-cccl {CCCL['version']}" in row
    text = _paragraph(_markdown(folder, "14"), "numba-cuda-mlir is required to JIT compile")
    assert "cuda-cccl[cu13]" in text and "cuda-cccl[cu12]" in text and "requirements/cu13.in" in text, text


# ============================================================== 2 and 9. pointers to where a topic is taught


def _headings(folder: str, number: str) -> str:
    return "\n".join(ln for ln in _markdown(folder, number).splitlines() if ln.startswith("## "))


@pytest.mark.parametrize("folder", FOLDERS)
def test_warp_divergence_pointers_lead_to_a_notebook_that_explains_it(folder):
    pointers = []
    for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb")):
        text = _flat(_markdown(folder, path.name[:2]))
        pointers += re.findall(r"warp divergence[^()]{0,80}?notebook (\d\d)", text, re.I)
    assert pointers  # notebook 04's Mandelbrot sends the learner somewhere
    for number in pointers:
        text = _flat(_markdown(folder, number))
        assert re.search(r"diverge", text, re.I) and "serialized" in text and "reconverge" in text, number


@pytest.mark.parametrize("folder", FOLDERS)
def test_prerequisites_for_streams_and_events_name_notebooks_with_those_sections(folder):
    checked = 0
    for path in sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb")):
        line = next(ln for ln in _markdown(folder, path.name[:2]).splitlines() if "**Prerequisites:**" in ln)
        for number, topics in re.findall(r"\b(\d\d)(?:[–-]\d\d)? \(([^)]*)\)", line):
            for topic in ("stream", "event"):
                if topic in topics.lower():
                    checked += 1
                    assert re.search(topic, _headings(folder, number), re.I), (path.name, number, topic)
    assert checked >= 3  # notebook 07's events, notebook 13's streams and events


# ============================================================== 7. what a warp does


@pytest.mark.parametrize("folder", FOLDERS)
def test_warp_lockstep_sentence_has_independent_thread_scheduling(folder):
    text = _paragraph(_markdown(folder, "01"), "called **warps**")
    for words in ("Volta", "program counter", "lockstep", "serialized", "reconverge"):
        assert words in text, (words, text)


# ============================================================== 10. prose the cells contradicted


def _function(folder: str, number: str, name: str):
    """A plain-Python function defined in a notebook's code cell, compiled on its own."""
    for cell in _nb(folder, number).cells:
        if cell.cell_type == "code" and f"def {name}(" in cell.source:
            tree = ast.parse(cell.source)
            (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
            scope: dict = {}
            exec(compile(ast.Module(body=[fn], type_ignores=[]), name, "exec"), scope)  # noqa: S102 - our notebook
            return scope[name]
    raise AssertionError(name)


@pytest.mark.parametrize("folder", FOLDERS)
def test_notebook_13_exercise_1_describes_section_2s_chunk_sizes(folder):
    chunks = _function(folder, "13", "chunks")
    sizes = [b - a for a, b in chunks(10, 4)]
    assert sizes == [2, 3, 2, 3]
    text = _paragraph(_markdown(folder, "13"), "np.array_split")
    if "longer chunks last" in text:
        assert sizes == sorted(sizes), text
    assert f"sizes {', '.join(map(str, sizes))} for `n = 10, k = 4`" in text, text
    split = [len(a) for a in np.array_split(np.arange(10), 4)]
    assert split == sorted(split, reverse=True) and "**first** `n % k` chunks" in text


@pytest.mark.parametrize("folder", FOLDERS)
def test_notebook_02_says_which_threads_the_summary_counts_as_idle(folder):
    from numba import cuda

    from helpers import trace

    nb = _nb(folder, "02")
    (k,) = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "def add_unguarded(" in c.source]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(nb.cells[k].source, {"np": np, "cuda": cuda, "trace": trace})  # noqa: S102 - the notebook's cell
    printed = out.getvalue()
    after = _flat(nb.cells[k + 1].source)
    idle = re.search(r"idle threads \(touched no memory\): (\d+) of (\d+)", printed)
    strayed = {int(n) for n in re.findall(r"by (\d+) threads in all", printed)}
    quoted = re.findall(r"idle threads \([^)]*\): \d+ of \d+", after)
    assert all(q in printed for q in quoted), (quoted, printed)  # a quote of the summary is what it prints
    for count in re.findall(r"(\d+) memory accesses traced", after):
        assert f"{count} memory accesses traced" in printed, (count, printed)
    if idle and strayed == {int(idle.group(1))}:  # the "idle" threads are the ones that went past the end
        assert idle.group(0) in after and f"the same {idle.group(1)} threads" in after, after


@pytest.mark.parametrize("folder", FOLDERS)
def test_notebook_12_describes_cpu_time_over_wall_time_as_the_cell_computes_it(folder):
    nb = _nb(folder, "12")
    (cell,) = [c.source for c in nb.cells if c.cell_type == "code" and "CPU time / wall" in c.source]
    # the cell divides the process's CPU time (every thread of the process) by wall time over the same calls
    assert "wall, cpu = time.perf_counter(), time.process_time()" in cell and "cpu / wall" in cell
    md = _markdown(folder, "12")
    intro, reading = _paragraph(md, "**a measurement**"), _paragraph(md, "Read the columns")
    assert "about 1 for one busy thread" not in intro and "stay near 1" not in reading
    assert "at most 1" in intro and "every thread of the process" in intro, intro
    assert "below 1" in reading, reading


def test_the_readmes_h200_row_is_the_h200_record():
    """make bench keeps one record per GPU kind; the README's H200 figures are docs/data/bench-h200.json's."""
    rec = json.loads((ROOT / "docs/data/bench-h200.json").read_text())
    pct = {r["key"]: round(100 * r["of_ceiling"]) for r in rec["rows"] if r["of_ceiling"] is not None}
    result = {t["best"]: t["result"] for t in rec["targets"]}
    assert "H200" in rec["machine"]["GPU"] and (ROOT / "docs/benchmarks-h200.md").is_file()
    row = _flat((ROOT / "README.md").read_text()).split("| Course kernels on an H200 |")[1].split(" | ")[0]
    assert f"the copy {pct['copy_k4']} %, vector add and SAXPY {pct['vector_add_k4']} %" in row
    assert pct["vector_add_k4"] == pct["saxpy_k4"]
    assert f"(one per thread: {pct['copy_kernel']} %, {pct['vector_add']} % and {pct['saxpy']} %)" in row
    tp = {r["key"]: 100 * r["of_ceiling"] for r in rec["rows"] if r["key"].startswith("transpose_t64")}  # 91.4 < 92
    missed = " (target 92 %: missed)" if result.get("transpose_t64_u") != "pass" else " (target 92 %)"
    assert f"16 per thread {tp['transpose_t64']:.1f} %, with 8 per thread and unsigned indices" in row
    assert f"unsigned indices {tp['transpose_t64_u']:.1f} %{missed}" in row
    assert f"block reduction {pct['reduction']} %" in row
    assert f"SGEMM step {pct['sgemm_vl']} %" in row and f"step 6 {pct['sgemm_tuned']} %; target 80 %)" in row
    assert result["sgemm_vl"] == "pass" and result["sgemm_c"] == "pass"
    assert f"`cuda.core` {pct['sgemm_c']} %" in row


def test_the_readmes_tensor_core_row_is_the_tensor_gemm_record():
    """The README's tensor-core figures are docs/data/tensor-gemm-h200.json's: each instruction's best bf16 kernel."""
    rec = json.loads((ROOT / "docs/data/tensor-gemm-h200.json").read_text())
    ok = [r for r in rec["rows"] if r["status"] == "ok"]
    best = {
        ins: max((r for r in ok if r.get("instruction") == ins and r["precision"] == "bf16"), key=lambda r: r["tflops"])
        for ins in ("wgmma", "mma.sync")
    }
    cublas = {r["name"]: r for r in ok if r["kernel"] == "cublas"}
    row = _flat((ROOT / "README.md").read_text()).split("| Tensor-core GEMM (issue 31) |")[1].split(" | ")[0]
    assert f"against cuBLAS bf16 ({cublas['cuBLAS bf16']['tflops']:.0f} TFLOP/s)" in row
    assert f"{best['wgmma']['tflops']:.0f} TFLOP/s, {100 * best['wgmma']['of_cublas']:.0f} %" in row
    assert f"{best['mma.sync']['tflops']:.0f} TFLOP/s, {100 * best['mma.sync']['of_cublas']:.0f} %" in row
    (target,) = rec["targets"]
    assert target["result"] == "pass" and "Target 50 %: met" in row
