"""The residual-leak guard: a missed identifier sends the document to quarantine."""

import dataclasses
import random
import re

import pytest
from shipped_path import run_files

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.leak_guard import (
    LeakDetectedError,
    Suspect,
    find_leaks,
    header_values,
    suspects_of,
    written_regions,
)
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
    Replacement,
    TaggedDocument,
)
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.value_search import (
    _ASCII_TWINS,
    SearchText,
    _alnum_count_and_digits,
    _Needle,
    _needle,
    value_pattern,
)

KEY = b"leak-guard-test-key-0123456789ab"


def _header_doc(text, doc_id="msg1-1"):
    return ClinicalDocument(
        doc_id,
        text,
        "hl7",
        dictionary=PatientDictionary(
            (
                DictionaryEntry("Andersen", "PATIENT", "PID.5.1"),
                DictionaryEntry("617-555-0142", "PHONE", "PID.13"),
            ),
            person_key="mrn:HOSP:1",
        ),
    )


@pytest.mark.parametrize(
    "text, value, leaked",
    [
        ("call 6175550142 today", "617-555-0142", True),
        ("call (617) 555 0142 today", "617-555-0142", True),
        ("call 617-555-01429 today", "617-555-0142", False),
        ("PT ANDERSEN STABLE", "Andersen", True),
        ("Andersenville clinic", "Andersen", False),
        ("seen by J. Smith", "J.", False),  # initials are not searched for
        # A range of short runs keeps its runs: written with other separators
        # it is the value, its digits inside a blood pressure are not.
        ("on abx 1/10-1/17 then", "1/10 - 1/17", True),
        ("on abx 1/10 to 1/17 then", "1/10 - 1/17", False),
        ("bp range 151/110-117/41", "1/10 - 1/17", False),
        ("BP 111/61-120/68.", "11/16 - 11/20", False),
        ("seen 01172019", "01/17/2019", True),  # a run of 4: read loosely
    ],
)
def test_when_value_in_text_then_found_with_tolerant_matching(text, value, leaked):
    assert bool(find_leaks(text, [Suspect(value, "PHONE")])) is leaked


def test_when_match_lies_inside_a_surrogate_then_not_a_leak():
    text = "Dr. Andersen saw the patient"
    assert find_leaks(text, [Suspect("Andersen", "PATIENT")], [(4, 12)]) == {}
    assert find_leaks(text, [Suspect("Andersen", "PATIENT")], [(0, 3)])


def test_when_a_surrogate_plus_untouched_initial_spell_a_value_then_not_a_leak():
    # "Hernandez" is a surrogate here; "M.D." was never PHI. The original
    # "Hernandez M." (found elsewhere) is not what stands in the output.
    text = "followed by Hernandez M.D. at clinic"
    regions = [(12, 21)]
    assert find_leaks(text, [Suspect("Hernandez M.", "DOCTOR")], regions) == {}
    # Three letters of the original outside the surrogate are a leak.
    text = "followed by Hernandez Mos. at clinic"
    assert find_leaks(text, [Suspect("Hernandez Mos.", "DOCTOR")], regions)


def test_when_untouched_digits_and_a_surrogate_spell_a_digit_value_then_not_a_leak():
    # Found in a 50,000-note benchmark run: "Npn 11-7 9/14" (a nursing shift,
    # then a date) became "Npn 11-7 12/14", and the replaced date 11/7/12,
    # matched digit by digit across separators, reads "11-7 12".
    text = "Npn 11-7 12/14 \n9/11/08 found by her husband"
    regions = [(9, 14), (16, 23)]  # the surrogate dates
    assert find_leaks(text, [Suspect("11/7/12", "DATE")], regions) == {}
    # The same digits standing clear of any surrogate are the original.
    text = "Npn 11-7 12 and 12/14 \n9/11/08 found by her husband"
    assert find_leaks(text, [Suspect("11/7/12", "DATE")], [(16, 21), (23, 30)])
    # ... also right after a surrogate, and an ID or phone the same way.
    text = "call 881 555 0147/617 555 0142"
    assert find_leaks(text, [Suspect("617-555-0142", "PHONE")], [(5, 17)]) == {
        "PHONE": 1}
    assert find_leaks("MRN 55501 42", [Suspect("5550142", "MEDICALRECORD")],
                      [(4, 9)]) == {}


