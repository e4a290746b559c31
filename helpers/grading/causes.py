"""Why answers failed, grouped: a family per grader message, and examples with no student in them.

Two students who made the same mistake get messages that differ only in numbers (their seeds
draw other inputs), in the line of their own code the message quotes, or in which thread the
tracer caught first. ``family`` strips those, so the class report can count mistakes rather than
messages:

- a tracer verdict ("the CPU tracer found a race. ...") is its verdict: ``tracer:race``;
- an answer that raised is its exception type: ``raised:ZeroDivisionError``;
- tampering is one family;
- any other message is its text with numbers, quoted code, quoted strings and paths replaced
  by placeholders ("your function with n=#, t=# returned # but should return # ...").

``Redactor`` takes every student's id and name out of an example message before the report
shows it: the report's examples say what went wrong, never whose answer it was.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_KEY = 200  # characters of a shaped message kept as its family key
MAX_EXAMPLE = 600  # characters of an example message shown

_TRACER = re.compile(r"the CPU tracer found an? ([^.]+)\.")
_RAISED = re.compile(r"\braised ([A-Za-z_][\w.]*)")
_FURTHER_RUN = re.compile(r"\s*\(graded in a further run[^)]*\)\s*$")
_CODE = re.compile(r"`[^`]*`")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+){2,}[\\/]?")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[,_]\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_RANGE = re.compile(r"#\s*[–-]\s*#")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
# Added to every student's name by an LMS's download: Moodle's "Alice Smith_5512_assignsubmission_file_",
# Canvas's "smithalice_LATE_12345_67890". They name nobody.
LMS_WORDS = frozenset({"assignsubmission", "file", "onlinetext", "late"})
_EXCEPTIONS = ("Error", "Exception", "Exit", "Interrupt", "Warning")


class Family(NamedTuple):
    """A family of failure messages: ``key`` groups them, ``label`` is what the report shows."""

    key: str
    label: str


def shape(message: str) -> str:
    """The message with what changes from one student to the next replaced by placeholders."""
    s = _FURTHER_RUN.sub("", str(message))
    s = _CODE.sub("`…`", s)
    s = _QUOTED.sub("'…'", s)
    s = _PATH.sub("<path>", s)
    s = _NUMBER.sub("#", s)
    s = _RANGE.sub("#", s)
    return _SPACE.sub(" ", s).strip()


def family(message: str, status: str) -> Family:
    """The family a row's message belongs to (see the module's docstring)."""
    text = str(message or "")
    if status == "tampering":
        return Family("tampering", "the notebook changed the grading machinery (tampering)")
    m = _TRACER.search(text)
    if m:
        kind = m.group(1).strip()
        return Family(f"tracer:{kind}", f"the CPU tracer found {'an' if kind[:1] in 'aeiou' else 'a'} {kind}")
    m = _RAISED.search(text)
    if m and (status == "error" or m.group(1).endswith(_EXCEPTIONS)):
        return Family(f"raised:{m.group(1)}", f"the answer raised {m.group(1)}")
    shaped = shape(text) or "(no message)"
    key = f"{status}:{shaped[:MAX_KEY]}"
    return Family(key, shaped if len(shaped) <= MAX_KEY else shaped[: MAX_KEY - 1] + "…")


def tokens(texts) -> set[str]:
    """The lower-case words of some texts (``Alice_Smith`` is one word; ``split("_")`` its pieces)."""
    return {t.lower() for text in texts for t in _WORD.findall(str(text or ""))}


def vocabulary(rows) -> frozenset:
    """Words used in the messages of students whose own id and name do not contain them: the
    grader's words, not anyone's name. ``rows``: (student id, name, message) triples."""
    seen: set = set()
    for student, name, message in rows:
        own = tokens((student, name))
        own |= {p for t in own for p in t.split("_")}
        mine = tokens((message,))
        mine |= {p for t in mine for p in t.split("_")}
        seen |= mine - own
    return frozenset(seen)


class Redactor:
    """Replaces every student's id and name, and the words and long numbers in them, by
    ``<student>``; paths by ``<path>``. Built once per class from (id, name as handed in) pairs;
    one pass over a message's words, so it stays fast on every message of a large class.

    ``vocabulary``: words that are not a name here, though part of one ("out" of a folder named
    ``out_of_bounds``, "index" of ``Index``): the words of other students' messages (``vocabulary``
    below), and the words LMS downloads add to every name (``LMS_WORDS``). They stay, so a name that
    is also a word neither garbles examples nor splits families."""

    WORD = 3  # a piece of a name ("Smith" in "Alice_Smith") this long or longer is taken out anywhere
    DIGITS = 5  # a number (a student number) this long or longer too; shorter numbers are the grader's

    def __init__(self, people, vocabulary=frozenset()):
        self.whole, self.pieces = set(), set()
        for person in people:
            for token in tokens(person):
                if self._keep(token, 2):
                    self.whole.add(token)
                self.pieces.update(p for p in token.split("_") if self._keep(p, self.WORD))
        self.whole -= vocabulary | LMS_WORDS
        self.pieces -= vocabulary | LMS_WORDS

    def _keep(self, t: str, shortest: int) -> bool:
        return len(t) >= (self.DIGITS if t.isdigit() else shortest)

    def _word(self, m) -> str:
        token = m.group(0)
        if token.lower() in self.whole:
            return "<student>"
        if "_" not in token:
            return "<student>" if token.lower() in self.pieces else token
        return "_".join("<student>" if p.lower() in self.pieces else p for p in token.split("_"))

    def __call__(self, text: str, limit: int | None = MAX_EXAMPLE) -> str:
        s = _WORD.sub(self._word, _PATH.sub("<path>", str(text or "")))
        return s if limit is None or len(s) <= limit else s[: limit - 1] + "…"
