"""Parse the PTX that NVRTC emits into plain Python objects the machine can decode.

Why a parser of our own: the course must run CUDA C kernels on machines without a GPU, and
PTX is the one form of a kernel NVRTC gives us there. Only the subset NVRTC (ISA 8.x/9.x)
writes for ordinary kernels is read: module variables, `.entry`/`.func` with their `.param`s,
`.reg`/`.local`/`.shared` declarations, labels, predicated instructions with their operands,
and the `.loc`/`.file` directives that tie each instruction to a CUDA C source line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Addr", "Function", "Imm", "Instr", "Module", "Reg", "Sym", "Var", "Vec", "parse"]


# ----------------------------------------------------------------------------- operands
@dataclass(frozen=True)
class Reg:
    name: str  # "%r1", "%tid.x", "%SP"; "_" is the sink


@dataclass(frozen=True)
class Imm:
    value: object  # int, or float for 0f/0d literals and decimal floats
    bits: int = 0  # 32/64 for 0f/0d hex literals (the bit pattern is exact), else 0


@dataclass(frozen=True)
class Addr:
    base: object  # Reg or Sym
    offset: int


@dataclass(frozen=True)
class Sym:
    name: str  # a variable, label or function name


@dataclass(frozen=True)
class Vec:
    items: tuple  # of Reg/Imm


@dataclass
class Instr:
    opcode: str  # "ld.global.v4.f32"
    parts: tuple  # ("ld", "global", "v4", "f32")
    operands: list
    guard: object = None  # (Reg, negated) or None
    line: int = 0  # CUDA C line from the latest .loc (0: unknown)
    file: int = 0
    text: str = ""
    call: object = None  # for call: (returns, callee, args)


@dataclass
class Var:
    name: str
    space: str  # global shared local const param
    type: str  # "b8", "f32", ...
    align: int
    size: int  # bytes; 0 for `extern .shared x[]`
    count: int  # elements (1 for a scalar)
    init: object = None  # list of numbers, or None
    extern: bool = False


@dataclass
class Function:
    name: str
    entry: bool
    params: list = field(default_factory=list)  # Var, in order
    returns: list = field(default_factory=list)  # Var
    regs: dict = field(default_factory=dict)  # "%r1" -> "b32"
    vars: list = field(default_factory=list)  # .local/.shared/.param inside the body
    body: list = field(default_factory=list)  # Instr
    labels: dict = field(default_factory=dict)  # label -> index into body
    defined: bool = True


@dataclass
class Module:
    functions: dict = field(default_factory=dict)
    vars: list = field(default_factory=list)  # module-level Var
    files: dict = field(default_factory=dict)  # file number -> path


# ----------------------------------------------------------------------------- statements
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _statements(text):
    """Yield ("loc"|"file"|"label"|"stmt"|"{"|"}", text) in order; `.section` blocks skipped."""
    buf, depth, skip = [], 0, 0
    for line in _COMMENTS.sub("", text).splitlines():
        s = line.strip()
        if not skip and not depth and not "".join(buf).strip() and re.match(r"\.(loc|file)\s", s):
            yield (s[1:5].strip(), s)
            continue
        if not skip and not depth and not "".join(buf).strip() and re.match(r"\.(version|target|address_size)\s", s):
            continue  # one-line directives without ';': left in the buffer they hid the next declaration
        for ch in line:
            if skip:
                skip += {"{": 1, "}": -1}.get(ch, 0)
                continue
            if ch not in "{};:":  # the statement so far is read only at these (joining it per character was quadratic)
                buf.append(ch)
                continue
            cur = "".join(buf).strip()
            if ch == "{":
                if depth == 0 and cur.startswith(".section"):
                    buf, skip = [], 1
                elif depth == 0 and (not cur or re.search(r"\.(entry|func)\b", cur) and "=" not in cur):
                    if cur:
                        yield ("stmt", cur)
                    buf = []
                    yield ("{", "{")
                else:
                    buf.append(ch)
                    depth += 1
            elif ch == "}":
                if depth:
                    buf.append(ch)
                    depth -= 1
                else:
                    if cur:
                        yield ("stmt", cur)
                    buf = []
                    yield ("}", "}")
            elif ch == ";" and not depth:
                if cur:
                    yield ("stmt", cur)
                buf = []
            elif ch == ":" and not depth and re.fullmatch(r"[\w$.]+", cur):
                yield ("label", cur)
                buf = []
            else:
                buf.append(ch)
        buf.append(" ")


# ----------------------------------------------------------------------------- pieces
_VAR = re.compile(
    r"^((?:\.(?:extern|visible|weak|weak_extern)\s+)*)\.(global|shared|local|const|param)\s+"
    r"(?:\.ptr(?:\.\w+)*\s+)?(?:\.align\s+(\d+)\s+)?(?:\.(v2|v4)\s+)?\.(\w+)\s+([\w$]+)\s*((?:\[\s*\d*\s*\])*)"
    r"\s*(?:=\s*(.*))?$",
    re.DOTALL,
)
_SIZES = {
    "b8": 1,
    "u8": 1,
    "s8": 1,
    "b16": 2,
    "u16": 2,
    "s16": 2,
    "f16": 2,
    "bf16": 2,
    "b32": 4,
    "u32": 4,
    "s32": 4,
    "f32": 4,
    "b64": 8,
    "u64": 8,
    "s64": 8,
    "f64": 8,
    "pred": 1,
    "b128": 16,
}


def parse_var(text):
    m = _VAR.match(text.strip())
    if not m:
        return None
    mods, space, align, vec, typ, name, dims, init = m.groups()
    width = _SIZES.get(typ, 1) * (int(vec[1]) if vec else 1)
    count = 1
    unsized = False
    for d in re.findall(r"\[\s*(\d*)\s*\]", dims or ""):
        if d == "":
            unsized = True
        else:
            count *= int(d)
    values = None
    if init is not None:
        nums = re.findall(
            r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|-?0[xX][0-9a-fA-F]+|-?\d+\.?\d*(?:[eE][-+]?\d+)?", init
        )
        values = [_number(n).value for n in nums]
        if unsized:
            count, unsized = len(values), False
    return Var(
        name,
        space,
        typ,
        int(align) if align else width,
        0 if unsized else width * count,
        count,
        values,
        "extern" in (mods or ""),
    )


def _number(tok):
    t = tok.strip()
    neg = t.startswith("-")
    body = t[1:] if neg else t
    if body[:2] in ("0f", "0F"):
        import struct

        v = struct.unpack("<f", int(body[2:], base=16).to_bytes(4, "little"))[0]  # noqa: FURB166
        return Imm(-v if neg else v, 32)
    if body[:2] in ("0d", "0D"):
        import struct

        v = struct.unpack("<d", int(body[2:], base=16).to_bytes(8, "little"))[0]  # noqa: FURB166
        return Imm(-v if neg else v, 64)
    body = body.rstrip("uUlL") if body[:2].lower() != "0x" else body.rstrip("uU")
    if body[:2].lower() == "0x":
        v = int(body, 16)
    elif re.fullmatch(r"0[0-7]+", body):
        v = int(body, 8)
    elif re.fullmatch(r"\d+", body):
        v = int(body)
    else:
        v = float(body)
    return Imm(-v if neg else v)


_NUM = re.compile(r"^-?(0[fFdD][0-9a-fA-F]+|0[xX][0-9a-fA-F]+[uU]?|\d+\.?\d*(?:[eE][-+]?\d+)?[uU]?)$")


def parse_operand(tok):
    t = tok.strip()
    if t.startswith("["):
        inner = t[1:-1].strip()
        m = re.fullmatch(r"([%\w$.]+)\s*(?:\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+)))?", inner)
        if m:
            base = Reg(m.group(1)) if m.group(1).startswith("%") else Sym(m.group(1))
            return Addr(base, int(m.group(2).replace(" ", ""), 0) if m.group(2) else 0)
        if _NUM.match(inner):
            return Addr(None, _number(inner).value)
        raise ValueError(f"cannot read address {t}")
    if t.startswith("{"):
        return Vec(tuple(parse_operand(x) for x in _split_commas(t[1:-1])))
    if "|" in t:
        return Vec(tuple(Reg(x.strip()) for x in t.split("|")))  # d|p pair of shfl/setp
    if t.startswith("%") or t == "_":
        return Reg(t)
    if t.startswith("!%"):
        return ("not", Reg(t[1:]))
    if _NUM.match(t):
        return _number(t)
    return Sym(t)


def _split_commas(s):
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [x.strip() for x in out]


def _parse_instr(text, line, file):
    guard = None
    m = re.match(r"@(!?)(%[\w.]+)\s+", text)
    if m:
        guard = (Reg(m.group(2)), m.group(1) == "!")
        text = text[m.end() :]
    parts = text.split(None, 1)
    opcode = parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    ins = Instr(opcode, tuple(opcode.split(".")), [], guard, line, file, text)
    if opcode.startswith("call"):
        groups = re.findall(r"\(([^()]*)\)", rest)
        names = [x.strip() for x in re.sub(r"\([^()]*\)", " ", rest).split(",") if x.strip()]
        rets = [] if rest.lstrip().startswith(names[0]) else [x.strip() for x in groups.pop(0).split(",") if x.strip()]
        args = [x.strip() for x in groups[0].split(",") if x.strip()] if groups else []
        ins.call = (rets, names[0], args)
        return ins
    try:
        ins.operands = [parse_operand(x) for x in _split_commas(rest)] if rest.strip() else []
    except ValueError:  # an operand form we do not model (texture coordinates...): refused when run
        ins.operands = None
    return ins


def _header(text, entry_words):
    """`.visible .entry name(.param ...)` / `.func (.param .b32 r) name(...)` -> Function."""
    entry = ".entry" in text
    after = text.split(".entry" if entry else ".func", 1)[1].strip()
    returns = []
    if after.startswith("("):
        close = after.index(")")
        returns = [parse_var(p) for p in _split_commas(after[1:close])]
        after = after[close + 1 :].strip()
    m = re.match(r"([\w$]+)\s*(?:\((.*?)\))?", after, re.DOTALL)
    name = m.group(1)
    params = [parse_var(p) for p in _split_commas(m.group(2) or "")]
    return Function(name, entry, [p for p in params if p], [r for r in returns if r])


# ----------------------------------------------------------------------------- module
def parse(text: str) -> Module:
    mod = Module()
    fn, depth, pending = None, 0, None
    line = file = 0
    for kind, s in _statements(text):
        if kind == "file":
            m = re.match(r"\.file\s+(\d+)\s+\"([^\"]*)\"", s)
            if m:
                mod.files[int(m.group(1))] = m.group(2)
        elif kind == "loc":
            m = re.match(r"\.loc\s+(\d+)\s+(\d+)", s)
            if m and int(m.group(2)):  # line 0 = no source line: keep the last one
                file, line = int(m.group(1)), int(m.group(2))
        elif kind == "{":
            if depth == 0:
                fn, pending = pending, None
                if fn is None:
                    raise ValueError("PTX: a '{' outside any function")
                mod.functions[fn.name] = fn
                line = 0
            depth += 1
        elif kind == "}":
            depth -= 1
            if depth == 0:
                fn = None
        elif kind == "label":
            if fn is not None:
                fn.labels[s] = len(fn.body)
        elif depth == 0:
            if re.search(r"\.(entry|func)\b", s) and not s.lstrip().startswith((".global", ".shared", ".const")):
                pending = _header(s, None)
                if s.rstrip().endswith(")") and ".extern" in s.split(".func")[0]:
                    pending.defined = False
                    mod.functions.setdefault(pending.name, pending)
                    pending = None
            elif s.startswith((".version", ".target", ".address_size", ".pragma")):
                pass
            else:
                v = parse_var(s)
                if v is not None:
                    mod.vars.append(v)
                elif pending is not None:  # `.maxntid 256` after the header, before `{`
                    pass
        else:
            if s.startswith(".reg"):
                m = re.match(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)$", s, re.DOTALL)
                typ = m.group(1)
                for item in _split_commas(m.group(2)):
                    r = re.fullmatch(r"(%?[\w$]+)<(\d+)>", item)
                    names = [f"{r.group(1)}{i}" for i in range(int(r.group(2)))] if r else [item]
                    for nm in names:
                        fn.regs[nm] = typ
            elif s.startswith((".local", ".shared", ".param", ".const", ".global")):
                v = parse_var(s)
                if v is not None:
                    fn.vars.append(v)
            elif s.startswith((".pragma", ".maxnreg", ".maxntid", ".reqntid", ".minnctapersm")):
                pass
            else:
                fn.body.append(_parse_instr(s, line, file))
    return mod
