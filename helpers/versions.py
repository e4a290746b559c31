"""Do the installed NumPy, Numba and numba-cuda fit together?

Why: a `pip install -U numpy` (or a notebook that installs a package pulling a newer NumPy) leaves
Numba unable to import — its own error names a version, not the fix — and every later cell fails.
The installed versions and the ranges each package declares are read from package metadata, so
this check imports nothing and cannot itself crash when the mismatch is there.
"""

from __future__ import annotations

import importlib.metadata

# Who declares the ranges the course depends on, and the ones the course's locks add.
DECLARERS = ("numba-cuda", "numba")
# requirements/common.in pins numpy below 2.5: it removed np.row_stack, which numba-cuda calls.
COURSE_RANGES = {"numpy": ">=2.0,<2.5"}
FIX = 'run `make lab` (it reinstalls the locked versions), or `pip install "{req}"` in this environment'


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _requirements(dist):
    """(name, specifier) pairs that apply whatever extras were chosen."""
    from packaging.requirements import Requirement

    out = []
    for text in importlib.metadata.requires(dist) or ():
        req = Requirement(text)
        if req.marker is not None and "extra" in str(req.marker):
            continue
        if req.marker is None or req.marker.evaluate():
            out.append((req.name, req.specifier, dist))
    return out


def problems(version=_version, requirements=_requirements) -> list[str]:
    """One sentence per installed package outside a range the course's stack declares."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    wanted = [(name, SpecifierSet(spec), "the course") for name, spec in COURSE_RANGES.items()]
    for dist in DECLARERS:
        if version(dist) is not None:
            wanted += [(n, s, f"{dist} {version(dist)}") for n, s, _ in requirements(dist) if n in ("numpy", "numba")]
    out = []
    for name, spec, who in wanted:
        have = version(name)
        if have is None or not str(spec):
            continue
        try:
            ok = Version(have) in spec
        except InvalidVersion:
            continue
        if not ok:
            req = f"{name}{spec}"
            out.append(
                f"{name} {have} is outside what {who} supports ({name}{spec}), so Numba may fail to import "
                f"or misbehave: {FIX.format(req=req)}, then restart the kernel."
            )
    return out


def problem_line() -> str | None:
    """The first mismatch as one sentence (the banner prints it), or None."""
    try:
        found = problems()
    except Exception:  # a metadata oddity must never stop `import helpers`
        return None
    return found[0] if found else None
