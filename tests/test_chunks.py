"""The chunked batch path's Beam-free parts: spill files and solving the links."""

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.linking.graph import link_record, resolve
from deid_pipeline.linking.keys import document_key
from deid_pipeline.linking.persons import persons_row, quasi_identifiers
from deid_pipeline.linking.solver import (
    link_item,
    solve_links,
    solve_links_with_prior,
)
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
    TaggedDocument,
)
from deid_pipeline.transforms.chunks import read_spill, write_spill

KEY = b"chunks-test-key-0123456789abcdef"


def _tagged(doc_id, text, origin="a.jsonl", mrn_in_text=None, header=None):
    spans = ()
    if mrn_in_text:
        start = text.index(mrn_in_text)
        spans = (PhiSpan(start, start + len(mrn_in_text), "MEDICALRECORD", "rules"),)
    dictionary = None
    if header:
        dictionary = PatientDictionary(
            entries=(DictionaryEntry("1961", "DATE", "PID.7"),), person_key=header
        )
    doc = ClinicalDocument(doc_id, text, "jsonl", origin=origin, dictionary=dictionary)
    return TaggedDocument(doc, spans)


DOCS = [
    _tagged("1", "MRN 4455667 seen.", mrn_in_text="4455667"),
    _tagged("2", "Follow-up, MRN 4455667.", mrn_in_text="4455667"),
    _tagged("3", "Nothing to link here."),
    _tagged("4", "Header only.", header="MRN^HOSP^77"),
    _tagged("5", "Header and MRN 998877.", mrn_in_text="998877", header="K^9"),
    _tagged("6", "Other MRN 998877 no header.", mrn_in_text="998877"),
    _tagged("3", "Nothing to link here either."),  # an id that repeats
]


def test_when_links_solved_per_chunk_then_person_ids_and_rows_as_the_old_join():
    rewriter = Rewriter("redact", KEY)
    chunks = {(0, 0): DOCS[:3], (0, 1): DOCS[3:5], (1, 0): DOCS[5:]}
    items = [
        link_item(t, chunk_id, pos, KEY)
        for chunk_id, docs in chunks.items()
        for pos, t in enumerate(docs)
    ]
    keys, rows = solve_links(reversed(items), rewriter)
    solution = solve_links_with_prior(reversed(items), rewriter, ())
    # The second "3" (chunk (1, 0), position 1) repeats the id of (0, 0)'s:
    # quarantined by WriteChunkFn, linked to nobody, its key None.
    assert solution.duplicates_by_chunk == {(1, 0): {1: (0, 0)}}
    assert keys[1, 0][1] is None

    # The old path: resolve over LinkRecords, joined back by document key.
    old = {a.doc_key: a for a in resolve(link_record(t) for t in DOCS[:-1])}
    expected_rows = {}
    for chunk_id, docs in chunks.items():
        assert len(keys[chunk_id]) == len(docs)
        for pos, t in enumerate(docs):
            if t is DOCS[-1]:
                continue
            person = old[document_key(t.document)]
            expected = rewriter.person_id_for(t, person.person_key)
            assert rewriter.person_id_for(t, keys[chunk_id][pos]) == expected
            expected_rows.setdefault(expected, []).append(
                (person.linked_by, quasi_identifiers(t.document))
            )
    assert rows == [
        persons_row(p, e, rewriter) for p, e in sorted(expected_rows.items())
    ]
    # Documents 1, 2 (shared MRN), 5 and 6 (shared MRN, 5's header key) link;
    # 3 (once: its repeat is no document of the run) and 4 are alone.
    assert len(rows) == 4
    assert sorted(r["n_documents"] for r in rows) == [1, 1, 2, 2]


def test_when_a_document_can_link_to_nothing_then_no_key_travels():
    item = link_item(DOCS[2], (0, 0), 0, KEY)
    assert item.own_key is None and item.identifiers == () and item.alone
    keys, _rows = solve_links([item], Rewriter("redact", KEY))
    assert keys == {(0, 0): (None,)}


def test_when_link_item_printed_then_its_identifiers_are_not():
    item = link_item(DOCS[4], (0, 1), 1, KEY)
    assert item.own_key and item.identifiers
    shown = repr(item)
    assert "998877" not in shown and item.own_key not in shown
    assert shown == "LinkItem(chunk_id=(0, 1), position=1, identifiers=1)"


def test_when_chunk_spilled_then_read_back_equal(tmp_path):
    path = str(tmp_path / "spill" / "read" / "00000-00000.pkl")
    write_spill(path, DOCS)
    assert read_spill(path) == DOCS


def test_when_several_patterns_matched_then_every_file_indexed_once_one_reshuffle(
    tmp_path,
):
    """Two patterns (one file matched by both) -> each file once, in path order.

    The patterns are not redistributed (``Create(reshuffle=False)``): the
    matched files are, once; a Reshuffle per step costs a stage of its own.
    """
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from deid_pipeline.transforms.chunks import MatchIndexedFiles

    for name in ("a.jsonl", "b.jsonl", "c.hl7"):
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    patterns = [str(tmp_path / "*.jsonl"), str(tmp_path / "*")]
    with TestPipeline() as p:
        files = p | "Files" >> MatchIndexedFiles(patterns)
        indexed = files | beam.Map(lambda im: (im[0], im[1].path.rsplit("/", 1)[1]))
        assert_that(indexed, equal_to([(0, "a.jsonl"), (1, "b.jsonl"), (2, "c.hl7")]))
        labels = []

        class _Labels(beam.pipeline.PipelineVisitor):
            def enter_composite_transform(self, node):
                labels.append(node.full_label)

        p.visit(_Labels())
    reshuffles = [x for x in labels if x.endswith("/Reshuffle") or x.endswith(
        "SpreadFiles")]
    assert reshuffles == ["Files/SpreadFiles"], reshuffles
