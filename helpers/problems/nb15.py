"""Notebook 15 - Profiling and sanitizers: Nsight Compute numbers and compute-sanitizer's reach."""

from __future__ import annotations

from helpers.exercises import ApproxFunctionExercise, FunctionExercise, ValueExercise, register

# ----------------------------------------------------------------------------- which tool

race_tool = ValueExercise(
    prompt="Two threads of one block write and read the same shared-memory word with no barrier between them. Which "
    "compute-sanitizer tool reports it (its --tool name)?",
    answer="racecheck",
    choices=("memcheck", "racecheck", "initcheck", "synccheck"),  # compute-sanitizer's four tools
    mistakes={
        "memcheck": "memcheck reports accesses outside an allocation (and misaligned ones); a race is two valid "
        "accesses in the wrong order.",
        "synccheck": "synccheck reports barriers used wrongly (a syncthreads only some threads reach); here the "
        "barrier is missing, which is a shared-memory hazard.",
        "initcheck": "initcheck reports reads of global memory never written; the problem here is the order of two "
        "accesses to shared memory.",
    },
    explanation="racecheck watches shared memory for hazards between threads of a block (write-after-read, "
    "read-after-write, write-after-write). It does not watch global memory: the recorded table shows it missing "
    "the global-memory races that the course's tracer reports.",
    hints=("The tool's name says what it looks for.",),
)

# ----------------------------------------------------------------------------- DRAM bandwidth from ncu


class _NcuRow:
    """A row as helpers.profiling.parse returns it: metric name -> number (bytes, nanoseconds)."""

    def draw(self, rng):
        t = float(rng.integers(2_000, 5_000_000))
        gbs = rng.uniform(50, 3300)
        total = gbs * t  # bytes = GB/s * ns
        share = rng.uniform(0.2, 0.8)
        return {
            "kernel": "k",
            "gpu__time_duration.sum": t,
            "dram__bytes_read.sum": float(round(total * share)),
            "dram__bytes_write.sum": float(round(total * (1 - share))),
        }


def _dram_gbs(row):
    return (row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]) / row["gpu__time_duration.sum"]


dram_gbs = ApproxFunctionExercise(
    prompt="Write dram_gbs(row): row is one kernel's Nsight Compute numbers (dram__bytes_read.sum and "
    "dram__bytes_write.sum in bytes, gpu__time_duration.sum in nanoseconds). Return the DRAM bandwidth the kernel "
    "achieved, in GB/s (10^9 bytes per second).",
    reference=_dram_gbs,
    inputs={"row": _NcuRow()},
    trials=100,
    mistakes=(
        (
            lambda row: row["dram__bytes_read.sum"] / row["gpu__time_duration.sum"],
            "count the bytes written too: DRAM bandwidth is read plus write traffic.",
        ),
        (
            lambda row: _dram_gbs(row) * 1e9,
            "bytes per nanosecond already are GB/s (10^9 bytes / 10^9 ns): do not multiply by 10^9.",
        ),
        (lambda row: _dram_gbs(row) / 1e9, "bytes per nanosecond already are GB/s: no division by 10^9 is needed."),
    ),
)

# ----------------------------------------------------------------------------- what no tool caught

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


class _Record:
    """A results dict shaped like docs/data/sanitizer.json's: case -> tool -> {"caught": True/False/None}."""

    def draw(self, rng):
        out = {}
        for k in range(int(rng.integers(1, 12))):
            tools = {}
            for t in TOOLS:
                p = rng.random()
                if p < 0.08:
                    tools[t] = {"caught": None, "hang": True}
                else:
                    tools[t] = {"caught": bool(p < 0.3)}
            out[f"case_{k:02d}"] = tools
        return out


def _missed(results):
    return sorted(name for name, tools in results.items() if not any(v.get("caught") is True for v in tools.values()))


missed_by_all = FunctionExercise(
    prompt="Write missed_by_all(results): results maps each buggy kernel's name to {tool: {'caught': True, False or "
    "None}} (None: the run could not tell, e.g. the launch hung). Return the sorted list of kernel names that no tool "
    "caught (no tool reported True).",
    reference=_missed,
    inputs={"results": _Record()},
    trials=150,
    mistakes=(
        (
            lambda results: sorted(n for n, t in results.items() if all(v.get("caught") is False for v in t.values())),
            "a run that hung (caught is None) did not catch the bug either: count only True as caught.",
        ),
        (
            lambda results: [n for n, t in results.items() if not any(v.get("caught") is True for v in t.values())],
            "return the names sorted.",
        ),
    ),
)

EXERCISES = register(__name__, globals())
