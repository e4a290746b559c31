#!/usr/bin/env python3
"""Differential test of the PTX interpreter (helpers.ptx) against an NVIDIA GPU.

    python tools/ptx_differential.py --gpu OUT_DIR     # on a GPU host: GPU + interpreter, writes
                                                       # OUT_DIR/gpu_results.pkl, record.json, ptx-differential.md
    python tools/ptx_differential.py --install OUT_DIR # copy those into tests/ptx_corpus/ and docs/
    python tools/ptx_differential.py --cpu [RESULTS]   # replay the corpus in the interpreter against stored results

Why: the course promises that a tick given on a CPU means the code would run the same on a
GPU. Every case of tests/ptx_corpus (a corpus of corner-case kernels plus every CUDA C source
of the course) is compiled by NVRTC with the same options for both sides: the GPU runs the
CUBIN through CuPy, the interpreter runs the PTX. Integers must match bit for bit, floats
within the case's stated ulps.

Robustness: the GPU side runs in a child process that writes each result as soon as it has
it; a case that crashes (or hangs) is recorded as such and a fresh child continues with the
next case, since a crashed launch can leave the CUDA context unusable.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from ptx_corpus import CATEGORIES, RECORD, RESULTS, cases  # noqa: E402
from ptx_corpus.case import dims  # noqa: E402
from ptx_corpus.replay import (  # noqa: E402
    FINGERPRINT,
    SEP,
    judge,
    load_results,
    nvrtc_options,
    nvrtc_version,
    run_interpreter,
    stored,
)

DOC = ROOT / "docs" / "ptx-differential.md"
STALL_S = 60  # a GPU case that shows no progress for this long is recorded as hung
GPU_CMD = "python tools/ptx_differential.py --gpu OUT_DIR"


# ----------------------------------------------------------------------------- GPU child process
def gpu_worker(work: Path) -> int:
    """Run the cases named in work/names.txt on GPU 0, one result file per case, progress in work/log.txt."""
    from helpers import cuda_c
    from helpers.ptx.records import demangle

    log = open(work / "log.txt", "a", buffering=1)
    import cupy as cp

    dev = cp.cuda.Device(0)
    cc = dev.compute_capability
    props = cp.cuda.runtime.getDeviceProperties(0)
    info = {
        "name": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "compute_capability": f"{cc[:-1]}.{cc[-1]}",
        "arch": f"sm_{cc}",
        "driver_version": cp.cuda.runtime.driverGetVersion(),
        "runtime_version": cp.cuda.runtime.runtimeGetVersion(),
    }
    (work / "device.json").write_text(json.dumps(info))
    by_name = {c.name: c for c in cases()}
    for name in (work / "names.txt").read_text().split():
        case = by_name[name]
        print(f"START {name}", file=log)
        inputs = case.inputs()
        opts = ("-lineinfo", *nvrtc_options(case))
        try:
            cubin = cuda_c.compile(case.source, target="cubin", arch=f"sm_{cc}", options=opts)
            ptx = cuda_c.compile(case.source, target="ptx", arch=f"sm_{cc}", options=opts)
            entry = next(e for e in cuda_c.entry_points(ptx) if e == case.kernel or demangle(e) == case.kernel)
        except Exception as e:  # a case NVRTC refuses is recorded as a compile error; the next case runs
            print(f"DONE {name} compile-error {json.dumps(str(e)[:300])}", file=log)
            continue
        try:
            path = work / f"{name}.cubin"
            path.write_bytes(cubin)
            fn = cp.RawModule(path=str(path)).get_function(entry)  # mangled unless extern "C"
            args = [cp.asarray(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
            t = time.perf_counter()
            fn(dims(case.grid), dims(case.block), tuple(args), shared_mem=case.shared_bytes)
            cp.cuda.runtime.deviceSynchronize()
            ms = (time.perf_counter() - t) * 1e3
            outs = {k: cp.asnumpy(a) for k, a in zip(inputs, args) if k in case.outputs}
            with open(work / f"{name}.pkl", "wb") as f:  # see gpu_main: no .npz on the GPU host
                pickle.dump(outs, f)
            print(f"DONE {name} ok {ms:.3f}", file=log)
        except Exception as e:  # recorded; a fresh process takes the next case
            print(f"DONE {name} crashed {json.dumps(f'{type(e).__name__}: {e}'[:300])}", file=log)
            return 3
    return 0


def run_gpu_side(names, work: Path, interpreter_job):
    """Start the GPU child, run `interpreter_job` meanwhile, then follow the child to the end (restarting it
    after a crash). Returns ({name: (status, detail)}, device info, note)."""
    status, pending, note = {}, list(names), ""
    job = interpreter_job
    while pending:
        (work / "names.txt").write_text("\n".join(pending))
        (work / "log.txt").write_text("")
        err = open(work / "stderr.txt", "w")
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--gpu-worker", str(work)], stderr=err)
        if job:
            job()
            job = None
        last, size = time.time(), 0
        while proc.poll() is None:
            time.sleep(0.1)
            now_size = (work / "log.txt").stat().st_size
            if now_size != size:
                last, size = time.time(), now_size
            elif time.time() - last > STALL_S:
                proc.kill()
                proc.wait()
                break
        err.close()
        lines = (work / "log.txt").read_text().splitlines()
        started = [ln.split()[1] for ln in lines if ln.startswith("START ")]
        for ln in lines:
            if ln.startswith("DONE "):
                _, name, what, *rest = ln.split(" ", 3)
                status[name] = (what, json.loads(rest[0]) if rest and what != "ok" else (rest[0] if rest else ""))
        for name in started:
            if name not in status:
                status[name] = ("crashed", "the GPU process died or hung in this case")
        if not started:  # the child could not even start (no GPU, no CuPy): nothing more will run
            note = (work / "stderr.txt").read_text()[-2000:]
            for name in pending:
                status[name] = (
                    "not-run",
                    "the GPU process did not start: " + note.strip().splitlines()[-1:][0]
                    if note.strip()
                    else "the GPU process did not start",
                )
            break
        pending = [n for n in pending if n not in status]
    device = json.loads((work / "device.json").read_text()) if (work / "device.json").exists() else {}
    return status, device, note


# ----------------------------------------------------------------------------- both sides
def versions():
    import importlib.metadata as md

    out = {"python": platform.python_version(), "numpy": np.__version__}
    for pkg in ("cupy-cuda13x", "cupy-cuda12x", "cuda-core", "cuda-bindings", "numba-cuda"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    try:
        out["nvrtc"] = ".".join(map(str, nvrtc_version()))
    except Exception:  # no NVRTC here: the record says so instead of a version
        out["nvrtc"] = "unavailable"
    return out


def interpret_all(all_cases, sink):
    for case in all_cases:
        t = time.perf_counter()
        inputs = case.inputs()
        status, msg, outs = run_interpreter(case, inputs)
        sink[case.name] = (status, msg, outs, time.perf_counter() - t, case.fingerprint(inputs))


def entry(case, gpu_status, cpu, gpu_outs):
    status, msg, outs, secs, _ = cpu
    row = {
        "category": case.category,
        "kernel": case.kernel,
        "options": list(case.options),
        "outputs": list(case.outputs),
        "tolerance_ulps": case.ulps,
        "atol": case.atol,
        "nan": case.nan,
        "note": case.note,
        "origin": case.origin,
        "gpu": gpu_status[0],
        "gpu_detail": gpu_status[1],
        "interpreter": status,
        "interpreter_detail": msg,
        "interpreter_s": round(secs, 3),
        "max_ulps": {},
        "mismatches": {},
    }
    if case.refused:
        row["expected_refusal"] = case.refused
    if gpu_status[0] == "ok" and status == "ran":
        verdicts = judge(case, gpu_outs, outs)
        row["max_ulps"] = {k: v.max_ulps for k, v in verdicts.items()}
        row["mismatches"] = {k: f"{v.bad} element(s); first {v.first}" for k, v in verdicts.items() if not v.ok}
        row["result"] = (
            "match" if all(v.ok for v in verdicts.values()) and len(verdicts) == len(case.outputs) else "MISMATCH"
        )
    elif gpu_status[0] != "ok":  # every case must run on the GPU, refused ones too (their results wait there)
        row["result"] = f"GPU {gpu_status[0]}"
    elif status == "refused":
        row["result"] = "refused" if case.refused else "REFUSED (unexpected)"
    else:
        row["result"] = f"interpreter {status}"
    return row


def gpu_main(out_dir: Path, only=()) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    all_cases = [c for c in cases() if not only or c.name in only]
    t0 = time.perf_counter()
    # Work on the host's own disk, not in OUT_DIR (only the results should travel back).
    work = Path(tempfile.mkdtemp(prefix="ptxdiff-"))
    cpu = {}
    gpu_status, device, note = run_gpu_side([c.name for c in all_cases], work, lambda: interpret_all(all_cases, cpu))
    results, rows = {}, {}
    for case in all_cases:
        g = gpu_status.get(case.name, ("not-run", ""))
        gpu_outs = {}
        if g[0] == "ok":
            with open(work / f"{case.name}.pkl", "rb") as f:
                gpu_outs = pickle.load(f)
            for k, v in gpu_outs.items():
                results[case.name + SEP + k] = v
            results[case.name + SEP + FINGERPRINT] = np.str_(cpu[case.name][4])
        rows[case.name] = entry(case, g, cpu[case.name], gpu_outs)
    record = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": device,
        "interpreter_arch": "compute_90 (helpers.cuda_c.DEFAULT_ARCH)",
        "host": platform.node(),
        "versions": versions(),
        "seconds": round(time.perf_counter() - t0, 1),
        "gpu_note": note,
        "cases": rows,
    }
    record["summary"] = summary(rows)
    results["__meta__"] = np.str_(json.dumps({k: record[k] for k in ("date", "gpu", "versions")}))
    if any(k != "__meta__" for k in results):
        # A pickle, turned into tests/ptx_corpus/gpu_results.npz by --install: on the lent GPU host
        # (Python 3.12.3, NumPy 2.4.6) every .npz written came back with NUL bytes in its array headers.
        with open(out_dir / "gpu_results.pkl", "wb") as f:
            pickle.dump(results, f)
    (out_dir / "record.json").write_text(json.dumps(record, indent=1, default=str))
    write_doc(record, out_dir / "ptx-differential.md")
    shutil.rmtree(work, ignore_errors=True)
    print_summary(record)
    return 0 if record["summary"]["bad"] == 0 else 1


def summary(rows):
    res = [r["result"] for r in rows.values()]
    bad = [n for n, r in rows.items() if r["result"] not in ("match", "refused")]
    return {
        "cases": len(res),
        "match": res.count("match"),
        "refused": res.count("refused"),
        "bad": len(bad),
        "bad_cases": bad,
    }


def print_summary(record):
    s = record["summary"]
    gpu = record.get("gpu") or {}
    print(f"GPU: {gpu.get('name', 'none')} (cc {gpu.get('compute_capability', '?')}); {record['seconds']} s")
    for name, r in record["cases"].items():
        if r["result"] not in ("match", "refused"):
            why = (
                "; ".join(f"{k}: {v}" for k, v in r["mismatches"].items()) or r["gpu_detail"] or r["interpreter_detail"]
            )
            print(f"  {r['result']:<12} {name}: {why}")
    print(f"{s['cases']} cases: {s['match']} match, {s['refused']} refused as expected, {s['bad']} need attention")


# ----------------------------------------------------------------------------- the record in docs/
def _fmt_ulps(r):
    if not r["max_ulps"]:
        return ""
    m = max(r["max_ulps"].values())
    return "inf" if m == float("inf") else f"{m:g}"


def _tol(r):
    t = r["tolerance_ulps"]
    t = max(t.values()) if isinstance(t, dict) else t
    a = r["atol"] if not isinstance(r["atol"], dict) else max(r["atol"].values())
    return f"{t}" + (f" or {a:.2g} abs" if a else "")


def _cuda_version(v):
    return f"{v // 1000}.{v % 1000 // 10}" if isinstance(v, int) else "?"


def write_doc(record, path: Path):
    gpu, v, s = record.get("gpu") or {}, record["versions"], record["summary"]
    lines = [
        "# PTX interpreter vs GPU: differential record",
        "",
        "Written by `tools/ptx_differential.py --gpu` (copied here by `--install`); do not edit by hand.",
        "Every case is compiled by NVRTC with the same options for both sides; the GPU runs the CUBIN,",
        "helpers.ptx runs the PTX. Integers must be bit-identical, floats within the stated ulps (0 = bit-identical,",
        "so -0.0 vs +0.0 is a mismatch). `make test` replays the corpus against these results",
        "(tests/ptx/test_differential.py).",
        "",
        f"- **Date:** {record['date']}",
        f"- **GPU:** {gpu.get('name', 'none')} (compute capability {gpu.get('compute_capability', '?')}), "
        f"driver CUDA {_cuda_version(gpu.get('driver_version'))}, runtime {_cuda_version(gpu.get('runtime_version'))}",
        "- **Versions:** " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- **Result:** {s['match']} of {s['cases']} cases match, {s['refused']} refused by the interpreter as "
        f"expected, {s['bad']} need attention" + (f" ({', '.join(s['bad_cases'])})" if s["bad_cases"] else ""),
    ]
    by_cat = {}
    for name, r in record["cases"].items():
        by_cat.setdefault(r["category"], []).append((name, r))
    for cat in [c for c in CATEGORIES if c in by_cat] + sorted(set(by_cat) - set(CATEGORIES)):
        lines += ["", f"## {cat}: {CATEGORIES.get(cat, '')}", "", "| Case | Max ulps | Tolerance | Result | Note |"]
        lines.append("|---|---:|---:|---|---|")
        for name, r in by_cat[cat]:
            note = r.get("expected_refusal") or r["note"]
            if r["mismatches"]:
                note = "; ".join(f"{k}: {m}" for k, m in r["mismatches"].items())
            elif r["result"] not in ("match", "refused"):
                note = r["gpu_detail"] or r["interpreter_detail"]
            opts = f" `{' '.join(r['options'])}`" if r["options"] else ""
            lines.append(
                f"| {name}{opts} | {_fmt_ulps(r)} | {_tol(r)} | {r['result']} | {str(note).replace('|', '/')} |"
            )
    path.write_text("\n".join(lines) + "\n")


def install(out_dir: Path) -> int:
    """Copy a GPU run's results into the repository: the npz and record for the CPU replay, the doc."""
    if (out_dir / "gpu_results.pkl").exists():
        with open(out_dir / "gpu_results.pkl", "rb") as f:
            results = pickle.load(f)  # written by our own --gpu run: a trusted file
        np.savez_compressed(RESULTS, **results)
    else:
        shutil.copyfile(out_dir / "gpu_results.npz", RESULTS)
    shutil.copyfile(out_dir / "record.json", RECORD)
    write_doc(json.loads((out_dir / "record.json").read_text()), DOC)
    print(f"installed {RESULTS.relative_to(ROOT)}, {RECORD.relative_to(ROOT)}, {DOC.relative_to(ROOT)}")
    return 0


