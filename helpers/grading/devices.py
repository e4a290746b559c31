"""Which GPU graded what: the device list the workers are placed on (parent), the one device a
grading child sees, read in the child through the driver without nvidia-smi (child), and the
lines of the summary that say which GPU graded which submission (report).
"""

from __future__ import annotations

import ctypes
import os
import socket
from dataclasses import dataclass

SHOWN_PER_GPU = 30  # submissions named per GPU in the summary; grades.json names the GPU of each


def visible_devices(environ_value: str | None, count: int) -> list[str]:
    """One entry per GPU the workers may use: the instructor's own CUDA_VISIBLE_DEVICES list (ids,
    UUIDs or MIG names, in their order) when set, else 0 .. count-1."""
    listed = [d.strip() for d in (environ_value or "").split(",") if d.strip()]
    return listed or [str(i) for i in range(max(count, 1))]


def _driver_ids() -> dict:
    """UUID and PCI bus id of device 0 of this process (the only one a grading child sees)."""
    lib = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(dev), 0) != 0:
        return {}
    out = {}
    raw = (ctypes.c_ubyte * 16)()
    get_uuid = getattr(lib, "cuDeviceGetUuid_v2", None) or lib.cuDeviceGetUuid
    if get_uuid(raw, dev) == 0:
        h = bytes(raw).hex()
        out["uuid"] = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    bus = ctypes.create_string_buffer(64)
    if lib.cuDeviceGetPCIBusId(bus, 64, dev) == 0:
        out["pci_bus_id"] = bus.value.decode(errors="replace")
    return out


def describe() -> dict:
    """The child's report of its device, as one results message; never raises."""
    msg = {"type": "device", "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "host": socket.gethostname()}
    try:
        from helpers import env

        msg["gpu"] = env.MODE.gpu
        if env.MODE.gpu:
            info = env.MODE.info
            msg.update(count=info.count, name=info.name, compute_capability=info.compute_capability)
            msg.update(_driver_ids())
    except Exception as e:  # a report about the machine must never cost a grade
        msg["problem"] = f"{type(e).__name__}: {e}"[:200]
    return msg


def label(rec: dict, host: bool = False) -> str:
    """'GPU 1 (NVIDIA H200, GPU-1a2b3c4d)' for a record graded on a GPU, '' otherwise; with host,
    'GPU 0 on node12 (...)': under Slurm every task's GPU is its node's '0'."""
    gpu = rec.get("gpu")
    if gpu is None:
        return ""
    dev = rec.get("device") or {}
    extra = [x for x in (dev.get("name"), (dev.get("uuid") or "")[:12]) if x]
    where = f" on {dev['host']}" if host and dev.get("host") else ""
    return f"GPU {gpu}{where}" + (f" ({', '.join(extra)})" if extra else "")


def identity(rec: dict) -> str:
    """Which physical GPU graded the record: its UUID where the child read one, else its host and
    index (the index alone repeats on every node of a cluster)."""
    dev = rec.get("device") or {}
    return dev.get("uuid") or (f"{dev['host']}/{rec.get('gpu')}" if dev.get("host") else str(rec.get("gpu")))


def by_gpu(records: list) -> list[GpuGroup]:
    """The records graded on a GPU, one group per physical GPU, in host then index order; the
    labels name the host when the records came from more than one."""
    groups: dict[str, list] = {}
    for rec in records:
        if rec.get("gpu") is not None:
            groups.setdefault(identity(rec), []).append(rec)
    hosts = {(r.get("device") or {}).get("host") for recs in groups.values() for r in recs} - {None}
    out = []
    for key, recs in groups.items():
        named = next((r for r in recs if r.get("device")), recs[0])
        host = (named.get("device") or {}).get("host") or ""
        out.append(GpuGroup(key, str(named["gpu"]), label(named, host=len(hosts) > 1), host, recs))
    return sorted(out, key=lambda g: (g.host, g.gpu, g.key))


@dataclass(frozen=True)
class GpuGroup:
    key: str  # identity(): the UUID, else host/index
    gpu: str  # the index the worker was given on its host
    label: str
    host: str
    records: list


def problems(rec: dict) -> list[str]:
    """What the child saw that it should not have: more (or fewer) than its one GPU, or another one."""
    dev, gpu = rec.get("device"), rec.get("gpu")
    if gpu is None or not dev:
        return []
    out = []
    if dev.get("visible") != gpu:
        out.append(f"the child's CUDA_VISIBLE_DEVICES was {dev.get('visible')!r}, not {gpu!r}")
    if dev.get("gpu") and dev.get("count") != 1:
        out.append(f"the child saw {dev.get('count')} GPUs instead of one")
    return out


def summary_lines(records: list) -> list[str]:
    """'Graded on N GPU(s):' and one line per GPU naming its submissions; [] when none ran on a GPU."""
    groups = by_gpu(records)
    if not groups:
        return []
    lines = ["", f"Graded on {len(groups)} GPU(s):"]
    for group in groups:
        recs = group.records
        names = [f"{r['student']}/{r['notebook']} ({r['outcome']})" for r in recs]
        more = len(names) - SHOWN_PER_GPU
        shown = ", ".join(names[:SHOWN_PER_GPU]) + (f" and {more} more (grades.json names each)" if more > 0 else "")
        seconds = sum(r.get("seconds") or 0 for r in recs)
        lines.append(f"  {group.label}: {len(recs)} submission(s), {seconds:.1f} s: {shown}")
    for rec in records:
        for p in problems(rec):
            lines.append(f"WARNING: {rec['student']}/{rec['notebook']} on GPU {rec['gpu']}: {p}")
    return lines
