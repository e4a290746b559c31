"""Who each graded student is in the LMS (helpers/grading/roster.py): a Canvas or Moodle export
read as a roster, the identity in Canvas's download names, and no grade placed on a student the
roster does not tell apart."""

import pytest

from helpers.grading.roster import Roster, RosterError, guess, match, read_roster

# A Canvas gradebook export, as Canvas writes it: the points row second, an assignment column, the test student.
CANVAS_EXPORT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (5501)\n"
    "    Points Possible,,,,,10\n"
    '"Smith, Alice",12345,S001,asmith,CS-101-A,7\n'
    '"Berg, Bob",12346,S002,bberg,CS-101-B,\n'
    '"Liang, Chen",12347,S003,cliang,CS-101-A,9\n'
    '"Student, Test",99999,,,CS-101-A,\n'
)
# Moodle's grade export (plain text file), user columns first.
MOODLE_EXPORT = (
    "First name,Last name,ID number,Institution,Department,Email address,Assignment: Lab 1 (Real)\n"
    "Alice,Smith,2024001,Uni,CS,alice.smith@uni.example,7.00\n"
    "Bob,Berg,2024002,Uni,CS,bob.berg@uni.example,-\n"
)


def _roster(tmp_path, text, name="roster.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_roster(path)


def test_a_canvas_export_is_a_roster(tmp_path):
    roster = _roster(tmp_path, CANVAS_EXPORT)
    assert [r["name"] for r in roster.rows] == ["Smith, Alice", "Berg, Bob", "Liang, Chen"]  # no points row, no test
    assert roster.rows[0] == {
        "name": "Smith, Alice",
        "canvas_id": "12345",
        "sis_user_id": "S001",
        "sis_login_id": "asmith",
        "section": "CS-101-A",
    }


def test_canvas_students_are_found_by_download_name_login_or_name(tmp_path):
    roster = _roster(tmp_path, CANVAS_EXPORT)
    found = match(
        {"smithalice_12345_777": "smithalice_12345_777", "bberg": "bberg", "Chen_Liang": "Chen Liang"}, roster
    )
    ids = {s: (p.canvas_id, p.section, p.source) for s, p in found.identities.items()}
    assert ids == {
        "smithalice_12345_777": ("12345", "CS-101-A", "roster"),
        "bberg": ("12346", "CS-101-B", "roster"),
        "Chen_Liang": ("12347", "CS-101-A", "roster"),
    }
    assert found.unmatched == () and found.absent == () and found.notes == ()


def test_moodle_students_are_found_by_email_or_id_number(tmp_path):
    roster = _roster(tmp_path, MOODLE_EXPORT)
    found = match({"alice.smith@uni.example": "alice.smith@uni.example", "2024002": "2024002"}, roster)
    people = found.identities
    assert (people["alice.smith@uni.example"].id_number, people["2024002"].email) == ("2024001", "bob.berg@uni.example")
    assert (people["2024002"].first, people["2024002"].last) == ("Bob", "Berg")


def test_the_submission_column_names_the_graders_id(tmp_path):
    roster = _roster(tmp_path, "submission,email\nteam_7,lead@uni.example\n")
    assert match({"team_7": "team 7"}, roster).identities["team_7"].email == "lead@uni.example"


def test_two_rows_one_student_or_one_row_two_students_place_no_grade(tmp_path):
    roster = _roster(
        tmp_path, "name,email\nLee Kim,lee1@uni.example\nLee Kim,lee2@uni.example\nAna Ruiz,ana@uni.example\n"
    )
    found = match({"Lee_Kim": "Lee Kim", "Ana_Ruiz": "Ana Ruiz", "ana@uni.example": "ana@uni.example"}, roster)
    assert set(found.unmatched) == {"Lee_Kim", "Ana_Ruiz", "ana@uni.example"}
    assert all(p.source != "roster" and not p.email.startswith("lee") for p in found.identities.values())
    assert any("fits 2 rows" in n for n in found.notes)
    assert any("Ana_Ruiz and ana@uni.example fit the same row" in n for n in found.notes)


def test_students_not_graded_and_not_on_the_roster_are_named(tmp_path):
    roster = _roster(tmp_path, CANVAS_EXPORT)
    found = match({"bberg": "bberg", "zed": "zed"}, roster)
    assert found.unmatched == ("zed",)
    assert found.absent == ("Smith, Alice", "Liang, Chen")
    assert any("1 graded student(s) not on roster.csv" in n and "zed" in n for n in found.notes)
    assert any("2 student(s) on roster.csv handed in nothing" in n for n in found.notes)


def test_without_a_roster_the_name_says_what_it_can():
    assert guess("smithalice_LATE_12345_67890", "smithalice_LATE_12345_67890").canvas_id == "12345"
    assert guess("x", "Alice Smith_5512_assignsubmission_file_").name == "Alice Smith"
    assert guess("a", "a@uni.example").email == "a@uni.example"
    plain = guess("Alice_Smith", "Alice Smith")
    assert (plain.name, plain.email, plain.canvas_id) == ("Alice Smith", "", "")
    assert match({"a": "a"}, None).identities["a"] == guess("a", "a")


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "empty"),
        ("colour,size\nred,4\n", "names none of the columns"),
    ],
)
def test_an_unusable_roster_is_a_usage_error(tmp_path, text, words):
    with pytest.raises(RosterError, match=words):
        _roster(tmp_path, text)


def test_a_roster_that_is_not_utf8_or_not_there_is_a_usage_error(tmp_path):
    (tmp_path / "latin.csv").write_bytes("name\nJos\xe9\n".encode("latin-1"))
    with pytest.raises(RosterError, match="not UTF-8"):
        read_roster(tmp_path / "latin.csv")
    with pytest.raises(RosterError, match="No such file"):
        read_roster(tmp_path / "missing.csv")


def test_a_byte_order_mark_and_header_case_do_not_matter(tmp_path):
    (tmp_path / "bom.csv").write_bytes("\ufeffEMAIL ADDRESS,Submission\nx@uni.example,x\n".encode())
    assert read_roster(tmp_path / "bom.csv").rows == ({"email": "x@uni.example", "submission": "x"},)
    assert isinstance(read_roster(tmp_path / "bom.csv"), Roster)
