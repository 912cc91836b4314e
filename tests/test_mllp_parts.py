"""The gateway's parts without a server: framing, ACKs, dedup index, store."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time

import pytest
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message as hl7apy_parse

from deid_pipeline.hl7.framing import frame_file
from deid_pipeline.mllp.ack import AckError, build_ack, read_ack, read_header
from deid_pipeline.mllp.dedup import DONE, WRITTEN, DedupIndex
from deid_pipeline.mllp.metrics import GatewayMetrics, LatencyHistogram
from deid_pipeline.mllp.server import FrameReader
from deid_pipeline.mllp.store import Commit, Store, mllp_frame

SB, EB, CR = b"\x0b", b"\x1c", b"\r"
MSG = (b"MSH|^~\\&|LAB|GENERAL HOSP|DEID|RESEARCH|20240101120000||ORU^R01^ORU_R01|"
       b"CTRL-42|P|2.5\rPID|1||123^^^H^MR||DOE^JANE\r")


# ------------------------------------------------------------------ framing


def _frames(chunks, max_bytes=1 << 20):
    a, b = socket.socketpair()
    with a, b:
        reader = FrameReader(b, max_bytes)
        for chunk in chunks:
            a.sendall(chunk)
        a.shutdown(socket.SHUT_WR)
        out = []
        while (frame := reader.next()) is not None:
            out.append((frame.kind, frame.data))
        return out


@pytest.mark.parametrize("chunks, expected", [
    ([SB + MSG + EB + CR], [("message", MSG)]),
    ([SB + MSG + EB + CR + b"\r\n" + SB + MSG + EB + CR],
     [("message", MSG), ("message", MSG)]),
    ([bytes([c]) for c in SB + MSG + EB + CR], [("message", MSG)]),
    ([SB + MSG + EB, CR + SB + MSG + EB + CR], [("message", MSG), ("message", MSG)]),
    ([b"garbage" + EB + CR + SB + MSG + EB + CR],
     [("junk", b"garbage"), ("message", MSG)]),
    ([b"noise before" + SB + MSG + EB + CR], [("message", MSG)]),
    ([SB + b"MSH|cut" + SB + MSG + EB + CR],
     [("unterminated", b"MSH|cut"), ("message", MSG)]),
    ([SB + MSG + b"unfinished"], []),
])
def test_when_bytes_arrive_then_frames_are_cut_at_mllp_blocks(chunks, expected):
    assert _frames(chunks) == expected


def test_when_frame_exceeds_limit_then_one_oversize_frame_and_the_next_is_read():
    big = SB + b"MSH|" + b"x" * 5000 + EB + CR
    assert _frames([big, SB + MSG + EB + CR], max_bytes=1024) == [
        ("oversize", b""), ("message", MSG)]


def test_when_stopping_then_reader_ends_without_waiting_for_the_rest():
    a, b = socket.socketpair()
    with a, b:
        stop = threading.Event()
        reader = FrameReader(b, 1 << 20, stop.is_set)
        a.sendall(SB + MSG[:20])
        threading.Timer(0.3, stop.set).start()
        started = time.monotonic()
        assert reader.next() is None
        assert time.monotonic() - started < 2


# --------------------------------------------------------------------- ACKs


def test_when_acking_then_msh_is_swapped_msa_names_the_message_and_hl7apy_reads_it():
    ack = build_ack(read_header(MSG), "AA").decode()
    msh, msa = ack.rstrip("\r").split("\r")
    fields = msh.split("|")
    assert fields[2:6] == ["DEID", "RESEARCH", "LAB", "GENERAL HOSP"]
    assert fields[8] == "ACK^R01^ACK"
    assert fields[9] != "CTRL-42" and len(fields[9]) <= 20
    assert fields[10:12] == ["P", "2.5"]
    assert msa == "MSA|AA|CTRL-42"
    hl7apy_parse(ack, validation_level=VALIDATION_LEVEL.TOLERANT)
    assert read_ack(ack.encode()) == ("AA", "CTRL-42")


def test_when_error_ack_then_reason_is_escaped_in_msa3_and_err():
    ack = build_ack(read_header(MSG), "AE", "bad | field ^ here").decode()
    assert "MSA|AE|CTRL-42|bad \\F\\ field \\S\\ here\r" in ack
    assert ack.split("\r")[2].startswith("ERR|||207^")
    hl7apy_parse(ack, validation_level=VALIDATION_LEVEL.TOLERANT)


def test_when_sender_uses_other_delimiters_then_ack_uses_them_too():
    msg = MSG.replace(b"|", b"#").replace(b"^", b"$")
    ack = build_ack(read_header(msg), "AA").decode()
    assert ack.startswith("MSH#$~\\&#DEID#RESEARCH#LAB#") and "MSA#AA#CTRL-42" in ack


def test_when_control_ids_are_made_then_they_are_unique():
    ids = {build_ack(None, "AR").split(b"|")[9] for _ in range(5000)}
    assert len(ids) == 5000


@pytest.mark.parametrize("data", [
    b"", b"hello", b"PID|1||123", b"MSH|", b"MSH|^~\\&|A|B|C|D|2024||ORU^R01||P|2.5",
    b"MSH|^~\\&|A|B|C|D|2024|||X1|P|2.5", b"MSHA^~\\&|A", b"MSH|^^\\&|A|B|C|D||ORU|X|P",
])
def test_when_msh_is_unusable_then_ack_error(data):
    with pytest.raises(AckError):
        read_header(data)


# -------------------------------------------------------------------- dedup


def _index(tmp_path, clock=time.time, days=7.0):
    path = tmp_path / "state" / "seen.log"
    path.parent.mkdir(exist_ok=True)
    return DedupIndex(str(path), days * 86400, clock)


def test_when_index_reloaded_then_states_survive_and_old_or_torn_lines_go(tmp_path):
    index = _index(tmp_path)
    fd = index.load()
    key = index.key(read_header(MSG))
    assert index.claim(key) is None
    os.write(fd, index.line(key, WRITTEN) + index.line(key, DONE))
    index.release(key, DONE)
    os.write(fd, b"f" * 32 + b" A 1000\n")  # older than the window
    os.write(fd, b"0123 A")  # cut short by a crash
    os.close(fd)
    again = _index(tmp_path)
    os.close(again.load())
    assert again.key(read_header(MSG)) == key  # the salt is kept
    assert again.claim(key) == DONE
    assert len(again) == 1
    content = (tmp_path / "state" / "seen.log").read_bytes()
    assert content.count(b"\n") == 1 and key.encode() in content
    assert b"CTRL-42" not in content and b"GENERAL" not in content


def test_when_same_key_claimed_twice_then_second_waits_for_the_first(tmp_path):
    index = _index(tmp_path)
    os.close(index.load())
    key = "k" * 32
    assert index.claim(key) is None
    seen = []
    waiter = threading.Thread(target=lambda: seen.append(index.claim(key)))
    waiter.start()
    time.sleep(0.2)
    assert seen == []
    index.release(key, DONE)
    waiter.join(5)
    assert seen == [DONE]
    index.release(key)


# -------------------------------------------------------------------- store


def test_when_files_roll_then_each_is_published_and_protected(tmp_path):
    store = Store(str(tmp_path), roll_messages=2)
    store.open()
    index = _index(tmp_path)
    store.start(index.load())
    for n in range(5):
        store.submit(Commit(hl7=mllp_frame(MSG), identifiers=b'{"n": %d}\n' % n,
                            index=b"k%d A 1\n" % n)).result(10)
    store.close()
    hl7_files = sorted(os.listdir(tmp_path / "hl7"))
    assert len(hl7_files) == 3 and all(n.endswith(".hl7") for n in hl7_files)
    frames = [f for n in hl7_files
              for f in frame_file((tmp_path / "hl7" / n).read_bytes()).frames()]
    assert [f.data for f in frames] == [MSG] * 5
    ids = sorted(os.listdir(tmp_path / "identifiers"))
    assert [n[:-6] for n in ids] == [n[:-4] for n in hl7_files]
    for directory in ("identifiers", "state"):
        assert stat.S_IMODE(os.stat(tmp_path / directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "identifiers" / ids[0]).st_mode) == 0o600
    assert (tmp_path / "state" / "seen.log").read_bytes().count(b"\n") == 5


def test_when_a_crash_left_a_torn_part_file_then_start_cuts_and_publishes_it(tmp_path):
    (tmp_path / "hl7").mkdir()
    (tmp_path / "identifiers").mkdir()
    (tmp_path / "hl7" / "old.hl7.part").write_bytes(
        mllp_frame(MSG) + mllp_frame(MSG) + SB + MSG[:30])
    (tmp_path / "identifiers" / "old.jsonl.part").write_bytes(b'{"a": 1}\n{"b":')
    (tmp_path / "identifiers" / "empty.jsonl.part").write_bytes(b'{"b":')
    store = Store(str(tmp_path))
    store.open()
    assert (tmp_path / "hl7" / "old.hl7").read_bytes() == mllp_frame(MSG) * 2
    assert (tmp_path / "identifiers" / "old.jsonl").read_bytes() == b'{"a": 1}\n'
    assert not (tmp_path / "identifiers" / "empty.jsonl.part").exists()
    with pytest.raises(OSError):  # one gateway per directory
        Store(str(tmp_path)).open()
    store.start(_index(tmp_path).load())
    store.close()


# ------------------------------------------------------------------ metrics


def test_when_latencies_recorded_then_percentiles_are_within_one_bucket():
    hist = LatencyHistogram()
    for ms in range(1, 101):
        hist.add(ms / 1000)
    assert 0.050 <= hist.percentile(0.5) <= 0.050 * 1.06
    assert 0.099 <= hist.percentile(0.99) <= 0.099 * 1.06


def test_when_status_line_is_made_then_window_restarts_and_final_covers_all():
    now = [0.0]
    metrics = GatewayMetrics(clock=lambda: now[0])
    for _ in range(30):
        metrics.record("AA", 0.005)
    metrics.record("AE", 0.010)
    metrics.quarantined("leak_guard")
    now[0] = 10.0
    line = metrics.status_line()
    assert line.startswith("mllp: last 10.0s: 3.1 msg/s")
    assert "AA 30 (duplicates 0), AE 1, AR 0" in line
    assert "quarantined 1 (leak_guard 1)" in line
    now[0] = 20.0
    assert "last 10.0s: 0.0 msg/s, p50 -" in metrics.status_line()
    assert metrics.status_line(final=True).startswith("mllp: stopped after 20.0s: 1.6")


def test_workers_are_given_cpus_round_robin():
    from deid_pipeline.mllp.worker import cpu_of_slot

    assert [cpu_of_slot(n, [2, 5, 7]) for n in range(7)] == [2, 5, 7, 2, 5, 7, 2]


def _pid_and_cpus() -> tuple[int, tuple[int, ...]]:
    # Busy long enough that the other worker takes the next probe.
    time.sleep(0.3)
    return os.getpid(), tuple(sorted(os.sched_getaffinity(0)))


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity")
                    or len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
@pytest.mark.parametrize("pin", [True, False])
def test_when_workers_are_pinned_then_each_has_a_cpu_of_its_own(pin):
    from deid_pipeline.mllp.worker import Deidentifier, EngineConfig
    from deid_pipeline.tagger.detectors import TaggerConfig

    config = EngineConfig(TaggerConfig(("rules",)), "surrogate", b"k" * 32)
    deidentifier = Deidentifier(config, workers=2, pin=pin)
    deidentifier.start()
    try:
        probes = [deidentifier._pool.submit(_pid_and_cpus) for _ in range(6)]
        cpus_by_pid = dict(p.result(timeout=60) for p in probes)
    finally:
        deidentifier.close()
    assert len(cpus_by_pid) == 2
    if pin:
        assert all(len(cpus) == 1 for cpus in cpus_by_pid.values())
        assert len(set(cpus_by_pid.values())) == 2
    else:
        allowed = tuple(sorted(os.sched_getaffinity(0)))
        assert all(cpus == allowed for cpus in cpus_by_pid.values())


def test_when_the_gateway_is_given_an_as_of_year_then_its_engines_use_it():
    import argparse

    from deid_pipeline.mllp.cli import _config, add_arguments

    parser = add_arguments(argparse.ArgumentParser())
    args = parser.parse_args(["--output", "out", "--ephemeral-key",
                              "--as-of-year", "2020"])
    config, _key_info = _config(args)
    assert config.engine.as_of_year == 2020


def test_the_gateway_tags_at_the_default_bias_and_its_help_says_which():
    import argparse

    from deid_pipeline.mllp.cli import _config, add_arguments
    from deid_pipeline.tagger.detectors import DEFAULT_BIAS

    parser = add_arguments(argparse.ArgumentParser())
    config, _key_info = _config(parser.parse_args(["--output", "out",
                                                   "--ephemeral-key"]))
    assert config.engine.tagger.bias == DEFAULT_BIAS
    assert f"else {DEFAULT_BIAS})" in " ".join(parser.format_help().split())


def test_the_gateway_takes_a_site_models_bias_and_checks_its_rules_first(tmp_path):
    """As ``run`` does: a model's recorded bias, ``--rules`` validated at startup."""
    import argparse
    import shutil

    from deid_pipeline.mllp.cli import _config, add_arguments
    from deid_pipeline.tagger.crf_model import DEFAULT_MODEL_PATH
    from deid_pipeline.tagger.model_metadata import append_metadata

    site_model = tmp_path / "site.crfsuite"
    shutil.copyfile(DEFAULT_MODEL_PATH, site_model)
    append_metadata(str(site_model), {"bias": -1.5})
    rules = tmp_path / "rules.json"
    rules.write_text('{"deny": {"HOSPITAL": ["Quartermain"]}}')
    parser = add_arguments(argparse.ArgumentParser())
    base = ["--output", "out", "--ephemeral-key", "--model", str(site_model)]
    config, _key_info = _config(parser.parse_args([*base, "--rules", str(rules)]))
    assert config.engine.tagger.bias == -1.5
    assert config.engine.tagger.rules_path == str(rules)
    config, _key_info = _config(parser.parse_args([*base, "--bias", "-3"]))
    assert config.engine.tagger.bias == -3.0
    rules.write_text('{"deny": {"HOSPITAL": ["Quartermain"]}, "colour": 1}')
    with pytest.raises(ValueError, match="colour"):
        _config(parser.parse_args([*base, "--rules", str(rules)]))
