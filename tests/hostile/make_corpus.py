"""Rebuild the committed hostile-input corpus in this directory.

Run ``python tests/hostile/make_corpus.py`` after changing a case here; the
files are committed so a review sees exactly which bytes CI feeds the
pipeline, and this script only documents how they were made (it is
deterministic: the same bytes every time). Big inputs (the 10 MB document,
the 100,000-token line) are not here: ``tests/test_hostile_inputs.py`` makes
them in a temporary directory at test time.

Every file carries the same invented identity (the CANARY values) so the
tests can prove no quarantine message, log line or run.json quotes it.
Files in ``known_failures/`` currently crash or hang the pipeline; they are
kept out of the main corpus run and exercised by strict-xfail tests.
"""

from __future__ import annotations

import gzip
import io
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))

# The invented identity every hostile file carries (never a real person).
NAME_FAMILY, NAME_GIVEN = "Vexmoor", "Quillon"
MRN = "40817263"
PHONE = "617-555-0199"
DOB = "03/14/1961"
STREET = "12 Larkspur Lane"

SENTENCE = (
    f"Patient {NAME_GIVEN} {NAME_FAMILY} (MRN {MRN}) seen on {DOB}; "
    f"call {PHONE} with results."
)


def _hl7(control: str, *, narrative: tuple[str, ...] = (SENTENCE,),
         msh2: str = "^~\\&", pid_count: int = 1, charset: str = "",
         component: str = "^") -> str:
    """One small ORU^R01 about the canary patient, segments ending in ``\\r``.

    ``msh2`` is what MSH-2 declares; ``component`` what the fields really use.
    """
    c = component
    msh = ("MSH|" + msh2 + "|RIS|GENERAL HOSP|DEID|RESEARCH|20240101120000||"
           f"ORU{c}R01{c}ORU_R01|{control}|P|2.5")
    if charset:
        msh += "||||||" + charset
    pid = (f"PID|1||{MRN}{c}{c}{c}GH{c}MR||{NAME_FAMILY.upper()}{c}"
           f"{NAME_GIVEN.upper()}{c}J||19610314|M|||{STREET}{c}{c}Springfield{c}IL"
           f"{c}62704{c}USA{c}H||{c}PRN{c}PH{c}{c}1{c}617{c}5550199")
    segments = [msh] + [pid] * pid_count + [
        f"OBR|1|ORD1|FIL1|74856{c}MRI BRAIN{c}CPT|||20240101080000",
    ]
    for i, line in enumerate(narrative, start=1):
        segments.append(f"OBX|{i}|TX|18782-3{c}Radiology{c}LN||{line}||||||F")
    return "\r".join(segments) + "\r"


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _jsonl(*lines: bytes) -> bytes:
    return b"\n".join(lines) + b"\n"


def _obj(**kw) -> bytes:
    return json.dumps(kw).encode("utf-8")


