"""Notebook 18 quotes tensor-core figures only from bench/mixed_precision.py's record: while no
docs/data/mixed-precision-<gpu>.json exists it says "no record yet" and gives no TFLOP/s figure; once one exists,
the text must name its GPU (then this test asks for the record's numbers to be quoted)."""

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
        assert not re.search(r"\d+(\.\d+)? TFLOP/s", text), "a TFLOP/s figure with no record behind it"
        return
    assert "no record yet" not in text, "a record exists: quote it instead of saying there is none"
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["machine"]["GPU"] in text, f"{path.name}'s GPU is not named in the text"
        for name, row in rec["rows"].items():
            if "tflops" in row:
                assert f"{row['tflops']:.1f} TFLOP/s" in text or f"{row['tflops']:.0f} TFLOP/s" in text, name
