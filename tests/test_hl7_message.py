"""The fast ER7 parser, the escape sequences, and PHI-free parse errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deid_pipeline.hl7.escapes import Delimiters, escape, unescape
from deid_pipeline.hl7.message import Hl7ParseError, parse_message

D = Delimiters()


@pytest.mark.parametrize("raw,text", [
    ("plain", "plain"),
    ("a \\F\\ b \\S\\ c \\T\\ d \\R\\ e \\E\\ f", "a | b ^ c & d ~ e \\ f"),
    ("line\\.br\\next", "line\nnext"),
    ("hex \\X4142\\!", "hex AB!"),
    ("utf8 \\XC3A9\\", "utf8 é"),
    ("\\H\\bold\\N\\", "bold"),
    ("skip\\.sp2\\x", "skip\n\nx"),
    ("indent\\.in+4\\x", "indentx"),
    ("unknown \\Zabc\\ kept", "unknown \\Zabc\\ kept"),
    ("lone \\ backslash", "lone \\ backslash"),
])
def test_when_unescaped_then_sequences_decoded(raw, text):
    assert unescape(raw, D) == text


@pytest.mark.parametrize("text", [
    "a|b^c&d~e\\f", "two\nlines", "tab\tkept", "bell\x07", "O'Brien-Smith", "",
])
def test_when_escaped_then_unescape_gives_text_back(text):
    raw = escape(text, D)
    assert not any(ch in raw for ch in "|^&~\r\n")
    assert unescape(raw, D) == text


def test_when_custom_delimiters_then_escape_uses_them():
    d = Delimiters("|", "*", "~", "\\", "&", "#")
    assert escape("a*b#c", d) == "a\\S\\b\\P\\c"
    assert unescape("a\\S\\b\\P\\c", d) == "a*b#c"


@given(st.text(alphabet=st.sampled_from(
    list("ab |^&~\\*#-]\t\r\n\x00\x07\x1f\x7f\x80é€")), max_size=30),
       st.sampled_from([D, Delimiters("|", "*", "~", "\\", "&", "#"),
                        Delimiters("#", "]", "-", "^", "\\")]))
def test_when_anything_is_escaped_then_nothing_needing_it_is_left_and_it_reads_back(
        text, d):
    raw = escape(text, d)
    specials = {d.field, d.component, d.repetition, d.subcomponent, d.truncation} - {""}
    # Only the escape character itself may stand raw, framing a sequence.
    assert not any(ch in specials or (ch < " " and ch != "\t") or ch == "\x7f"
                   for ch in raw)
    assert unescape(raw, d) == text.replace("\r\n", "\n").replace("\r", "\n")
    if raw == text:
        assert not any(ch in specials or ch == d.escape or ch in "\r\n"
                       for ch in text)


def test_when_parsed_then_fields_numbered_as_the_standard():
    m = parse_message("MSH|^~\\&|APP|FAC|||20240101||ORU^R01|CTRL1|P|2.5\r"
                      "PID|1||123^^^H^MR||DOE^JANE\rOBR|1\r")
    assert m.msh.get(1) == "|" and m.msh.get(2) == "^~\\&" and m.msh.get(3) == "APP"
    assert m.message_type == "ORU^R01" and m.control_id == "CTRL1"
    assert m.version == "2.5"
    assert m.first("PID").get(5) == "DOE^JANE"
    assert m.to_er7() == ("MSH|^~\\&|APP|FAC|||20240101||ORU^R01|CTRL1|P|2.5\r"
                          "PID|1||123^^^H^MR||DOE^JANE\rOBR|1\r")


@pytest.mark.parametrize("text,message", [
    ("PID|1||SMITH", "message does not start with an MSH segment"),
    ("MSH|^~", "segment 1 (MSH): encoding characters missing"),
    ("MSH|^^\\&|A||||1||ORU^R01|1|P|2.5\rOBR|1", "invalid encoding characters"),
    # Not a segment: continues the MSH (a wrapped line), whose MSH-12 it spoils.
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|2.5\rpid|SMITH",
     "MSH-12 version missing or not supported"),
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|9.9\rOBR|1",
     "MSH-12 version missing or not supported"),
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|2.5", "message truncated after MSH"),
    ("MSH|^~\\&|A||||1||ORU^R01|1|P|2.5\rPID|1||9^^^H^MR||DOE^JANE",
     "message truncated: no OBR segment (last is segment 2 (PID))"),
    ("MSH|^~\\&|A||||1||MDM^T02|1|P|2.5\rPID|1\rOBX|1|TX|||x",
     "message truncated: no TXA segment"),
])
def test_when_message_broken_then_error_names_positions_not_values(text, message):
    with pytest.raises(Hl7ParseError) as err:
        parse_message(text)
    assert message in str(err.value)
    for phi in ("SMITH", "DOE", "JANE"):
        assert phi not in str(err.value)