class _SkipsPatientNames(Rewriter):
    """A rewrite step with a bug: it leaves PATIENT spans as they are."""

    def rewrite(self, tagged, person_key=None, avoid=None):
        kept = tuple(s for s in tagged.spans if s.label != "PATIENT")
        return super().rewrite(dataclasses.replace(tagged, spans=kept), person_key,
                               avoid)


def _hl7_message(control_id, mrn, surname, text):
    """One ORU message whose PID names the patient and whose OBX holds ``text``."""
    return "\r".join([
        "MSH|^~\\&|COPATH|HOSP|DEID|RESEARCH|20060722101500||ORU^R01^ORU_R01|"
        f"{control_id}|P|2.5",
        f"PID|1||{mrn}^^^HOSP^MR||{surname}^ERIK||19610302|M",
        "OBR|1|4471|SP06-2210|88305^SURGICAL PATHOLOGY^CPT",
        f"OBX|1|TX|22034-3^Pathology report^LN||{text}||||||F",
    ]) + "\r"


def _hl7_file(tmp_path, *messages):
    path = tmp_path / "feed.hl7"
    path.write_bytes("".join(messages).encode("ascii"))
    return [str(path)]


def test_when_a_step_lets_a_header_name_through_then_quarantined_at_leak_guard(
        tmp_path):
    # run's own path; the buggy rewrite skips ANDERSEN, which the header knows.
    patterns = _hl7_file(
        tmp_path,
        _hl7_message("MSG1", "4410221", "ANDERSEN",
                     "PT ANDERSEN STABLE, SEEN 7/22/2006."),
        _hl7_message("MSG2", "4410987", "NILSSON", "PT STABLE, SEEN 7/23/2006."),
    )
    documents, quarantine = run_files(tmp_path, patterns,
                                      TaggerConfig(detectors=("rules",)),
                                      _SkipsPatientNames("surrogate", KEY))
    assert [("ANDERSEN" in d["text"], "SEEN" in d["text"]) for d in documents] == [
        (False, True)]
    assert [(stage, error_type, "ANDERSEN" in message)
            for _id, stage, error_type, message in quarantine] == [
        ("leak_guard", "LeakDetectedError", False)]


def test_when_dictionary_runs_then_same_document_passes_the_guard(tmp_path):
    patterns = _hl7_file(tmp_path, _hl7_message(
        "MSG1", "4410221", "ANDERSEN", "PT ANDERSEN STABLE, SEEN 7/22/2006."))
    documents, quarantine = run_files(
        tmp_path, patterns, TaggerConfig(detectors=("rules", "dictionary")),
        Rewriter("surrogate", KEY))
    assert [("ANDERSEN" in d["text"], "STABLE" in d["text"]) for d in documents] == [
        (False, True)]
    assert quarantine == []


def test_when_policy_keeps_a_value_then_guard_does_not_flag_it():
    rewriter = Rewriter("surrogate", KEY)
    doc = ClinicalDocument("n", "45 year old seen", "text")
    tagged = TaggedDocument(doc, (PhiSpan(0, 2, "AGE", "rules:age"),))
    result = rewriter.rewrite(tagged)
    assert result.text == doc.text  # ages under 90 are kept
    assert rewriter.guard(tagged, result) is result


def test_when_replacement_equals_original_unexpectedly_then_raises():
    rewriter = Rewriter("redact", KEY)
    doc = ClinicalDocument("n", "Andersen seen", "text")
    tagged = TaggedDocument(doc, ())
    result = rewriter.rewrite(tagged)
    leaky = TaggedDocument(
        ClinicalDocument(
            "n",
            "Andersen seen",
            "text",
            dictionary=PatientDictionary(
                (DictionaryEntry("Andersen", "PATIENT", "PID.5.1"),)
            ),
        ),
        (),
    )
    with pytest.raises(LeakDetectedError, match="PATIENT x1"):
        rewriter.guard(leaky, result)


