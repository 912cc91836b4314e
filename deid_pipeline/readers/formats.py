"""Readers that turn input files into ClinicalDocuments (pure Python, no Beam).

Each reader yields ``ClinicalDocument`` for every record it can read and a
``QuarantineRecord`` (stage ``read``) for every record it cannot, so a broken
line never stops the file and never disappears. The Beam read transform and the
training/evaluation corpora (:mod:`deid_pipeline.evaluation.corpora`) both use
these functions.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator

from deid_pipeline.labels import PHYSIONET_TAGS
from deid_pipeline.model import ClinicalDocument, PhiSpan, QuarantineRecord
from deid_pipeline.readers.byte_order import decode_wide, wide_encoding

FORMATS = ("hl7", "text", "jsonl", "physionet", "parquet")

Record = ClinicalDocument | QuarantineRecord

_PHYSIONET_START = re.compile(r"START_OF_RECORD=([^|\n]+)\|\|\|\|([^|\n]+)\|\|\|\|\n")
_PHYSIONET_END = "||||END_OF_RECORD"


def decode_text(data: bytes) -> str:
    """Decode bytes as UTF-8, falling back to cp1252/Latin-1 rather than failing.

    Real archives mix encodings; a note is still worth de-identifying when a
    byte or two is not UTF-8, and cp1252 maps every byte except five, which
    Latin-1 then covers.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def _quarantine(
    doc_id: str, exc: BaseException | str, raw: bytes, origin: str, source: str
) -> QuarantineRecord:
    if isinstance(exc, BaseException):
        error_type, message = type(exc).__name__, str(exc)
    else:
        error_type, message = "InvalidRecord", exc
    return QuarantineRecord(
        doc_id=doc_id,
        stage="read",
        error_type=error_type,
        error_message=message,
        raw=raw,
        origin=origin,
        source=source,
    )


def _narrow_head(head: bytes) -> bytes:
    """The first bytes of a file, a UTF-16/32 file's as UTF-8 (for sniffing)."""
    wide = wide_encoding(head)
    if wide is None:
        return head
    # The head may end inside a character: sniff what decodes.
    return head[len(wide.bom):].decode(wide.codec, "ignore").encode("utf-8")


def sniff_format(path: str, head: bytes) -> str:
    """Guess an input format from the file name, then from its first bytes."""
    name = os.path.basename(path).lower()
    ext = os.path.splitext(name)[1]
    if ext in (".hl7", ".er7", ".mllp"):
        return "hl7"
    if ext in (".jsonl", ".ndjson"):
        return "jsonl"
    if ext == ".parquet":
        return "parquet"
    stripped = _narrow_head(head).lstrip(b"\xef\xbb\xbf\x0b \r\n\t")
    if stripped.startswith(b"START_OF_RECORD="):
        return "physionet"
    if stripped.startswith((b"MSH", b"FHS", b"BHS")):
        return "hl7"
    if stripped.startswith(b"PAR1"):
        return "parquet"
    if stripped.startswith(b"{"):
        return "jsonl"
    return "text"


def read_text(path: str, data: bytes) -> Iterator[Record]:
    """One document per file; the doc id is the file stem.

    UTF-8 (with or without its mark, kept as the text's first character),
    cp1252 and Latin-1 are read as :func:`decode_text` says; UTF-16 and
    UTF-32 only with their byte order mark (without it, their NUL bytes
    cannot be told from a binary file). A NUL left in the text means it is
    not a text document: quarantined.
    """
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        text = decode_wide(data)
    except UnicodeDecodeError:
        yield _quarantine(stem, "file starts with a UTF-16/32 byte order mark but "
                          "is not valid UTF-16/32", data, path, "text")
        return
    if text is None and b"\x00" not in data:
        # A UTF-8 mark stays the text's first character: offsets (a tag
        # run's identifier view, export-brat) count the file's characters as
        # BRAT tools and scorers read them; detectors never see it
        # (tagger.tagging.visible_view) and the research text drops it.
        text = decode_text(data)
        if data.startswith(codecs.BOM_UTF8):
            text = "\ufeff" + text
    if text is None or "\x00" in text:
        yield _quarantine(
            stem, "file contains NUL bytes: not a text document", data, path, "text"
        )
        return
    yield ClinicalDocument(doc_id=stem, text=text, source="text", origin=path)


