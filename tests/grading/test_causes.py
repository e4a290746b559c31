"""Failure messages grouped into families, and examples with no student in them
(helpers/grading/causes.py): the class report counts mistakes, not messages."""

from helpers.grading.causes import MAX_EXAMPLE, Redactor, family, shape, vocabulary


def test_a_tracer_verdict_is_its_family_whatever_the_thread_and_line():
    a = "the CPU tracer found a race. Race on out[1]: thread 0 of block 0 wrote it at line 64 (`out[i + 1] = x`)"
    b = "the CPU tracer found a race. Race on hist[15]: thread 1 of block 3 read it at line 120 (`hist[d[i]] += 1`)"
    assert family(a, "failed") == family(b, "failed")
    assert family(a, "failed").key == "tracer:race"
    oob = family("the CPU tracer found an out-of-bounds access. Out of bounds: thread 96 read x[96]", "failed")
    assert oob.key == "tracer:out-of-bounds access" and oob.label == "the CPU tracer found an out-of-bounds access"


def test_an_exception_is_its_family():
    a = family("your function with n=1, t=256 raised ZeroDivisionError: integer division or modulo by zero", "error")
    b = family("your function with n=77, t=32 raised ZeroDivisionError: division by zero; fix it", "error")
    c = family("your function with n=1, t=256 raised TypeError: unsupported operand", "error")
    assert a == b and a.key == "raised:ZeroDivisionError" and c.key == "raised:TypeError"


def test_numbers_and_quoted_code_do_not_split_a_family_but_the_diagnosis_does():
    floor1 = "your function with n=1, t=256 returned 0 but should return 1 (201 of 204 wrong): n // t rounds down"
    floor2 = "your function with n=1000, t=32 returned 31 but should return 32 (3 of 204 wrong): n // t rounds down"
    spare = "your function with n=256, t=256 returned 2 but should return 1 (1 of 204 wrong): n // t + 1 adds a spare"
    assert family(floor1, "failed") == family(floor2, "failed")
    assert family(floor1, "failed") != family(spare, "failed")
    assert family(floor1, "failed").label.startswith("your function with n=#, t=# returned # but should return #")
    # the same words under another status are another family (a wrong value is not a crash)
    assert family(floor1, "failed") != family(floor1, "error")


def test_shape_replaces_what_changes_between_students():
    s = shape("elements 35–113 of out (1,000,000 of them) at `out[i] = a[i]` in '/home/x/alice.py' 3.5e-3 x[-1]")
    assert s == "elements # of out (# of them) at `…` in '…' # x[#]"
    assert shape("graded (graded in a further run without cell 3, which stopped the notebook)") == "graded"
    assert shape("not graded: /tmp/grade-1/students/alice/02.ipynb is damaged") == "not graded: <path> is damaged"


def test_tampering_is_one_family():
    a = family("no credit: the notebook changed the grading machinery in cell 6 (np.allclose replaced).", "tampering")
    b = family("no credit: the notebook changed the grading machinery (helpers patched).", "tampering")
    assert a == b and a.key == "tampering"


def test_the_redactor_takes_out_ids_names_their_words_and_long_numbers():
    redact = Redactor([("Alice_Smith_1234567", "Alice Smith (1234567)"), ("li_wu", "Li Wu")])
    text = "Alice Smith's alice_smith_1234567 file /tmp/grade-x/Alice/02.ipynb id 1234567, Li Wu and li_wu: x[128]"
    got = redact(text)
    for word in ("Alice", "Smith", "1234567", "alice_smith", "Li Wu", "li_wu", "/tmp"):
        assert word.lower() not in got.lower(), got
    assert got.count("<student>") >= 7 and "<path>" in got
    assert "x[128]" in got  # short numbers are the grader's, never a student's
    assert redact("the CPU tracer found a race") == "the CPU tracer found a race"


def test_the_redactor_keeps_words_that_only_contain_a_name():
    redact = Redactor([("Ana", "Ana")])
    assert redact("the banana analysis by Ana") == "the banana analysis by <student>"
    assert redact("ana_helper is not defined") == "<student>_helper is not defined"


def test_an_example_is_cut_to_its_limit():
    got = Redactor([])("x" * (MAX_EXAMPLE + 50))
    assert len(got) == MAX_EXAMPLE and got.endswith("…")
    assert len(Redactor([])("y" * (MAX_EXAMPLE + 50), limit=None)) == MAX_EXAMPLE + 50


def test_words_of_other_students_messages_are_not_names():
    rows = [
        ("out_of_bounds", "out_of_bounds", "elements 3-9 of out were never written (3 of 9 inputs wrong)"),
        ("wrong_index", "wrong_index", "elements 3-9 of out were never written (3 of 9 inputs wrong)"),
        ("bob", "bob", "elements 3-9 of out were never written (3 of 9 inputs wrong)"),
    ]
    words = vocabulary(rows)
    assert {"out", "wrong", "elements"} <= words and "bob" not in words
    redact = Redactor([(s, n) for s, n, _ in rows], words)
    assert redact(rows[0][2]) == rows[0][2]  # "out" and "wrong" are the grader's words here
    assert redact("bob's out_of_bounds") == "<student>'s <student>"  # whole ids always go


def test_the_words_an_lms_download_adds_name_nobody():
    people = [
        (f"{n}_55{i:02d}_assignsubmission_file_", f"{n}_55{i:02d}_assignsubmission_file_")
        for i, n in enumerate(["Alice Smith", "Bob Berg", "Chen Liang", "Dana Novak", "Emeka Okafor"])
    ]
    redact = Redactor(people)
    assert redact("the notebook file of Alice Smith") == "the notebook file of <student> <student>"