def corpus() -> dict[str, bytes]:
    """Relative path -> bytes of every committed hostile input."""
    s = SENTENCE.encode("utf-8")
    files: dict[str, bytes] = {}

    # ------------------------------------------------------------- text
    files["empty.txt"] = b""
    files["whitespace_only.txt"] = b"  \n\t\r\n \x0c\n"
    files["nul_bytes.txt"] = b"Patient " + NAME_FAMILY.encode() + b"\x00\x00" + s
    files["binary_blob.bin"] = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 2)
    files["invalid_utf8.txt"] = (
        b"Seen by Dr. " + NAME_FAMILY.encode() + b" \xff\xfe\xc3( on " + DOB.encode()
        + b", call " + PHONE.encode() + b". Half a char at the end: \xe2\x82")
    files["latin1.txt"] = (
        "Patient José Peña, naïve to therapy, seen " + DOB + ". Call " + PHONE
        + ". Fiancée at bedside."
    ).encode("latin-1")
    files["cp1252_smart_quotes.txt"] = (
        "\u201cNo complaints\u201d \u2013 per Dr. " + NAME_FAMILY + " \u2026 " + PHONE
    ).encode("cp1252")
    files["utf16_bom.txt"] = ("\ufeff" + SENTENCE).encode("utf-16-le")
    files["utf8_bom.txt"] = b"\xef\xbb\xbf" + s
    files["crlf.txt"] = b"Line one.\r\nSeen " + DOB.encode() + b".\r\nCall " + (
        PHONE.encode() + b".\r\n")
    files["cr_only.txt"] = b"Line one.\rSeen " + DOB.encode() + b".\rCall " + (
        PHONE.encode() + b".\r")
    files["unicode_separators.txt"] = (
        f"Seen {DOB}.\u2028Call {PHONE}.\u2029Next\u0085line\x0bvt\x0cff\x1cfs."
    ).encode("utf-8")
    files["bidi_zero_width.txt"] = (
        f"\u202eSeen\u202c on {DOB}. \u200bCall\u200d {PHONE}.\ufeff \u2066ok\u2069 "
        "\u0645\u0631\u064a\u0636 e\u0301 \U0001f600 \u00ad"
    ).encode("utf-8")
    files["only_phi.txt"] = PHONE.encode()
    files["control_chars.txt"] = bytes(range(1, 32)) + b" " + s + b"\x7f"
    files["note with spaces \u00fc.txt"] = s

    # ------------------------------------------------------------- jsonl
    files["empty.jsonl"] = b""
    files["bom_and_blank_lines.jsonl"] = b"\xef\xbb\xbf\n\n   \n\r\n"
    files["broken_lines.jsonl"] = _jsonl(
        b"\xef\xbb\xbf" + _obj(id="bl-01", text=SENTENCE),
        b'{"id": "bl-02", "text": "Patient ' + NAME_FAMILY.encode(),  # cut
        _obj(id="bl-03"),  # no text
        _obj(id="bl-04", text=None),
        _obj(id="bl-05", text=42),
        _obj(text=SENTENCE),  # no id
        b"[1, 2, 3]",
        b'"just a string"',
        b"null",
        _obj(id={"nested": MRN}, text=SENTENCE),
        _obj(id="bl-11", text=SENTENCE) + b"\r",  # CRLF
        _obj(id="bl-12", text=SENTENCE, ward="7N", tags=["a", {"b": 1}], n=3),
        b'{"id": "bl-13", "text": "Seen by Dr. ' + NAME_FAMILY.encode()
        + b' \xff\xfe on ' + DOB.encode() + b'"}',  # invalid UTF-8 in a string
        b'{"id": "bl-14", "text": "raw NUL \x00 in a string"}',
        _obj(id="bl-15", text="escaped NUL \u0000 and \u001b escape char"),
        b'{"id": "bl-16", "text": "trailing comma",}',
        b"{'id': 'bl-17', 'text': 'single quotes'}",
        _obj(id=18, text="numeric id"),
        _obj(id="bl-19", text=""),
        b"   " + _obj(id="bl-20", text=SENTENCE) + b"   ",
        b'{"id": "bl-21", "text": "dup key", "text": "' + s + b'"}',
        _obj(id="bl-22", text="NaN id below"),
        b'{"id": NaN, "text": "NaN as id"}',
        b"\x00\x01\x02\x03",
        _obj(id="bl-25", text=SENTENCE),
    ) + b'{"id": "bl-26", "text": "no newline at end of file"}'
    files["prose_not_json.jsonl"] = (
        s + b"\n" + b"Second line of prose, Dr. " + NAME_FAMILY.encode() + b"\n")

    # ------------------------------------------------------------- hl7
    files["no_msh.hl7"] = (
        _hl7("NOMSH-1").split("\r", 1)[1].encode("utf-8"))
    files["msh_only.hl7"] = b"MSH|^~\\&"
    files["msh_bare.hl7"] = b"MSH"
    files["wrong_encoding_chars.hl7"] = (
        _hl7("WENC-1", msh2="#$%!").encode()          # declared, then not used
        + b"\r\n"
        + _hl7("WENC-2", msh2="").encode()            # MSH-2 empty
        + b"\r\n"
        + _hl7("WENC-3", msh2="^^^^").encode()        # delimiters repeated
        + b"\r\n"
        + _hl7("WENC-4").replace("MSH|", "MSH^", 1).encode()  # wrong field sep
        + b"\r\n"
        + _hl7("WENC-5").encode()                     # a good one after them
        + b"\r\n"
        + _hl7("WENC-6", msh2="#$%!", component="#").encode()  # odd, consistent
    )
    good = _hl7("TRUNC-3").encode()
    files["truncated_segments.hl7"] = (
        _hl7("TRUNC-1").encode()[:-40]                # cut inside the last OBX
        + b"\r\n"
        + b"MSH|^~\\&|RIS|GENERAL HOSP|DEID|RESEARCH|2024"  # cut before MSH-9
        + b"\r\n"
        + good
        + b"\r\n"
        + _hl7("TRUNC-4").encode().split(b"OBR|", 1)[0]  # ORU cut before its OBR
    )
    files["unbalanced_escapes.hl7"] = _hl7("ESC-1", narrative=(
        "Dr. \\H\\" + NAME_FAMILY + " highlighting never closed",
        "lone escape at the end \\",
        "odd hex \\X4\\ and bad hex \\Xzz\\ and huge skip \\.sp99999999\\",
        "\\E\\E\\E\\ \\F\\ \\ZCUSTOM\\ \\.br",
        "call " + PHONE + " \\X0D0A\\ \\X00\\ \\XFFFE\\",
    )).encode("utf-8")
    block = _hl7("MLLP-1").encode()
    files["mllp_unterminated.hl7"] = (
        b"\x0b" + block + b"\x1c\r"
        + b"\x0b" + _hl7("MLLP-2").encode()          # no 0x1c: never ends
    )
    files["mllp_garbage_between.mllp"] = (
        b"\x0b" + _hl7("MLLPG-1").encode() + b"\x1c\r"
        + b"garbage " + NAME_FAMILY.encode() + b" between blocks\r"
        + b"\x0b" + _hl7("MLLPG-2").encode() + b"\x1c\r"
        + b"\x0b\x1c\r"                               # an empty block
        + b"\x1c\x1c\x0b\x0b"                         # stray frame bytes
    )
    files["two_patients.hl7"] = _hl7("TWOPID-1", pid_count=2).encode()
    files["batch_no_trailer.hl7"] = (
        b"FHS|^~\\&|RIS|GH\rBHS|^~\\&|RIS|GH\r" + _hl7("BATCH-1").encode())
    files["lf_and_crlf.hl7"] = (
        _hl7("LF-1").replace("\r", "\n").encode()
        + _hl7("CRLF-1").replace("\r", "\r\n").encode())
    files["latin1_declared_utf8.hl7"] = _hl7(
        "LAT-1", narrative=("Jos\u00e9 Pe\u00f1a, " + SENTENCE,),
        charset="UNICODE UTF-8").encode("latin-1")
    files["nul_in_segment.hl7"] = _hl7(
        "NUL-1", narrative=("before \x00 after " + SENTENCE,)).encode()
    files["many_repetitions.hl7"] = _hl7(
        "REP-1", narrative=("~".join(["rep " + PHONE] * 2000),)).encode()
    files["binary_with_msh.hl7"] = b"MSH|^~\\&|" + bytes(range(256)) * 4

    # ------------------------------------------------------------- parquet
    files["wrong_columns.parquet"] = _parquet(pa.table({
        "note_id": ["wc-1", "wc-2"], "body": [SENTENCE, SENTENCE]}))
    files["null_rows.parquet"] = _parquet(pa.table({
        "id": ["nr-1", None, "nr-3", "nr-4"],
        "text": [SENTENCE, SENTENCE, None, SENTENCE],
    }))
    files["text_not_string.parquet"] = _parquet(pa.table({
        "id": ["tn-1", "tn-2"], "text": [1, 2]}))
    files["nested_text.parquet"] = _parquet(pa.table({
        "id": ["nt-1"], "text": [[SENTENCE]]}))
    files["extra_columns.parquet"] = _parquet(pa.table({
        "id": pa.array([7, 8], pa.int64()),
        "text": pa.array([SENTENCE, SENTENCE], pa.large_string()),
        "blob": pa.array([b"\x00\xff", None], pa.binary()),
        "when": pa.array([0, None], pa.timestamp("s")),
        "nested": pa.array([{"a": 1}, {"a": None}]),
    }))
    files["zero_rows.parquet"] = _parquet(pa.table({
        "id": pa.array([], pa.string()), "text": pa.array([], pa.string())}))
    files["empty.parquet"] = b""
    files["not_parquet.parquet"] = s
    files["truncated.parquet"] = _parquet(pa.table({
        "id": ["tr-1"], "text": [SENTENCE]}))[:-30]
    files["magic_only.parquet"] = b"PAR1PAR1"

    # ------------------------------------------------------------- physionet
    files["physionet_broken.text"] = (
        "START_OF_RECORD=1||||1||||\n" + SENTENCE + "\n||||END_OF_RECORD\n"
        "stray text " + NAME_FAMILY + " outside any record\n"
        "START_OF_RECORD=1||||2||||\nno end marker " + PHONE + "\n"
        "START_OF_RECORD=2||||1||||\n" + SENTENCE + "\n||||END_OF_RECORD\n"
        "START_OF_RECORD=||||||||\n||||END_OF_RECORD\n"
    ).encode("utf-8")

    # ------------------------------------------------------------- compressed
    files["notes.jsonl.gz"] = gzip.compress(
        _jsonl(_obj(id="gz-1", text=SENTENCE), _obj(id="gz-2", text=SENTENCE)),
        mtime=0)
    files["corrupt.txt.gz"] = b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + s
    files["truncated.jsonl.gz"] = gzip.compress(
        _jsonl(*(_obj(id=f"tgz-{i}", text=SENTENCE) for i in range(50))),
        mtime=0)[:-60]

    return files


def known_failures() -> dict[str, bytes]:
    """Inputs that crash the pipeline today (see the xfail tests)."""
    return {"lone_surrogates.jsonl": _jsonl(
        b'{"id": "ls-1", "text": "lone surrogate \\ud800 in text"}',
        b'{"id": "ls-2\\udcff", "text": "lone surrogate in the id"}',
        b'{"id": "ls-3", "text": "ok", "ward": "lone \\udfff in metadata"}',
        _obj(id="ls-4", text=SENTENCE),
    )}


def main() -> None:
    """Write every file under ``corpus/`` and ``known_failures/``, nothing else."""
    for directory, files in (("corpus", corpus()),
                             ("known_failures", known_failures())):
        os.makedirs(os.path.join(HERE, directory), exist_ok=True)
        for name, data in sorted(files.items()):
            with open(os.path.join(HERE, directory, name), "wb") as fh:
                fh.write(data)
        print(f"wrote {len(files)} files under {os.path.join(HERE, directory)}")


if __name__ == "__main__":
    main()
