"""Tests of the synthetic data generator: determinism, exact gold, valid HL7, CLI."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time

import faker.generator
import hl7
import pytest
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message

from deid_pipeline.evaluation.corpora import load_jsonl_corpus
from deid_pipeline.labels import LABELS
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.readers.formats import read_jsonl
from deid_pipeline.synthetic import generate_messages, generate_notes
from deid_pipeline.synthetic.cli import add_subcommand
from deid_pipeline.synthetic.hl7 import escape, iter_messages, unescape
from deid_pipeline.synthetic.notes import KINDS, iter_notes
from deid_pipeline.synthetic.text import assemble, wrap_lines
from deid_pipeline.tokenizer import token_spans

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "samples")


@pytest.fixture(scope="module")
def notes():
    return list(iter_notes(150, 11))


@pytest.fixture(scope="module")
def messages():
    return list(iter_messages(200, 5))


def _check_gold(doc: ClinicalDocument, inserted: tuple[str, ...]) -> None:
    text = doc.text
    assert len(doc.gold) == len(inserted)
    tokens = token_spans(text)
    starts, ends = {s for s, _ in tokens}, {e for _, e in tokens}
    previous_end = 0
    for span, value in zip(doc.gold, inserted, strict=True):
        assert 0 <= span.start < span.end <= len(text)
        assert text[span.start : span.end] == value
        assert value == value.strip() and "\n" not in value
        assert span.label in LABELS
        assert span.start >= previous_end, "gold spans overlap"
        previous_end = span.end
        # Spans start and end on the project tokenizer's token boundaries.
        assert span.start in starts and span.end in ends, value


# --- notes -----------------------------------------------------------------------


def test_when_same_seed_then_notes_are_identical():
    assert generate_notes(25, 3) == generate_notes(25, 3)


def test_when_seed_differs_then_notes_differ():
    first = [d.text for d in generate_notes(10, 3)]
    second = [d.text for d in generate_notes(10, 4)]
    assert all(a != b for a, b in zip(first, second, strict=True))


def test_when_fewer_notes_asked_then_output_is_a_prefix():
    assert generate_notes(7, 9) == generate_notes(15, 9)[:7]


def test_when_generating_then_global_random_states_are_untouched():
    before = (random.getstate(), faker.generator.random.getstate())
    generate_notes(5, 1)
    generate_messages(5, 1)
    assert (random.getstate(), faker.generator.random.getstate()) == before


def test_every_gold_span_covers_exactly_the_inserted_value(notes):
    assert sum(len(n.document.gold) for n in notes) > 1000
    for note in notes:
        _check_gold(note.document, note.inserted)


def test_labels_are_varied_and_from_the_label_set(notes):
    labels = {s.label for n in notes for s in n.document.gold}
    assert labels <= set(LABELS)
    assert {
        "PATIENT",
        "DOCTOR",
        "RELATIVE",
        "HOSPITAL",
        "CITY",
        "STATE",
        "ZIP",
        "STREET",
        "DATE",
        "PHONE",
        "FAX",
        "EMAIL",
        "URL",
        "IPADDR",
        "MEDICALRECORD",
        "SSN",
        "ACCOUNT",
        "AGE",
    } <= labels


@pytest.mark.parametrize(
    ("label", "pattern"),
    [
        ("EMAIL", r"[\w.]+@[\w.-]+\.\w+"),
        ("IPADDR", r"\d{1,3}(\.\d{1,3}){3}"),
        ("SSN", r"\d{3}-?\d{2}-?\d{4}"),
        ("ZIP", r"\d{5}"),
        ("PHONE", r"[\d()+. x-]*\d[\d()+. x-]*"),
        ("AGE", r"\d{2,3}s?"),
        ("MEDICALRECORD", r"[\d-]{7,11}"),
    ],
)
def test_when_label_is_formulaic_then_value_has_its_shape(notes, label, pattern):
    values = [
        n.document.text[s.start : s.end]
        for n in notes
        for s in n.document.gold
        if s.label == label
    ]
    assert values, label
    for value in values:
        assert re.fullmatch(pattern, value, re.IGNORECASE), (label, value)


def test_when_age_threshold_is_90_then_only_old_ages_are_labelled(notes):
    ages = [
        n.document.text[s.start : s.end]
        for n in notes
        for s in n.document.gold
        if s.label == "AGE"
    ]
    assert ages and all(int(a.rstrip("sS")) >= 90 for a in ages)
    every_age = generate_notes(40, 11, age_threshold=0)
    assert (
        sum(s.label == "AGE" for d in every_age for s in d.gold) > len(ages) / 150 * 40
    )


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)\bbp:? (\d{2,3}/\d{2,3})",  # blood pressure
        r"(?i)\b(\d(?: \d)?/\d) tabs?\b",  # dose fractions
        r"(?i)\b(?:k|na|bun|hct|wbc|inr|ptt|mg) (\d+(?:\.\d+)?)\b",  # lab values
        r"(?i)\bpain (\d{1,2}/10)\b",  # pain scores
        r"(?i)\bstrength (\d/5)\b",  # motor grades
        r"(?i)\babg (\d\.\d\d/\d+/\d+)",  # blood gases
    ],
)
def test_when_text_is_clinical_filler_then_it_is_not_labelled(notes, pattern):
    hits = 0
    for note in notes:
        doc = note.document
        for m in re.finditer(pattern, doc.text):
            hits += 1
            start, end = m.span(1)
            assert not any(s.start < end and start < s.end for s in doc.gold), (
                doc.doc_id,
                m.group(1),
            )
    assert hits >= 3, f"filler pattern (almost) never generated: {pattern}"


def test_notes_cover_every_kind_case_style_and_shared_patients(notes):
    kinds = {dict(n.document.metadata)["kind"] for n in notes}
    assert kinds == set(KINDS)
    texts = [n.document.text for n in notes]
    assert any(t == t.upper() for t in texts)
    assert any(t == t.lower() for t in texts)
    keys = [n.document.person_key for n in notes]
    assert all(keys)
    assert len(set(keys)) < len(keys)


def test_notes_mention_phi_in_varied_forms(notes):
    text = "\n".join(n.document.text for n in notes)
    dates = [
        n.document.text[s.start : s.end]
        for n in notes
        for s in n.document.gold
        if s.label == "DATE"
    ]
    for shape in (
        r"\d{1,2}/\d{1,2}",
        r"\d{2}/\d{2}/\d{4}",
        r"\d{2}-[A-Za-z]{3}-\d{2}",
        r"[A-Za-z]+ \d{1,2}, \d{4}",
        r"\d{4}-\d{2}-\d{2}",
        r"[A-Za-z]+ \d{4}",
        r"\d{4}",
    ):
        assert any(re.fullmatch(shape, d) for d in dates), shape
    for cue in (
        r"(?i)\bdr\.? [a-z]",
        r"(?i)\b[a-z]+,? m\.?d\b",
        r"(?i)\bseen by\b",
        r"(?i)\b(wife|husband|son|daughter)\b",
        r"(?i)\bmrn:? \d",
        r"(?i)\bm(r|rs|s)\. [a-z]",
    ):
        assert re.search(cue, text), cue


def test_when_token_budget_given_then_lengths_respect_it():
    for doc in generate_notes(40, 2, min_tokens=200, max_tokens=400):
        assert 200 <= len(token_spans(doc.text)) <= 400, doc.doc_id


def test_when_kinds_given_then_only_those_kinds_are_generated():
    docs = generate_notes(8, 2, kinds=["pathology"])
    assert {dict(d.metadata)["kind"] for d in docs} == {"pathology"}
    with pytest.raises(ValueError):
        generate_notes(3, 2, kinds=["poetry"])


def test_when_text_is_wrapped_then_offsets_hold_and_spans_stay_on_one_line():
    text = assemble(
        [
            ("Seen by Dr. ", None),
            ("John Smith", "DOCTOR"),
            (" on a long afternoon in the clinic with family", None),
        ]
    )
    wrapped = wrap_lines(text, 20)
    assert "\n" in wrapped.text and len(wrapped.text) == len(text.text)
    span = wrapped.spans[0]
    assert wrapped.text[span.start : span.end] == "John Smith"


def test_when_piece_has_whitespace_then_assemble_refuses():
    with pytest.raises(ValueError):
        assemble([(" Smith", "PATIENT")])


# --- HL7 -------------------------------------------------------------------------


def test_when_same_seed_then_messages_are_identical():
    assert generate_messages(20, 8) == generate_messages(20, 8)
    assert [m.er7 for m in generate_messages(5, 8)] != [
        m.er7 for m in generate_messages(5, 9)
    ]


def test_generating_200_messages_is_fast():
    start = time.perf_counter()
    generate_messages(200, 123)
    assert time.perf_counter() - start < 5.0


def test_messages_cover_every_kind_and_use_cr_terminators(messages):
    assert {m.kind for m in messages} == {"oru", "mdm", "adt"}
    for m in messages:
        assert m.er7.startswith("MSH|^~\\&|") and m.er7.endswith("\r")
        assert "\n" not in m.er7
        assert m.er7.split("\r")[0].split("|")[9] == m.message_id
        if m.kind == "adt":
            assert not m.documents and m.header_identifiers
        else:
            assert m.documents


def test_every_report_has_10_to_40_obx_lines(messages):
    for m in messages:
        counts: list[int] = []
        for segment in m.er7.split("\r"):
            if segment.startswith(("OBR|", "TXA|")):
                counts.append(0)
            elif segment.startswith("OBX|"):
                counts[-1] += 1
        assert len(counts) == len(m.documents)
        assert all(MIN_LINES <= c <= MAX_LINES for c in counts), counts


def _reports(parsed) -> list[tuple[str, list[str], list[str]]]:
    """(OBR-1 or "1" for MDM, OBX-5 values, NTE-3 values) per report, raw ER7."""
    groups: list[tuple[str, list[str], list[str]]] = []
    for seg in parsed.children:
        if seg.name in ("OBR", "TXA"):
            groups.append((seg.obr_1.to_er7() if seg.name == "OBR" else "1", [], []))
        elif seg.name == "OBX" and groups:
            groups[-1][1].append(seg.obx_5.to_er7())
        elif seg.name == "NTE" and groups:
            groups[-1][2].append(seg.nte_3.to_er7())
    return groups


def test_messages_parse_and_narratives_rebuild_from_obx(messages):
    checked = 0
    for m in messages[:60]:
        parsed = parse_message(
            m.er7, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=False
        )
        assert parsed.children[0].name == "MSH"
        python_hl7 = hl7.parse(m.er7)
        groups = _reports(parsed)
        assert len(groups) == len(m.documents)
        for (set_id, obx, nte), doc in zip(groups, m.documents, strict=True):
            assert doc.doc_id == f"{m.message_id}-{set_id}"
            assert MIN_LINES <= len(obx) <= MAX_LINES
            narrative = "\n".join(python_hl7.unescape(v) for v in obx + nte)
            assert narrative == doc.text
            checked += 1
    assert checked > 20


MIN_LINES, MAX_LINES = 10, 40


def test_report_gold_spans_cover_inserted_values(messages):
    for m in messages:
        for doc, inserted in zip(m.documents, m.inserted, strict=True):
            _check_gold(doc, inserted)
            assert doc.person_key == m.person_key


def _resolve(er7: str, address: str) -> str:
    """Read the unescaped value at an identifier address straight from the ER7."""
    m = re.fullmatch(
        r"([A-Z][A-Z0-9]{2})(?:\[(\d+)\])?\.(\d+)(?:\[(\d+)\])?"
        r"(?:\.(\d+))?(?:\.(\d+))?",
        address,
    )
    assert m, address
    seg, occurrence, field, rep, comp, sub = m.groups()
    segments = [s for s in er7.split("\r") if s.startswith(seg + "|")]
    fields = segments[int(occurrence or 1) - 1].split("|")
    value = fields[int(field) - (1 if seg == "MSH" else 0)].split("~")[
        int(rep or 1) - 1
    ]
    if comp:
        value = value.split("^")[int(comp) - 1]
    if sub:
        value = value.split("&")[int(sub) - 1]
    return hl7.parse(er7).unescape(value)


def test_header_identifiers_resolve_to_their_values(messages):
    addresses = set()
    for m in messages[:80]:
        for address, value, label in m.header_identifiers:
            assert label in LABELS
            assert _resolve(m.er7, address) == value, address
            addresses.add(re.sub(r"\[\d+\]", "", address))
    assert {
        "PID.3.1",
        "PID.5.1",
        "PID.5.2",
        "PID.7",
        "PID.11.1",
        "PID.11.3",
        "PID.13.1",
        "PID.18.1",
        "PID.19",
        "NK1.2.1",
        "PV1.7.2",
        "OBR.16.2",
        "OBR.32.1.2",
        "MSH.4.1",
        "TXA.5.2",
        "IN1.36",
    } <= addresses


def test_narratives_name_the_header_patient(messages):
    mentioned = 0
    for m in messages:
        names = {
            v.casefold() for a, v, lab in m.header_identifiers if a.startswith("PID.5.")
        }
        initials = {n[0] for n in names}
        for doc in m.documents:
            for span in doc.gold:
                if span.label != "PATIENT":
                    continue
                mentioned += 1
                for token in re.findall(r"[A-Za-z]+", doc.text[span.start : span.end]):
                    token = token.casefold()
                    assert token in names or (
                        len(token) <= 3 and set(token) <= initials
                    )
    assert mentioned > 50


def test_escapes_appear_and_round_trip(messages):
    er7 = "".join(m.er7 for m in messages)
    for seq in ("\\F\\", "\\S\\", "\\T\\", "\\R\\", "\\E\\"):
        assert seq in er7, seq
    raw = "a|b^c&d~e\\f"
    assert escape(raw) == "a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f"
    assert unescape(escape(raw)) == raw


def test_when_message_kinds_given_then_only_those_are_generated():
    assert {m.kind for m in generate_messages(12, 4, kinds=("mdm",))} == {"mdm"}
    with pytest.raises(ValueError):
        generate_messages(2, 4, kinds=("orm",))


# --- CLI and samples -------------------------------------------------------------


def _run(options: str, output) -> int:
    """``deid-pipeline generate OPTIONS --output OUTPUT``; returns its exit code."""
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["generate", *options.split(), "--output", str(output)])
    return args.func(args)


def _gold_matches(path: str, texts: dict[str, str]) -> int:
    docs = load_jsonl_corpus(path)
    for doc in docs:
        assert doc.text == texts[doc.doc_id]
        for span in doc.gold:
            assert doc.text[span.start : span.end].strip()
    return len(docs)


def test_cli_text_writes_one_file_per_note_and_gold(tmp_path, capsys):
    assert _run("--kind text --count 4 --seed 1 --max-tokens 300", tmp_path) == 0
    files = sorted(p for p in os.listdir(tmp_path) if p.endswith(".txt"))
    assert len(files) == 4
    texts = {
        f[:-4]: open(tmp_path / f, encoding="utf-8", newline="").read() for f in files
    }
    assert _gold_matches(str(tmp_path / "gold.jsonl"), texts) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "4 text documents" in err
    gold = [json.loads(line) for line in open(tmp_path / "gold.jsonl")]
    leaked = [g["text"][s["start"] : s["end"]] for g in gold for s in g["spans"]]
    assert not any(value in err for value in leaked if len(value) > 3)


def test_cli_jsonl_is_readable_by_the_corpus_reader(tmp_path):
    assert _run("--kind jsonl --count 6 --seed 2 --max-tokens 300", tmp_path) == 0
    path = tmp_path / "notes.jsonl"
    docs = list(read_jsonl(str(path), path.read_bytes()))
    assert len(docs) == 6 and all(isinstance(d, ClinicalDocument) for d in docs)
    assert all(d.person_key for d in docs)
    assert (
        _gold_matches(str(tmp_path / "gold.jsonl"), {d.doc_id: d.text for d in docs})
        == 6
    )


def test_cli_hl7_writes_messages_and_gold(tmp_path):
    assert _run("--kind hl7 --count 6 --seed 3 --per-file 4", tmp_path) == 0
    files = sorted(p for p in os.listdir(tmp_path) if p.endswith(".hl7"))
    assert len(files) == 2
    data = "".join(
        open(tmp_path / f, encoding="utf-8", newline="").read() for f in files
    )
    assert data == "".join(m.er7 for m in generate_messages(6, 3))
    gold = [json.loads(line) for line in open(tmp_path / "gold.jsonl")]
    assert {g["message_id"] for g in gold} == {
        m.message_id for m in generate_messages(6, 3)
    }
    assert all(g["header_identifiers"] for g in gold)


def test_cli_rejects_bad_options(tmp_path):
    assert _run("--count -1", tmp_path) == 2
    assert _run("--types poetry", tmp_path) == 2


def test_bundled_samples_are_small_and_their_gold_matches():
    if not os.path.isdir(os.path.join(SAMPLES, "hl7")):
        pytest.skip("samples not present")
    total = sum(
        os.path.getsize(os.path.join(root, f))
        for root, _, files in os.walk(SAMPLES)
        for f in files
    )
    assert total < 300 * 1024
    notes_dir = os.path.join(SAMPLES, "notes")
    texts = {
        f[:-4]: open(os.path.join(notes_dir, f), encoding="utf-8", newline="").read()
        for f in os.listdir(notes_dir)
        if f.endswith(".txt")
    }
    assert len(texts) == 5
    assert _gold_matches(os.path.join(notes_dir, "gold.jsonl"), texts) == 5
    with open(os.path.join(SAMPLES, "notes.jsonl"), encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    assert len(lines) == 10
    assert (
        _gold_matches(
            os.path.join(SAMPLES, "gold.jsonl"), {o["id"]: o["text"] for o in lines}
        )
        == 10
    )
    hl7_files = [
        f for f in os.listdir(os.path.join(SAMPLES, "hl7")) if f.endswith(".hl7")
    ]
    assert len(hl7_files) == 5
    for name in hl7_files:
        with open(
            os.path.join(SAMPLES, "hl7", name), encoding="utf-8", newline=""
        ) as fh:
            er7 = fh.read()
        parsed = parse_message(
            er7, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=False
        )
        assert parsed.children[0].msh_9.to_er7().split("^")[0] in ("ORU", "MDM")


def test_places_include_small_towns_beyond_the_city_gazetteer(notes):
    from deid_pipeline.synthetic.identity import us_cities

    big = {city.lower() for city, _ in us_cities()}
    cities = {
        n.document.text[s.start : s.end].lower()
        for n in notes
        for s in n.document.gold
        if s.label == "CITY"
    }
    towns = cities - big
    # half the places are postal towns: a model must learn places from context
    assert len(towns) >= len(cities) // 4


def test_towns_come_with_their_own_zip_code():
    from deid_pipeline.synthetic.identity import us_towns

    towns = us_towns()
    assert len(towns) > 10_000
    assert all(len(zip_) == 5 and zip_.isdigit() for _, _, zip_ in towns[:500])
    assert towns == tuple(sorted(towns))


def test_nursing_notes_name_hospitals_by_their_short_form(notes):
    from faker import Faker

    from deid_pipeline.synthetic.identity import IdentityFactory

    fake = Faker("en_US")
    fake.seed_instance(3)
    ids = IdentityFactory(fake, n_doctors=1, n_hospitals=40, n_facilities=10)
    for fac in ids.hospitals + ids.facilities:
        # the short form is part of the name, never a generic word alone
        assert fac.short and fac.short.split()[0] in fac.name
        assert fac.short.lower() not in {"hospital", "medical center", "rehab"}
    assert any(fac.short != fac.name for fac in ids.hospitals)
    hospitals = {
        n.document.text[s.start : s.end]
        for n in notes
        if dict(n.document.metadata)["kind"] == "nursing"
        for s in n.document.gold
        if s.label == "HOSPITAL"
    }
    generic = ("hospital", "medical center", "clinic", "nursing", "hospice")
    short = [h for h in hospitals if not any(g in h.lower() for g in generic)]
    assert len(short) >= 5


def _labelled(note, label):
    doc = note.document
    return [(s, doc.text[s.start : s.end]) for s in doc.gold if s.label == label]


def test_notes_teach_the_shapes_new_patients_show(notes):
    """Pagers after a cue, year-less event dates and ranges, an ordinal day, two
    doctors after one title, regional names of common words, lower-case facilities
    and relatives named by first name alone: each labelled where it stands."""
    text_of = {id(n): n.document.text for n in notes}
    pagers = [
        v
        for n in notes
        for s, v in _labelled(n, "PHONE")
        if re.search(r"(?i)(pager #|\bpg ?#?|pgr #?|beeper #) ?$",
                     text_of[id(n)][: s.start])
    ]
    assert len(pagers) >= 5 and all(re.fullmatch(r"\d{5}|\d-\d{4}", v) for v in pagers)
    dates = [v for n in notes for _, v in _labelled(n, "DATE")]
    assert any(re.fullmatch(r"\d{1,2}(st|nd|rd|th)", v) for v in dates)
    ranges = [
        n
        for n in notes
        if re.search(r"\b\d{1,2}/\d{1,2}(-| - | to )\d{1,2}/\d{1,2}\b", text_of[id(n)])
    ]
    assert ranges
    for n in ranges:  # both ends of a range are dates, the dash is not
        doc = n.document
        m = re.search(r"\b(\d{1,2}/\d{1,2})(-| - | to )(\d{1,2}/\d{1,2})\b", doc.text)
        spans = {(s.start, s.end) for s in doc.gold if s.label == "DATE"}
        if (m.start(1), m.end(1)) in spans:
            assert (m.start(3), m.end(3)) in spans
    two_doctors = 0
    for n in notes:
        doc = n.document
        for m in re.finditer(r"(?i)\bdrs\.? (\w+)( and | & |/|, | \+ )(\w+)", doc.text):
            spans = {(s.start, s.end) for s in doc.gold if s.label == "DOCTOR"}
            assert (m.start(1), m.end(1)) in spans and (m.start(3), m.end(3)) in spans
            two_doctors += 1
    assert two_doctors >= 3
    regions = [v for n in notes for _, v in _labelled(n, "LOCATION")]
    land = ("shore", "ridge", "hills", "end", "valley", "point", "side", "harbor",
            "falls", "woods", "meadows", "heights")
    assert any(len(v.split()) == 2 and v.split()[1].lower() in land for v in regions)
    hospitals = [v for n in notes for _, v in _labelled(n, "HOSPITAL")]
    assert any(v.islower() for v in hospitals)
