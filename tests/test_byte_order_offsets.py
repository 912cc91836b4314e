"""A .txt file's UTF-8 byte order mark: offsets count it, the research text drops it."""

import codecs

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.readers.formats import read_text
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

# Made up; what a scorer reads: the file decoded as UTF-8, mark and all.
NOTE = "Call 617-555-0142 or e-mail ana.pena@example.org.\n"


def test_when_a_txt_file_has_a_utf8_mark_then_span_offsets_are_the_files():
    data = codecs.BOM_UTF8 + NOTE.encode("utf-8")
    as_read_by_a_scorer = data.decode("utf-8")  # BRAT: the mark is a character
    (doc,) = read_text("/in/case-1.txt", data)
    assert doc.text == as_read_by_a_scorer
    tagged = PhiTagger.from_config(TaggerConfig(("rules",))).tag(doc)
    values = [as_read_by_a_scorer[s.start:s.end] for s in tagged.spans]
    assert values == ["617-555-0142", "ana.pena@example.org"]
    result = Rewriter("surrogate", b"k" * 32, as_of_year=2026).rewrite(tagged)
    assert not result.text.startswith("\ufeff")
    assert result.text.endswith(".\n") and "617-555-0142" not in result.text


def test_when_a_txt_file_has_no_mark_then_its_text_is_as_written():
    (doc,) = read_text("/in/case-2.txt", NOTE.encode("utf-8"))
    assert doc.text == NOTE
