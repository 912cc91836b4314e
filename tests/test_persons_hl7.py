"""Generated HL7 with several messages per patient: one person, one fake identity."""

from collections import defaultdict

import pyarrow.parquet as pq

from deid_pipeline.pipelines.job import run
from deid_pipeline.synthetic import generate_messages


def test_when_patient_has_several_messages_then_one_person_id_and_name_surrogate(
        tmp_path):
    messages = generate_messages(40, seed=3, kinds=("oru", "mdm"))
    src = tmp_path / "in"
    src.mkdir()
    patient_of = {}
    for i, m in enumerate(messages):
        (src / f"m{i:03d}.hl7").write_text(m.er7, encoding="utf-8")
        patient_of[m.message_id] = m.person_key
    key = tmp_path / "k"
    key.write_bytes(b"persons-hl7-test-key-0123456789ab")
    args = ["--input", f"{src}/*.hl7", "--key-file", str(key),
            "--detectors", "rules,dictionary"]
    run(args + ["--output", str(tmp_path / "a")])
    run(args + ["--output", str(tmp_path / "b")])

    documents = pq.read_table(tmp_path / "a" / "documents").to_pylist()
    person_ids = defaultdict(set)
    for doc in documents:
        person_ids[patient_of[doc["doc_id"].rsplit("-", 1)[0]]].add(doc["person_id"])
    assert len(person_ids) > 10
    assert all(len(ids) == 1 for ids in person_ids.values())
    assert len({next(iter(ids)) for ids in person_ids.values()}) == len(person_ids)

    family = {m.person_key: next(v for f, v, _l in m.header_identifiers
                                 if f == "PID.5.1") for m in messages}
    surrogates = defaultdict(set)
    for row in pq.read_table(tmp_path / "a" / "identifiers").to_pylist():
        patient = patient_of[row["doc_id"].rsplit("-", 1)[0]]
        if row["label"] == "PATIENT" and row["original"].lower() == family[
                patient].lower():
            surrogates[patient].add(row["replacement"].lower())
    several = [p for p, ids in person_ids.items()
               if sum(patient_of[d["doc_id"].rsplit("-", 1)[0]] == p
                      for d in documents) > 1]
    assert several and all(len(surrogates[p]) == 1 for p in several if surrogates[p])
    assert sum(1 for p in several if surrogates[p]) >= 3

    for table in ("documents", "identifiers", "persons", "quarantine"):
        a = sorted((tmp_path / "a" / table).iterdir())
        b = sorted((tmp_path / "b" / table).iterdir())
        assert [f.read_bytes() for f in a] == [f.read_bytes() for f in b], table