def test_when_operator_echoes_the_original_then_guard_still_catches_it():
    rewriter = Rewriter("redact", KEY)
    doc = ClinicalDocument("n", "Call 617-555-0142 now", "text")
    span = PhiSpan(5, 17, "PHONE", "rules:phone")
    echoed = rewriter.rewrite(TaggedDocument(doc, ()))  # text unchanged
    broken = echoed.__class__(
        **{
            **{
                f: getattr(echoed, f)
                for f in (
                    "doc_id",
                    "person_id",
                    "source",
                    "text",
                    "confidence",
                    "metadata",
                    "pipeline_version",
                )
            },
            "replacements": (Replacement(span, "617-555-0142", "617-555-0142"),),
        }
    )
    with pytest.raises(LeakDetectedError, match="PHONE x1"):
        rewriter.guard(TaggedDocument(doc, (span,)), broken)


@pytest.mark.parametrize(
    "label, value, policy, kept",
    [
        ("AGE", "45", "safe-harbor", True),
        ("AGE", "92", "safe-harbor", False),
        ("DATE", "1992", "safe-harbor", True),
        ("DATE", "7/22/1992", "safe-harbor", False),
        ("DATE", "7/22/1992", "limited-dataset", True),
        ("CITY", "Boston", "limited-dataset", True),
        ("PATIENT", "Boston", "limited-dataset", False),
    ],
)
def test_when_policy_decides_then_kept_values_are_not_suspects(
    label, value, policy, kept
):
    from deid_pipeline.leak_guard import policy_keeps

    assert policy_keeps(label, value, policy) is kept


# SearchText must find exactly what value_pattern's regex finds: it replaces
# one compiled regex per value (the gateway's largest CPU cost) with str.find.

_ALL_CHARS = "".join(map(chr, range(0x110000)))
_EDGE_ALPHABET = (
    "abcsikAB SIK" "0123456789" " \t\n\u00a0\u2003" "-./()+,_@'"
    "\u0130\u0131\u017f\u212a\u03a3\u03c3\u03c2\u00e9\u00c9\u0663\u00b2\u200b"
)


def _regex_spans(text, value):
    pattern = value_pattern(value)
    return [] if pattern is None else [m.span() for m in pattern.finditer(text)]


def _random_value(rng, text):
    kind = rng.random()
    if kind < 0.5 and text:  # a piece of the text, so matches are common
        start = rng.randrange(len(text))
        value = text[start:start + rng.randint(1, 12)]
    elif kind < 0.75:
        digits = "0123456789-. ()"
        value = "".join(rng.choice(digits) for _ in range(rng.randint(5, 14)))
    else:
        value = "".join(rng.choice(_EDGE_ALPHABET) for _ in range(rng.randint(1, 10)))
    if rng.random() < 0.3:
        value = value.swapcase()
    return value


def test_when_searching_values_then_matches_are_exactly_the_regex_matches():
    rng = random.Random(20240611)
    for _ in range(1500):
        text = "".join(rng.choice(_EDGE_ALPHABET) for _ in range(rng.randint(0, 60)))
        search = SearchText(text)
        for _ in range(8):
            value = _random_value(rng, text)
            assert search.matches(value) == _regex_spans(text, value), (text, value)


@pytest.mark.parametrize("value, needle", [
    ("1/10 - 1/17", _Needle("110117", groups=(1, 2, 1, 2))),
    ("12-3-45", _Needle("12345", groups=(2, 1, 2))),
    ("06/28/1979", _Needle("06281979")),
    ("(617) 555-0143", _Needle("6175550143")),
    ("Dr. Smith", _Needle("", ("Dr.", "Smith"), ("dr.", "smith"), True, True,
                          ("smith",))),
    ("Mary-Ann  O'Neil ", _Needle("", ("Mary-Ann", "O'Neil"), ("mary-ann", "o'neil"),
                                  True, True, ())),
    ("(İlker Şahin)", _Needle("", ("(İlker", "Şahin)"), (), False, False, ())),
    ("J.", None),
])
def test_a_value_s_needle_is_the_one_its_definition_gives(value, needle):
    """Field by field, as _Needle documents them (a needle is built positionally)."""
    assert _needle(value) == needle
    assert _needle(value) is None or type(_needle(value)) is _Needle