# The JSONL key / Parquet column naming the patient a document is about (an
# MRN, a study subject id): the person key, as in annotated JSONL corpora.
PERSON_KEY = "person_key"


def _person_key(value: object) -> str | None:
    """A person key from a JSON value: a string or number, else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    key = str(value).strip()
    return key or None


def read_jsonl(path: str, data: bytes) -> Iterator[Record]:
    """One object per line with ``id`` and ``text``; ``person_key`` names the patient.

    Other keys become metadata, which the research extract publishes only for
    the keys ``run --keep-metadata`` names (``document_rewriter.Rewriter``).
    """
    stem = os.path.splitext(os.path.basename(path))[0]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        fallback_id = f"{stem}:{lineno}"
        try:
            obj = json.loads(decode_text(raw))
        except ValueError as exc:
            yield _quarantine(
                fallback_id,
                f"line {lineno}: invalid JSON ({exc.msg})",
                raw,
                path,
                "jsonl",
            )
            continue
        if not isinstance(obj, dict):
            yield _quarantine(
                fallback_id, f"line {lineno}: not a JSON object", raw, path, "jsonl"
            )
            continue
        try:
            # \ud800-style escapes decode to lone surrogates: not text, and
            # they would break every writer downstream.
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            yield _quarantine(
                fallback_id,
                f"line {lineno}: unpaired UTF-16 surrogate escape (not valid text)",
                raw,
                path,
                "jsonl",
            )
            continue
        doc_id = obj.get("id")
        text = obj.get("text")
        if doc_id is None or isinstance(doc_id, (dict, list)):
            yield _quarantine(
                fallback_id,
                f"line {lineno}: missing or invalid 'id'",
                raw,
                path,
                "jsonl",
            )
            continue
        if not isinstance(text, str):
            yield _quarantine(
                str(doc_id),
                f"line {lineno}: missing or non-string 'text'",
                raw,
                path,
                "jsonl",
            )
            continue
        metadata = tuple(
            (str(k), v if isinstance(v, str) else json.dumps(v, sort_keys=True))
            for k, v in sorted(obj.items())
            if k not in ("id", "text", PERSON_KEY)
        )
        yield ClinicalDocument(
            doc_id=str(doc_id),
            text=text,
            source="jsonl",
            origin=path,
            metadata=metadata,
            person_key=_person_key(obj.get(PERSON_KEY)),
        )


def read_physionet(
    path: str, data: bytes, gold: dict[str, tuple[PhiSpan, ...]] | None = None
) -> Iterator[Record]:
    """PhysioNet ``id.text`` records: doc id ``<patient>-<note>``, patient as person."""
    text = decode_text(data)
    pos = 0
    while True:
        m = _PHYSIONET_START.search(text, pos)
        if m is None:
            tail = text[pos:]
            if tail.strip():
                yield _quarantine(
                    f"{os.path.basename(path)}@{pos}",
                    "text outside any START_OF_RECORD block",
                    tail.encode("utf-8"),
                    path,
                    "physionet",
                )
            return
        if text[pos : m.start()].strip():
            yield _quarantine(
                f"{os.path.basename(path)}@{pos}",
                "text outside any START_OF_RECORD block",
                text[pos : m.start()].encode("utf-8"),
                path,
                "physionet",
            )
        patient, note = m.group(1).strip(), m.group(2).strip()
        doc_id = f"{patient}-{note}"
        end = text.find(_PHYSIONET_END, m.end())
        next_start = _PHYSIONET_START.search(text, m.end())
        if end < 0 or (next_start is not None and next_start.start() < end):
            stop = next_start.start() if next_start else len(text)
            yield _quarantine(
                doc_id,
                "record has no ||||END_OF_RECORD",
                text[m.start() : stop].encode("utf-8"),
                path,
                "physionet",
            )
            pos = stop
            continue
        body = text[m.end() : end]
        yield ClinicalDocument(
            doc_id=doc_id,
            text=body,
            source="physionet",
            origin=path,
            person_key=f"physionet:{patient}",
            gold=join_words((gold or {}).get(doc_id, ()), body),
        )
        pos = end + len(_PHYSIONET_END)


def read_physionet_gold(path: str) -> dict[str, tuple[PhiSpan, ...]]:
    """Read ``id-phi.phrase`` ``<patient> <note> <start> <end> <type> <text>``."""
    spans: dict[str, list[PhiSpan]] = defaultdict(list)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split(" ", 5)
            if len(parts) < 5:
                continue
            patient, note, start, end, tag = parts[:5]
            phrase = parts[5].rstrip("\n") if len(parts) > 5 else ""
            # A few phrases carry a trailing blank ("S. "); the PHI is the word.
            stop = int(start) + len(phrase.rstrip()) if phrase.strip() else int(end)
            spans[f"{patient}-{note}"].append(
                PhiSpan(int(start), min(int(end), stop), PHYSIONET_TAGS[tag], "gold")
            )
    return {k: tuple(sorted(v)) for k, v in spans.items()}


def join_words(spans: Iterable[PhiSpan], text: str) -> tuple[PhiSpan, ...]:
    """Rejoin gold words into phrases: same label, separated by one blank only.

    PhysioNet lists multi-word PHI one word per line; phrase-level metrics need
    the phrase back (``John Smith`` is one name, not two).
    """
    joined: list[PhiSpan] = []
    for span in sorted(spans):
        prev = joined[-1] if joined else None
        if (
            prev is not None
            and prev.label == span.label
            and span.start - prev.end == 1
            and text[prev.end] in " \t"
        ):
            joined[-1] = PhiSpan(prev.start, span.end, prev.label, prev.source)
        else:
            joined.append(span)
    return tuple(joined)


def read_parquet(path: str, data: bytes) -> Iterator[Record]:
    """Rows of a Parquet file with columns ``id`` and ``text``."""
    import io

    from deid_pipeline import parquet_files

    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        table = parquet_files.read_parquet(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - any pyarrow failure means unreadable
        yield _quarantine(stem, exc, data, path, "parquet")
        return
    missing = [c for c in ("id", "text") if c not in table.column_names]
    if missing:
        yield _quarantine(
            stem, f"parquet file lacks column(s) {missing}", data, path, "parquet"
        )
        return
    extra = [c for c in table.column_names if c not in ("id", "text", PERSON_KEY)]
    for i, row in enumerate(table.to_pylist()):
        doc_id, text = row["id"], row["text"]
        if doc_id is None or not isinstance(text, str):
            yield _quarantine(
                f"{stem}:{i}",
                f"row {i}: null id or non-string text",
                json.dumps(row, default=str).encode("utf-8"),
                path,
                "parquet",
            )
            continue
        metadata = tuple(
            (c, row[c] if isinstance(row[c], str) else json.dumps(row[c], default=str))
            for c in extra
        )
        yield ClinicalDocument(
            doc_id=str(doc_id),
            text=text,
            source="parquet",
            origin=path,
            metadata=metadata,
            person_key=_person_key(row.get(PERSON_KEY)),
        )


def read_records(path: str, data: bytes, fmt: str = "auto") -> Iterator[Record]:
    """Dispatch one file's bytes to the reader for ``fmt`` (``auto`` sniffs)."""
    if fmt == "auto":
        fmt = sniff_format(path, data[:64])
    if fmt == "text":
        yield from read_text(path, data)
    elif fmt == "jsonl":
        yield from read_jsonl(path, data)
    elif fmt == "physionet":
        yield from read_physionet(path, data)
    elif fmt == "parquet":
        yield from read_parquet(path, data)
    elif fmt == "hl7":
        from deid_pipeline.hl7.documents import read_hl7

        yield from read_hl7(path, data)
    else:
        raise ValueError(f"unknown input format {fmt!r}; choose from {FORMATS}")
