"""Notebook 18 quotes tensor-core figures only from records: bench/mixed_precision.py's (while no
docs/data/mixed-precision-<gpu>.json exists it says "no record yet" and gives no figure of its own; once one exists,
the text must name its GPU and quote its numbers) and bench/tensor_gemm.py's, whose paragraph quotes
docs/data/tensor-gemm-h200.json exactly."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "solutions" / "18_tensor_cores_and_mixed_precision.ipynb"


def _markdown() -> str:
    nb = json.loads(NB.read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_the_text_cites_the_record_or_says_there_is_none():
    records = sorted((ROOT / "docs" / "data").glob("mixed-precision-*.json"))
    text = _markdown()
    if not records:
        assert "no record yet" in text
        own = text.replace(_tensor_paragraph(text), "")
        assert not re.search(r"\d+(\.\d+)? TFLOP/s", own), "a TFLOP/s figure with no record behind it"
        return
    assert "no record yet" not in text, "a record exists: quote it instead of saying there is none"
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["machine"]["GPU"] in text, f"{path.name}'s GPU is not named in the text"
        for name, row in rec["rows"].items():
            if "tflops" in row:
                assert f"{row['tflops']:.1f} TFLOP/s" in text or f"{row['tflops']:.0f} TFLOP/s" in text, name


def _tensor_paragraph(text: str) -> str:
    start = text.index("How far a tuned kernel gets: `bench/tensor_gemm.py`")
    return text[start : text.index("\n\n", start) if "\n\n" in text[start:] else len(text)]


def test_the_tuned_kernels_figures_are_the_tensor_gemm_record():
    rec = json.loads((ROOT / "docs" / "data" / "tensor-gemm-h200.json").read_text())
    para = re.sub(r"\s+", " ", _tensor_paragraph(_markdown()))
    rows = {r["name"]: r for r in rec["rows"]}
    bf16 = [r for r in rec["rows"] if r["kernel"] == "course" and r["status"] == "ok" and r["precision"] == "bf16"]
    best = max(bf16, key=lambda r: r["tflops"])
    sync = max((r for r in bf16 if r["instruction"] == "mma.sync"), key=lambda r: r["tflops"])
    assert best["instruction"] == "wgmma" and "(`bench/tensor_wgmma.cu`" in para
    assert f"an {rec['machine']['GPU'].split(' (')[0]}, M = N = K = {rec['size']}" in para
    assert f"reached {best['tflops']:.0f} TFLOP/s with bf16 inputs, {100 * best['of_cublas']:.0f}% of cuBLAS's" in para
    assert f"best tile reached {sync['tflops']:.0f} TFLOP/s, {100 * sync['of_cublas']:.0f}% of cuBLAS" in para
    assert f"{rows['cuBLAS bf16']['tflops']:.0f} TFLOP/s at the same precision" in para
    fp32, tf32 = rows["cuBLAS FP32 (TF32 off)"]["tflops"], rows["cuBLAS TF32"]["tflops"]
    assert f"FP32 ran {fp32:.0f} TFLOP/s and with TF32 {tf32:.0f}" in para
    for label, name in (("FP32", "cuBLAS FP32 (TF32 off)"), ("TF32", "cuBLAS TF32"), ("BF16", "cuBLAS bf16")):
        assert f"{label} {rows[name]['error_vs_fp64_of_fp32_inputs']:.1e}" in para, label