def test_when_many_short_run_values_then_one_pass_equals_the_regex():
    """The bulk path (texts over 100,000 characters) checks runs as find does."""
    rng = random.Random(7)
    values = [f"{rng.randint(1, 12)}/{rng.randint(1, 31)} - "
              f"{rng.randint(1, 12)}/{rng.randint(1, 31)}" for _ in range(300)]
    pieces = []
    while sum(map(len, pieces)) < 120_000:
        a, b, c, d = (rng.randint(1, 199) for _ in range(4))
        pieces.append(rng.choice([f"bp {a}/{b}-{c}/{d}. ", f"{a % 12 + 1}/{b % 28 + 1}"
                                  f"{rng.choice(['-', ' - ', ' to '])}"
                                  f"{c % 12 + 1}/{d % 28 + 1} ", "stable. "]))
    text = "".join(pieces)
    found = SearchText(text).matches_all(values)
    assert found == [_regex_spans(text, v) for v in values]
    assert any(found) and not all(found)


def test_a_header_plan_keeps_every_value_that_matches_in_order():
    rng = random.Random(20261121)
    for _ in range(600):
        text = "".join(rng.choice(_EDGE_ALPHABET) for _ in range(rng.randint(0, 60)))
        values = {_random_value(rng, text): "PATIENT" for _ in range(12)}
        plan = header_values(PatientDictionary(tuple(
            DictionaryEntry(v, label, "PID.5") for v, label in values.items())),
            "safe-harbor")
        search = SearchText(text)
        kept = search.present(plan)
        assert kept == [hv for hv in plan if hv in kept]  # plan order
        matching = [hv for hv in plan if hv[2] is not None and search.find(hv[2])]
        assert set(matching) <= set(kept), text


@pytest.mark.parametrize(
    "text, value",
    [
        ("Seen by DR. SMITH, JOHN today", "Smith, John"),
        ("smith,\n\t john and Smith,John", "SMITH, JOHN"),
        ("x_smith smith_ 1smith smith1 smith", "smith"),
        ("SMİTH and ſmith and \u212aline", "smith"),
        ("Kline and \u212aLINE", "kline"),
        ("call 617-555-0142, 617.555.0142 or 1617-555-0142", "(617) 555-0142"),
        ("id 12 345 678\u00a09 and 1234567890", "123456789"),
        ("\u0661\u0662\u0663\u0664\u0665 and 12345", "\u0661\u0662\u0663\u0664\u0665"),
        ("Élodie ÉLODIE élodie", "Élodie"),
        ("aaa aaa aaa", "aaa aaa"),
        # Word values are first looked up among the text's words: a word
        # glued to "_", an apostrophe, a hyphen or digits is no such word.
        ("x_moss moss_ moss's o'moss moss-jones moss2 2moss MOSS", "moss"),
        ("o'brien o'brien's and O'BRIEN", "O'Brien"),
        ("moss_ and moss_x", "moss_"),
        ("dr. moss, jr. and Dr.Moss", "Dr. Moss"),
        ("room 12b and Room  12B\n", "room 12b"),
        ("mossy moss\u00a0landing moss\tlanding", "moss landing"),
    ],
)
def test_when_value_has_case_space_or_unicode_twists_then_same_as_regex(text, value):
    assert SearchText(text).matches(value) == _regex_spans(text, value)
    assert SearchText(text).matches(value)  # each case has a match


def test_when_folding_text_then_only_the_regex_case_twins_become_ascii():
    twins = {}
    for ch in map(chr, range(0x21, 0x7F)):
        for m in re.finditer(re.escape(ch), _ALL_CHARS[0x80:], re.IGNORECASE):
            twins.setdefault(m.group(), set()).add(ch.lower())
    assert {k: v.pop() for k, v in twins.items()} == {
        chr(k): v for k, v in _ASCII_TWINS.items()}
    folded = _ALL_CHARS.translate(_ASCII_TWINS).lower()
    assert len(folded) == len(_ALL_CHARS)  # offsets survive the fold
    became_ascii = [ch for ch, low in zip(_ALL_CHARS[0x80:], folded[0x80:],
                                          strict=True) if low.isascii()]
    assert sorted(became_ascii) == sorted(twins)


