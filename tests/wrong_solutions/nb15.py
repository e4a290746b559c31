"""Wrong answers for helpers/problems/nb15.py (profiling and sanitizers)."""

from . import Wrong


def _gbs_read_only(row):
    return row["dram__bytes_read.sum"] / row["gpu__time_duration.sum"]


def _gbs_times_1e9(row):
    return (row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]) / row["gpu__time_duration.sum"] * 1e9


def _gbs_seconds_as_ns(row):
    """Treats nanoseconds as seconds: a million times too small."""
    return (row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]) / row["gpu__time_duration.sum"] / 1e9


def _missed_hang_counts(results):
    return sorted(n for n, t in results.items() if all(v.get("caught") is False for v in t.values()))


def _missed_unsorted(results):
    return [n for n, t in results.items() if not any(v.get("caught") is True for v in t.values())][::-1]


def _caught_by_all(results):
    return sorted(n for n, t in results.items() if any(v.get("caught") is True for v in t.values()))


WRONG = {
    "race_tool": [
        Wrong("memcheck", "memcheck", "outside an allocation"),
        Wrong("synccheck", "synccheck", "barriers used wrongly"),
        Wrong("initcheck", "initcheck", "never written"),
        Wrong("not a tool", "nsys", "'nsys' is not one of them"),
        Wrong("the whole command", "compute-sanitizer --tool racecheck", "alone: 'racecheck'"),
        Wrong("an option number", 2, "one of the names ('memcheck', 'racecheck', 'initcheck' or 'synccheck')"),
    ],
    "dram_gbs": [
        Wrong("reads only", _gbs_read_only, "bytes written too"),
        Wrong("times 1e9", _gbs_times_1e9, "do not multiply"),
        Wrong("divided by 1e9", _gbs_seconds_as_ns, "no division"),
    ],
    "missed_by_all": [
        Wrong("a hang counts as caught", _missed_hang_counts, "did not catch the bug"),
        Wrong("unsorted", _missed_unsorted, "sorted"),
        Wrong("the caught ones", _caught_by_all, "returned"),
    ],
}
WRONG_GPU = {}
