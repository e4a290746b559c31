"""Tamper detection inside the grading process: a snapshot of the trusted objects, taken
before any student code runs, and a cheap comparison after every cell and around every grade.

What is compared (by identity, so a replaced object is caught even if it behaves the same):
- every entry of the trusted modules (``helpers.*``, ``numpy.*``, ``builtins``; the real Numba
  CUDA modules in GPU mode): replaced or deleted entries, and entries added to them unless the
  new value is a submodule or a dunder name (lazy imports and the warnings registry add those);
- the method tables of the classes those modules define (``Exercise.grade``, ``_grade``...),
  including methods added later (an added ``_grade`` on a subclass would win the lookup);
- each function's code, defaults and closure cells (``f.__code__ = ...`` keeps the object);
- each exercise object's attributes and class (``nb02.saxpy.expect = ...``, ``points = 100``);
- the mode (``helpers.env.MODE.gpu``), ``sys.settrace``/``sys.setprofile`` hooks.
It cannot see changes made through ``ctypes`` or to objects it does not list (docs/grading.md).
"""

from __future__ import annotations

import builtins
import sys
import types

_FUNCS = (types.FunctionType,)
_IGNORED_ATTRS = {"_hint_level", "last_result"}  # exercise attributes that change in normal use


def _is_trusted(name: str, gpu: bool) -> bool:
    if name == "builtins" or name == "helpers" or name.startswith(("helpers.", "numpy")):
        return not name.startswith("numpy.tests") and ".tests." not in name
    if gpu and name.startswith("numba.cuda") and "simulator" not in name:
        return True
    return False


class Integrity:
    def __init__(self, exercises, gpu: bool = False):
        self.modules = []  # (module, {key: value}, strict)
        self.classes = []  # (class, {key: value}, strict)
        self.functions = []  # (function, code, defaults, kwdefaults, closure contents)
        self.exercises = [(ex, type(ex), dict(vars(ex))) for ex in exercises]
        seen_cls, seen_fn = set(), set()
        for name, mod in sorted(sys.modules.items()):
            if mod is None or not isinstance(mod, types.ModuleType) or not _is_trusted(name, gpu):
                continue
            entries = dict(vars(mod))
            strict = not name.startswith("numba")
            self.modules.append((mod, entries, strict))
            for value in entries.values():
                if isinstance(value, type) and id(value) not in seen_cls and self._owned(value, gpu):
                    seen_cls.add(id(value))
                    self.classes.append((value, dict(vars(value)), not value.__module__.startswith("numba")))
                    for v in vars(value).values():
                        self._add_function(getattr(v, "__func__", v), seen_fn)
                else:
                    self._add_function(value, seen_fn)
        self.mode = self._mode()

    @staticmethod
    def _owned(cls, gpu) -> bool:
        mod = getattr(cls, "__module__", "") or ""
        return mod.startswith(("helpers", "numpy")) or (gpu and mod.startswith("numba.cuda"))

    def _add_function(self, fn, seen):
        if isinstance(fn, _FUNCS) and id(fn) not in seen:
            seen.add(id(fn))
            cells = tuple(self._cell(c) for c in (fn.__closure__ or ()))
            self.functions.append((fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__, cells))

    @staticmethod
    def _cell(c):
        try:
            return c.cell_contents
        except ValueError:  # empty cell
            return _EMPTY

    @staticmethod
    def _mode():
        env = sys.modules.get("helpers.env")
        return getattr(getattr(env, "MODE", None), "gpu", None)

    def problems(self, limit: int = 3) -> list[str]:
        """Plain descriptions of what changed since the snapshot (empty: nothing)."""
        out = []
        for mod, entries, strict in self.modules:
            now = vars(mod)
            for key, value in entries.items():
                if now.get(key, _EMPTY) is not value and (strict or callable(value)):
                    out.append(f"{mod.__name__}.{key} was {'deleted' if key not in now else 'replaced'}")
                    break
            if strict and len(now) != len(entries):
                for key in now.keys() - entries.keys():
                    if not (key.startswith("__") or isinstance(now[key], types.ModuleType)):
                        out.append(f"{mod.__name__}.{key} was added")
                        break
            if len(out) >= limit:
                return out
        for cls, entries, strict in self.classes:
            changed = self._class_changes(cls, entries, strict)
            if changed:
                out.append(f"{cls.__module__}.{cls.__qualname__}.{changed[0]} was changed")
        for fn, code, defaults, kwdefaults, cells in self.functions:
            if (
                fn.__code__ is not code
                or fn.__defaults__ is not defaults
                or fn.__kwdefaults__ is not kwdefaults
                or any(self._cell(c) is not v for c, v in zip(fn.__closure__ or (), cells))
            ):
                out.append(f"the code of {fn.__module__}.{fn.__qualname__} was changed")
            if len(out) >= limit:
                return out
        for ex, cls, attrs in self.exercises:
            now = vars(ex)
            if type(ex) is not cls:
                out.append(f"the class of exercise {attrs.get('notebook')}.{attrs.get('name')} was changed")
                continue
            for k in (attrs.keys() | now.keys()) - _IGNORED_ATTRS:
                if now.get(k, _EMPTY) is not attrs.get(k, _EMPTY):
                    out.append(f"exercise {attrs.get('notebook')}.{attrs.get('name')}: attribute {k!r} was changed")
                    break
        if self._mode() != self.mode:
            out.append("helpers.env.MODE was changed")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            out.append("a sys.settrace/sys.setprofile hook was installed")
        if builtins.__dict__.get("__import__") is not self._import:
            out.append("builtins.__import__ was replaced")
        return out[:limit]

    _import = builtins.__import__

    @staticmethod
    def _class_changes(cls, entries, strict) -> list[str]:
        """Names whose binding changed. Normal use fills caches that are not tampering: pickling
        adds ``__slotnames__``, Numba sets lazy singletons (``NVVM._NVVM__INSTANCE``) and caches
        on its classes. So dunder non-callables are never compared, and for Numba's classes only
        the methods that existed at the snapshot are (replacing one is still caught)."""
        now = vars(cls)
        out = []
        for k in sorted(entries.keys() | now.keys()):
            before, after = entries.get(k, _EMPTY), now.get(k, _EMPTY)
            if before is after:
                continue
            if k.startswith("__") and k.endswith("__") and not callable(after) and not callable(before):
                continue
            if not strict and not callable(before):
                continue  # added or non-method state of a Numba class: its own caches
            out.append(k)
        return out


class _Empty:
    def __repr__(self):
        return "<empty>"


_EMPTY = _Empty()