def test_when_folding_text_then_word_characters_and_blanks_stay_what_they_were():
    # SearchText looks values up among the words of the folded text: that is
    # only right if folding makes no word character out of another one.
    folded = _ALL_CHARS.translate(_ASCII_TWINS).lower()
    def word(c):
        return c.isalnum() or c == "_"

    for ch, low in zip(_ALL_CHARS, folded, strict=True):
        assert word(ch) == word(low) and ch.isspace() == low.isspace(), hex(ord(ch))


def test_when_counting_letters_and_digits_then_ascii_shortcut_equals_regexes():
    rng = random.Random(7)
    values = [chr(c) for c in range(128)] + [
        "".join(rng.choice(_EDGE_ALPHABET) for _ in range(rng.randint(0, 12)))
        for _ in range(2000)]
    for value in values:
        assert _alnum_count_and_digits(value) == (
            len(re.sub(r"[\W_]", "", value)), re.sub(r"\D", "", value)), value


def test_when_a_header_is_planned_then_each_removed_value_once_with_first_label():
    dictionary = PatientDictionary((
        DictionaryEntry("1950", "DATE", "PID.7"),  # a bare year: kept
        DictionaryEntry("1950", "IDNUM", "PID.19"),  # ... but not as an id
        DictionaryEntry("Moss", "PATIENT", "PID.5"),
        DictionaryEntry("Moss", "RELATIVE", "NK1.2"),
        DictionaryEntry("Boston", "CITY", "PID.11"),
        DictionaryEntry("74", "AGE", "PID.7"),
    ))
    planned = header_values(dictionary, "safe-harbor")
    assert [(v, label) for v, label, _ in planned] == [
        ("1950", "IDNUM"), ("Moss", "PATIENT"), ("Boston", "CITY")]
    assert header_values(dictionary, "surrogate") is planned  # remembered
    limited = header_values(dictionary, "limited-dataset")
    assert [(v, label) for v, label, _ in limited] == [
        ("1950", "IDNUM"), ("Moss", "PATIENT")]
    # Another dictionary, even an equal one, is planned on its own.
    other = PatientDictionary(dictionary.entries)
    assert header_values(other, "safe-harbor") is not planned
    assert header_values(other, "safe-harbor") == planned


def test_when_checking_a_header_document_then_same_leaks_as_its_suspects():
    rewriter = Rewriter("surrogate", KEY)
    doc = _header_doc("ANDERSEN seen; call 617 555 0142. Andersen to return.")
    tagged = TaggedDocument(doc, (PhiSpan(0, 8, "PATIENT", "dictionary:PID.5.1"),))
    result = rewriter.rewrite(tagged)  # the phone and a second name survive
    suspects = suspects_of(tagged, result, "safe-harbor")
    assert find_leaks(result.text, suspects, written_regions(result)) == {
        "PATIENT": 1, "PHONE": 1}
    with pytest.raises(LeakDetectedError, match="PATIENT x1, PHONE x1"):
        rewriter.guard(tagged, result)


def test_when_checking_boundaries_then_str_predicates_equal_regex_classes():
    assert "".join(re.findall(r"\w", _ALL_CHARS)) == "".join(
        ch for ch in _ALL_CHARS if ch.isalnum() or ch == "_")
    assert "".join(re.findall(r"\s", _ALL_CHARS)) == "".join(
        ch for ch in _ALL_CHARS if ch.isspace())
    assert "".join(re.findall(r"\d", _ALL_CHARS)) == "".join(
        ch for ch in _ALL_CHARS if ch.isdecimal())


def test_when_regions_overlap_or_come_unsorted_then_near_is_their_union():
    from deid_pipeline.leak_guard import _Written

    rng = random.Random(3)
    for _ in range(300):
        pairs = [(a, a + rng.randint(1, 6)) for a in
                 (rng.randint(0, 40) for _ in range(rng.randint(0, 8)))]
        covered = {i for s, e in pairs for i in range(s, e)}
        for written in (_Written(pairs), _Written(iter(sorted(pairs)))):
            for _ in range(10):
                start = rng.randint(0, 45)
                end = start + rng.randint(1, 8)
                near = written.near(start, end)
                got = {i for s, e in near for i in range(max(s, start), min(e, end))}
                assert got == {i for i in covered if start <= i < end}
                assert near == sorted(near)
