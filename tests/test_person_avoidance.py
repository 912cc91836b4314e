"""No surrogate spells an original of the same person's other documents (issue 18).

``run`` rewrites each document of a person with several documents against the
originals of all of them (``transforms.chunks.PersonOriginals``): a forced
tiny name pool makes a surrogate in one message collide with a name that
stands only in another message of the same patient (the spouse in A's NK1
and narrative), and the same value of the person (the patient's name, in
both) must get one surrogate in every document. The gateway sees one
message at a time: only the message's own originals (the first test shows
the collision it cannot avoid, which is what makes the run tests real).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

import pyarrow.parquet as pq
import pytest
from test_surrogate_collisions import tiny_pool  # noqa: F401 - used below

from deid_pipeline import surrogates
from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.documents import read_hl7
from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.writeback import deidentify_message
from deid_pipeline.linking.solver import link_item, solve_links_with_prior
from deid_pipeline.pipelines.job import run
from deid_pipeline.surrogates import Originals
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

pytestmark = pytest.mark.usefixtures("tiny_pool")
KEY = b"person-avoidance-key-00-0123456789ab"
DETECTORS = "rules,dictionary"
HEADER = (
    "MSH|^~\\&|LAB|NORTHFIELD|EHR|NORTHFIELD|20240305094500||ORU^R01|{id}|P|2.5\r"
    "PID|1||QK440912^^^NORTHFIELD^MR||SMITH^JOHN||19540917|M\r"
)
# Message A: the spouse, in NK1 and in the narrative; message B: the doctor.
MESSAGE_A = HEADER.format(id="PA-1") + (
    "NK1|1|JONES^MARY|SPO^Spouse^HL70063\r"
    "OBR|1|ORD1|FIL1|71020^CHEST 2 VIEWS^CPT|||20240305093000\r"
    "OBX|1|TX|71020^CHEST||John Smith seen with his wife Mary Jones.||||||F\r"
)
MESSAGE_B = HEADER.format(id="PB-1") + (
    "PV1|1|O|RAD^12^1^NORTHFIELD||||7741^BROWN^DAVID^^^^MD\r"
    "OBR|1|ORD2|FIL2|71250^CT CHEST^CPT|||20240306093000\r"
    "OBX|1|TX|71250^CT||John Smith seen again; Dr. David Brown reviewed.||||||F\r"
)
ONLY_A = {"jones", "mary"}
PERSON = {"smith", "john", "brown", "david"} | ONLY_A


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"[A-Za-z]+", text)}


def _run(inputs, out, *extra) -> dict:
    key = out.parent / f"{out.name}.key"
    key.write_bytes(KEY)
    surrogates._memo.cache_clear()  # a re-run must not lean on the memo
    summary = run(["--input", f"{inputs}/*", "--output", str(out), "--key-file",
                   str(key), "--detectors", DETECTORS, "--as-of-year", "2026",
                   *extra])
    assert summary["accounted"] is True
    return summary


def _hl7_inputs(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.hl7").write_bytes(MESSAGE_A.encode())
    (inputs / "b.hl7").write_bytes(MESSAGE_B.encode())
    return inputs


def _research(out) -> dict[str, str]:
    return {r["doc_id"]: r["text"]
            for r in pq.read_table(out / "documents").to_pylist()}


def _replacements(out) -> dict[str, set[str]]:
    """Original (casefolded) -> every replacement written for it, all documents."""
    found: dict[str, set[str]] = {}
    for r in pq.read_table(out / "identifiers").to_pylist():
        found.setdefault(r["original"].casefold(), set()).add(
            r["replacement"].casefold())
    return found


def _tree(directory) -> dict[str, bytes]:
    return {os.path.relpath(os.path.join(root, name), directory):
            open(os.path.join(root, name), "rb").read()
            for root, _dirs, names in os.walk(directory) for name in names
            if name != "run.json"}


def test_when_originals_joined_then_one_holding_the_rest_comes_back_itself():
    person = Originals.of([("SMITH^JOHN", "PATIENT"), ("JONES", "RELATIVE"),
                           ("617-555-0142", "PHONE")])
    message = Originals.of([("Smith", "PATIENT")])
    assert Originals.union([message, person]) is person
    both = Originals.union([message, Originals.of([("Brown", "DOCTOR")])])
    assert both == Originals(frozenset({"smith", "brown"}), frozenset())
    assert Originals.union([]) == Originals()


def test_when_links_solved_then_documents_of_shared_persons_carry_the_rewriters_id():
    """The person id the rewriter derives: what the chunk writer looks up."""
    from test_chunks import DOCS
    from test_chunks import KEY as CHUNK_KEY

    chunks = {(0, 0): DOCS[:3], (0, 1): DOCS[3:5], (1, 0): DOCS[5:]}
    items = [link_item(t, chunk_id, pos, CHUNK_KEY)
             for chunk_id, docs in chunks.items() for pos, t in enumerate(docs)]
    rewriter = Rewriter("redact", CHUNK_KEY)
    solution = solve_links_with_prior(reversed(items), rewriter, ())
    keys, shared = solution.keys_by_chunk, solution.shared_by_chunk
    # The repeated id "3" is quarantined as a duplicate: no person's document.
    duplicates = solution.duplicates_by_chunk
    pids = {(c, pos): rewriter.person_id_for(t, keys[c][pos])
            for c, docs in chunks.items() for pos, t in enumerate(docs)
            if pos not in duplicates.get(c, {})}
    counts = Counter(pids.values())
    for (c, pos), pid in pids.items():
        people = shared.get(c, ())
        got = people[pos] if pos < len(people) else None
        assert got == (pid if counts[pid] > 1 else None)
    assert sum(1 for p in pids.values() if counts[p] > 1) == 4  # 1+2, 5+6


def test_when_message_alone_then_tiny_pool_spells_the_other_messages_name():
    """What one message alone (the gateway) cannot avoid: B's surrogates spell A's."""
    tagger = PhiTagger.from_config(TaggerConfig(tuple(DETECTORS.split(","))))
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    result = deidentify_message(MESSAGE_B, tagger, rewriter, "b.hl7")
    assert result.ok
    assert _words(result.er7) & ONLY_A


@pytest.mark.parametrize("hl7_output", [True, False])
def test_when_two_messages_of_one_patient_then_no_surrogate_spells_the_others_names(
        tmp_path, hl7_output):
    inputs = _hl7_inputs(tmp_path)
    extra = ["--hl7-output", str(tmp_path / "hl7")] if hl7_output else []
    summary = _run(inputs, tmp_path / "o", *extra)
    assert summary["records_written"] == 2 and summary["records_quarantined"] == 0
    assert summary["persons"] == 1
    research = _research(tmp_path / "o")
    assert len(research) == 2
    # One value of the person, one surrogate, in both documents.
    assert len(_replacements(tmp_path / "o")["john smith"]) == 1
    for text in research.values():
        assert not _words(text) & PERSON, text
    if hl7_output:
        pids, reread = [], {}
        for name in ("a.hl7", "b.hl7"):
            path = tmp_path / "hl7" / name
            written = path.read_bytes()
            (frame,) = frame_file(written).frames()
            pids.append(parse_message(frame.data.decode()).first("PID").get(5))
            reread.update((d.doc_id, d.text) for d in read_hl7(str(path), written))
            assert not _words(written.decode()) & PERSON
        assert pids[0] == pids[1]
        # Both outputs rewrote each report against the same originals.
        assert reread == research
        assert summary["hl7_output"]["messages_out"] == 2


def test_when_run_again_then_person_avoidance_gives_the_same_bytes(
        tmp_path):
    inputs = _hl7_inputs(tmp_path)
    first, second = tmp_path / "one", tmp_path / "two"
    _run(inputs, first, "--hl7-output", str(first / "hl7"))
    _run(inputs, second, "--hl7-output", str(second / "hl7"))
    one, two = _tree(first), _tree(second)
    assert one.keys() == two.keys() and len(one) > 4
    assert one == two


def test_when_two_notes_of_one_person_then_no_surrogate_spells_the_others_names(
        tmp_path):
    # Notes carry no header: linked by the MRN in their text, names tagged by
    # the rules after their titles.
    inputs = tmp_path / "in"
    inputs.mkdir()
    notes = [
        {"id": "n1", "text": "MRN: 4412093. Mr. John seen with his wife Mary."},
        {"id": "n2", "text": "MRN 4412093: Mr. John seen again by Dr. David today."},
    ]
    (inputs / "notes.jsonl").write_text(
        "".join(json.dumps(n) + "\n" for n in notes), encoding="utf-8")
    summary = _run(inputs, tmp_path / "o")
    assert summary["records_written"] == 2 and summary["persons"] == 1
    assert len(_replacements(tmp_path / "o")["john"]) == 1
    for text in _research(tmp_path / "o").values():
        assert not _words(text) & {"john", "mary", "david"}, text