# ----------------------------------------------------------------------------- CPU replay
def cpu_main(path: Path, only=()) -> int:
    if not path.exists():
        print(f"no GPU results at {path}: run `{GPU_CMD}` on a GPU host, then `--install OUT_DIR`", file=sys.stderr)
        return 2
    results, meta = load_results(path)
    bad = 0
    all_cases = [c for c in cases() if not only or c.name in only]
    for case in all_cases:
        inputs = case.inputs()
        gpu, fp = stored(results, case)
        status, msg, outs = run_interpreter(case, inputs)
        if case.refused:
            ok = status == "refused"
            line = "refused as expected" if ok else f"expected a refusal, got {status} {msg}"
        elif not fp:
            ok, line = False, "no stored GPU result"
        elif fp != case.fingerprint(inputs):
            ok, line = False, "changed since the GPU run (fingerprint differs)"
        elif status != "ran":
            ok, line = False, f"interpreter {status}: {msg}"
        else:
            verdicts = judge(case, gpu, outs)
            ok = all(v.ok for v in verdicts.values()) and len(verdicts) == len(case.outputs)
            worst = max((v.max_ulps for v in verdicts.values()), default=0)
            line = f"max {worst:g} ulps" + "".join(f"; {k}: {v.first}" for k, v in verdicts.items() if not v.ok)
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {case.name}: {line}")
    print(
        f"{len(all_cases)} cases against {path} ({meta.get('gpu', {}).get('name', '?')}, {meta.get('date', '?')}): "
        f"{bad} bad"
    )
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--gpu", metavar="OUT_DIR", type=Path, help="run on the GPU and in the interpreter")
    g.add_argument("--cpu", metavar="RESULTS", type=Path, nargs="?", const=RESULTS, help="replay against results")
    g.add_argument("--install", metavar="OUT_DIR", type=Path, help="copy a GPU run into tests/ and docs/")
    g.add_argument("--gpu-worker", metavar="WORK_DIR", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--only", nargs="*", default=(), help="case names to run (default: all)")
    a = p.parse_args(argv)
    if a.gpu_worker:
        return gpu_worker(a.gpu_worker)
    if a.gpu:
        return gpu_main(a.gpu, set(a.only))
    if a.install:
        return install(a.install)
    return cpu_main(a.cpu, set(a.only))


if __name__ == "__main__":
    sys.exit(main())
