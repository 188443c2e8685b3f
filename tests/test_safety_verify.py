"""Issue 12, items 11 and part of 12: a hostile site manifest, non-canonical records, bad
supersessions, terminal escapes in record text, and declared blob sizes that are wrong.
Every case ends in one-line problems or errors, never a traceback (CliRunner re-raises)."""

from __future__ import annotations

import hashlib
import gzip
import json
import os
import shutil
import threading

import orjson
import pytest
import rfc8785
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, blob_path, record_path
from ikreport.store import records
from ikreport.store.archive import Archive
from ikreport.store.backend import ID_RX
from ikreport.commands.check import check
from ikreport.cli.main import cli
from ikreport.errors import NonCanonicalRecordError, SiteManifestError, SupersessionError
from ikreport.commands.supersede import supersede
from ikreport.commands.verify import verify_archive
from ikreport.commands.verify_site import verify_site
from siteserver import serve

SITE = ROOT / "site"


def put_raw(archive: Archive, data: bytes) -> str:
    """Store bytes as a record as another tool might: named by their hash, whatever they are."""
    rid = hashlib.sha256(data).hexdigest()
    path = record_path(archive, rid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rid


# the least each kind's data holds (the schema says per kind what data is); other kinds are free
LEAST_DATA = {"ncu-profile": {"pages": [], "launch_count": 0, "kernel_count": 0, "profiled_time_us": None,
                              "devices": [], "compute_capabilities": [], "kernels": [], "launches": []},
              "environment": {"gpu_count": 0, "gpus": []}}


def record(archive: Archive, title: str = "t", kind: str = "ncu-profile", size_delta: int = 0, **extra) -> dict:
    body = f"blob of {title}".encode()
    blob = archive.put_blob(body)
    return records.new_record(
        kind, title, collected_at="2026-12-02T00:00:00Z", subject={"gpu": "NVIDIA H200"},
        method={"tool": "ncu", "tool_version": None, "command": None, "options": {}, "how": "test"},
        data=LEAST_DATA.get(kind, {"value": 1.5}), limitations=["a limitation"],
        sources=[{"role": "ncu-raw-csv", "id": blob, "size": len(body) + size_delta, "media_type": "text/csv",
                  "name": "x.csv"}], **extra)


def superseding(archive: Archive, old: str, new: str) -> str:
    """A supersession record written directly, as a hand-made or hostile archive would hold."""
    return archive.put_record(records.new_record(
        "supersession", f"{new[:8]} replaces {old[:8]}", collected_at=None, subject={},
        method={"tool": "ikreport supersede", "tool_version": None, "command": None, "options": {}, "how": "test"},
        data={"old": old, "new": new, "reason": "r"}, limitations=[], cites=[new],
        supersedes=[{"id": old, "reason": "r"}]))


@pytest.fixture
def archive(tmp_path):
    archive = Archive.create(tmp_path / "arch")
    archive.records_dir.mkdir(parents=True)  # an empty archive: its folders exist before any record
    archive.blobs_dir.mkdir()
    return archive


# -- canonical form ----------------------------------------------------------------------

def test_a_pretty_printed_record_fails_verify_and_cannot_be_loaded(archive, run):
    rid = put_raw(archive, json.dumps(record(archive), indent=1, sort_keys=True).encode())
    problems = verify_archive(archive)
    assert len(problems) == 1 and "not in canonical form (RFC 8785" in problems[0]
    assert problems[0].startswith(f"{record_path(archive, rid)}: ")
    with pytest.raises(NonCanonicalRecordError):
        archive.load(rid)
    result = run("show", rid, "--archive", archive.root)
    assert result.exit_code == 1 and "not in canonical form" in result.output and "Traceback" not in result.output


def test_a_record_with_a_duplicate_key_fails_verify_naming_the_key(archive, run):
    good = rfc8785.dumps(record(archive))
    # the first "title" is what a json.loads-style reader keeps last... or not: refuse both readings
    rid = put_raw(archive, good.replace(b'"title":', b'"title":"forged","title":', 1))
    (problem,) = verify_archive(archive)
    assert "the key 'title' appears twice in one object" in problem
    assert run("verify", archive.root, "--no-cache").exit_code == 1
    findings = check(archive).findings
    assert [(f.code, f.file) for f in findings] == [("IK108", str(record_path(archive, rid)))]


def test_keys_out_of_order_and_numbers_not_in_shortest_form_are_refused(archive):
    value = record(archive, kind="note")  # a kind whose data the schema leaves free
    value["data"] = {"b": 1, "a": 100.0}
    for data in (orjson.dumps(value), orjson.dumps(value, option=orjson.OPT_SORT_KEYS)):  # 'b' before 'a'; "100.0"
        rid = put_raw(archive, data)
        with pytest.raises(NonCanonicalRecordError):
            archive.load(rid)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.integers(2**52, 2**54)  # RFC 8785 stops at 2**53
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.sampled_from(["rfc8785", "orjson", "json"]))
def test_the_canonical_check_accepts_exactly_rfc8785_bytes(value, writer):
    try:
        data = {"rfc8785": rfc8785.dumps, "orjson": lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS),
                "json": lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
                }[writer](value)
    except rfc8785.CanonicalizationError:
        return
    parsed = orjson.loads(data)
    try:
        expected = rfc8785.dumps(parsed) == data
    except rfc8785.CanonicalizationError:
        expected = False
    try:
        records.check_canonical(data, parsed, "x")
        accepted = True
    except NonCanonicalRecordError:
        accepted = False
    assert accepted == expected
    if expected:
        assert records.canonical(parsed) == data


@pytest.mark.parametrize("value", [
    {"text": "compute capability 12.0); only 8.0 of the 32 (time-1)", "n": 12.5},  # look-alikes in text
    {"note": "v1.0, 5e-3", "n": 1},  # closer ones: the slow path, which accepts them
    {"n": 100.0}, {"n": [-0.0]}, {"n": 1e-7}, {"n": 1e16}, {"n": 1e21}, {"n": 2**53 + 1},  # numbers orjson writes
    {"n": -1234567890123456}, {"\ue000": 1, "\U0001f600": 2},  # otherwise, or keys it orders otherwise
    {"n": [-1] * 300 + [1e16]}, {"t": "a + b " * 300, "n": 1e16},  # an exponent after many signs
])
def test_the_canonical_check_tells_numbers_from_text_that_looks_like_them(value):
    """Text that looks like a number orjson writes differently keeps a record on orjson's own
    sorted output; the numbers themselves still decide by RFC 8785's own bytes."""
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    try:
        expected = rfc8785.dumps(value) == data
    except rfc8785.CanonicalizationError:
        expected = False
    try:
        records.check_canonical(data, orjson.loads(data), "x")
        accepted = True
    except NonCanonicalRecordError:
        accepted = False
    assert accepted == expected
    if "text" in value:
        assert expected and not records._may_differ(data)


# -- declared blob size --------------------------------------------------------------------

def test_a_declared_blob_size_that_differs_from_the_file_fails_verify_and_check(archive):
    rid = archive.put_record(record(archive, size_delta=1000))
    (problem,) = verify_archive(archive)
    assert problem.startswith(f"{record_path(archive, rid)}: declares blob ") and "bytes, but it is " in problem
    (finding,) = check(archive).findings
    assert finding.code == "IK108" and "declares blob" in finding.message


def test_a_truncated_blob_is_not_blamed_on_the_record_alone_by_check(archive):
    """check reads a compressed blob's size from its gzip trailer, without hashing it: a blob cut
    short gives a wrong size there, which check blamed on the record ("re-collect it"). It now
    says the blob may be damaged, and verify, which hashes it, names the blob."""
    rid = archive.put_record(record(archive))
    (blob,) = [s["id"] for s in archive.load(rid)["sources"]]
    path = blob_path(archive, blob)
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 10)
    (finding,) = check(archive).findings
    assert finding.code == "IK108" and finding.message.endswith("(or the blob is damaged: 'ikreport verify' tells which)")
    assert any(p.startswith(f"{path}: not a whole gzip file") for p in verify_archive(archive))


# -- supersession ----------------------------------------------------------------------------

def test_a_record_superseded_by_one_of_another_kind_is_refused(archive, run):
    old = archive.put_record(record(archive, "old"))
    new = archive.put_record(record(archive, "new", kind="environment"))
    with pytest.raises(SupersessionError):
        supersede(archive, old, new, "wrong kind")
    result = run("supersede", old, "--by", new, "--reason", "x", "--archive", archive.root)
    assert result.exit_code == 1 and "a correction must be of the same kind" in result.output
    by = superseding(archive, old, new)
    (problem,) = verify_archive(archive)
    assert problem.startswith(f"{record_path(archive, by)}: replaces ncu-profile record ")
    assert [f.code for f in check(archive).findings] == ["IK109"]


def test_a_record_with_two_successors_is_refused(archive):
    old, a, b = (archive.put_record(record(archive, t)) for t in ("old", "a", "b"))
    supersede(archive, old, a, "first fix")
    with pytest.raises(SupersessionError):
        supersede(archive, old, b, "second fix")
    superseding(archive, old, b)
    (problem,) = verify_archive(archive)
    assert "a second successor" in problem
    assert [f.code for f in check(archive).findings] == ["IK109"]


def test_a_supersession_cycle_is_refused_and_the_build_stops_in_one_line(archive, tmp_path, run):
    a, b = (archive.put_record(record(archive, t)) for t in ("a", "b"))
    supersede(archive, a, b, "fix")
    with pytest.raises(SupersessionError):
        supersede(archive, b, a, "fix back")
    superseding(archive, b, a)
    problems = verify_archive(archive)
    assert len(problems) == 2 and all("supersession cycle" in p for p in problems)
    assert {f.code for f in check(archive).findings} == {"IK109"}
    result = run("build", archive.root, "-o", tmp_path / "out", "--cache-dir", tmp_path / "cache")
    assert result.exit_code == 1 and "IK109" in result.output and len(result.output.strip().splitlines()) == 1


# -- terminal output -----------------------------------------------------------------------

HOSTILE = "evil\x1b]52;c;cm0gLXJmIH4K\x07 \x1b[2J\x9b31m\x9d0;title\x9c\rfake line\nnext"


def test_list_and_show_print_no_terminal_control_characters(archive, run):
    value = record(archive, HOSTILE, kind="note")  # a profile needs data this test does not give
    value["limitations"] = [HOSTILE]
    rid = archive.put_record(value)
    for args in (("list",), ("show", rid[:12])):
        out = run(*args, "--archive", archive.root).output
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in out), repr(out)
        assert "\\x1b]52;c;cm0gLXJmIH4K\\x07" in out and "\\x9b31m" in out
    assert len(run("list", "--archive", archive.root).output.splitlines()) == 1


def test_show_json_stays_valid_json_with_c1_escaped(archive, run):
    rid = archive.put_record(record(archive, HOSTILE))
    out = run("show", rid, "--json", "--archive", archive.root).output
    assert json.loads(out)["title"] == HOSTILE
    assert not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in out)


def test_error_messages_quoting_user_text_send_no_escape_sequences(archive, run):
    result = run("check", archive.root, "--reports", "reports\x1b]52;c;cm0gLXJmIH4K\x07")
    assert result.exit_code == 1 and "\x1b" not in result.output and "\\x1b]52" in result.output


# -- verify --site ----------------------------------------------------------------------------

@pytest.fixture
def site(tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(SITE, copy)
    return copy


def with_manifest(site, change) -> None:
    path = site / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    os.chmod(path, 0o644)
    path.write_text(json.dumps(manifest))


def test_a_record_or_blob_left_out_of_the_manifest_is_still_hashed_by_its_name(site, run):
    """A manifest cut down ('records' and 'blobs' without a record and a blob whose files it still
    lists) hid both files, changed, from verify --site, and so from publish."""
    record = next((site / "e").glob("*.json"))
    blob = sorted((site / "b").glob("*.gz"))[0]
    with_manifest(site, lambda m: (m["records"].remove(record.stem),
                                   m["blobs"].remove(next(b for b in m["blobs"] if b["path"] == f"b/{blob.name}"))))
    for path, data in ((record, record.read_bytes().replace(b'"kind"', b'"kind" ')), (blob, gzip.compress(b"tampered\n"))):
        os.chmod(path, 0o644)
        path.write_bytes(data)
    result = run("verify", "--site", site)
    assert result.exit_code == 1
    assert f"{site}/e/{record.name}: does not hash to its name (tampered or damaged)" in result.stdout
    assert f"{site}/b/{blob.name}: does not hash to {blob.name[:12]} (tampered or damaged)" in result.stdout
    assert f"'records' leaves out e/{record.name}, which 'files' names" in result.stdout
    assert f"'blobs' leaves out b/{blob.name}, which 'files' names" in result.stdout


@pytest.mark.parametrize("path", ["index.html", "assets/site.js", "index.md"])
def test_a_page_or_script_edited_since_the_build_is_named(site, run, path):
    """Every file's sha256 is in the manifest; verify --site (and publish, which asks it) did not
    look at it, so a page or the script that checks hashes in the browser could be changed."""
    os.chmod(site / path, 0o644)
    (site / path).write_bytes((site / path).read_bytes().replace(b"a", b"b", 1))
    result = run("verify", "--site", site)
    assert result.exit_code == 1
    assert result.stdout == (f"{site}/{path}: not as the build wrote it (its sha256 is not the one manifest.json "
                             "gives): edited or damaged since; rebuild the site\n")


RID = "0" * 64
# the manifest lists every sample record: an appended one is the next index
SAMPLE_RECORDS = len(list((ROOT / "sample_evidence" / "records").rglob("*.json")))
SAMPLE_BLOBS = sum(1 for p in (ROOT / "sample_evidence" / "blobs").rglob("*") if p.is_file())  # each is cited
NOT_ID, NOT_B = f"records[{SAMPLE_RECORDS}] is not a record id", f"blobs[{SAMPLE_BLOBS}].path is not b/"


@pytest.mark.parametrize("change, expect", [
    pytest.param(lambda m: m.pop("records"), "'records' is not a list", id='no-records'),
    pytest.param(lambda m: m.update(records={"a": 1}), "'records' is not a list", id='records-not-list'),
    pytest.param(lambda m: m.update(blobs="b/x"), "'blobs' is not a list", id='blobs-not-list'),
    pytest.param(lambda m: m["records"].append(42), NOT_ID, id='record-id-int'),
    pytest.param(lambda m: m["records"].append("../../etc/shadow"), NOT_ID, id='record-id-dotdot'),
    pytest.param(lambda m: m["records"].append("ABC"), NOT_ID, id='record-id-not-hex'),
    pytest.param(lambda m: m["blobs"].append([]), f"blobs[{SAMPLE_BLOBS}].id is not a blob id", id='blob-not-object'),
    pytest.param(lambda m: m["blobs"].append({"path": "b/x"}), f"blobs[{SAMPLE_BLOBS}].id is not a blob id", id='blob-no-id'),
    pytest.param(lambda m: m["blobs"].append({"id": RID, "path": "/etc/shadow"}), NOT_B, id='blob-etc-shadow'),
    pytest.param(lambda m: m["blobs"].append({"id": RID, "path": "/dev/zero"}), NOT_B, id='blob-dev-zero'),
    pytest.param(lambda m: m["blobs"].append({"id": RID, "path": f"b/../../../etc/{RID}"}), NOT_B, id='blob-dotdot'),
    pytest.param(lambda m: m["blobs"].append({"id": RID, "path": 7}), NOT_B, id='blob-path-int'),
    pytest.param(lambda m: m["blobs"].append({"id": RID, "path": f"b/{RID}.csv"}), f"b/{RID}.csv: missing", id='blob-missing'),
])
def test_verify_site_trusts_nothing_in_the_manifest(site, change, expect, monkeypatch, run):
    with_manifest(site, change)
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    result = run("verify", "--site", site)
    assert result.exit_code == 1 and expect in result.stdout, result.output
    assert not any(p.startswith("/") and not p.startswith(str(site)) or ".." in p for p in opened), opened


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "{\"schema\": 5}", "[" * 100_000])
def test_verify_site_refuses_a_manifest_that_is_not_one_in_one_line(site, text, run):
    os.chmod(site / "manifest.json", 0o644)
    (site / "manifest.json").write_text(text)
    result = run("verify", "--site", site)
    assert result.exit_code == 1 and result.output.startswith("Error: ") and len(result.output.splitlines()) == 1
    with pytest.raises(SiteManifestError):
        verify_site(str(site))


def test_verify_site_never_follows_a_link_or_reads_a_special_file(site, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("key")
    victim = next((site / "e").glob("*.json"))
    victim.unlink()
    victim.symlink_to(secret)  # a record page's JSON pointing out of the site
    blob = next((site / "b").glob("*"))
    blob.unlink()
    os.mkfifo(blob)  # opening a FIFO for reading would wait for a writer for ever
    (site / "assets" / "link.css").symlink_to("/etc/passwd")
    done = []
    worker = threading.Thread(target=lambda: done.append(verify_site(str(site))), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert done, "verify --site hung on a FIFO"
    _count, problems = done[0]
    text = "\n".join(problems)
    assert f"{victim.name}: is or passes through a symbolic link" in text
    assert f"{blob.name}: not a regular file" in text
    assert "assets/link.css: symbolic link in the site" in text and f"e/{victim.name}: symbolic link in the site" in text
    assert "key" not in text


def test_verify_site_over_http_refuses_paths_out_of_the_site(site, tmp_path, run):
    with_manifest(site, lambda m: m["blobs"].append({"id": RID, "path": "../../etc/passwd"}))
    with serve(site, tmp_path) as url:
        result = run("verify", "--site", url)
    assert result.exit_code == 1 and NOT_B in result.stdout
    assert len(result.stdout.splitlines()) == 1


_MANIFEST_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    | st.sampled_from(["/etc/shadow", "/dev/zero", "../manifest.json", "b/" + RID, RID, "e", "b"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["id", "path", "x"]), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["records", "blobs", "other"]), _MANIFEST_VALUE, max_size=3))
def test_verify_site_gives_one_problem_per_bad_entry_of_any_manifest(tmp_path_factory, manifest):
    """The site holds the manifest alone, so every entry it lists is a problem: a record or blob
    entry that is not one, or one whose file is missing. Only a manifest listing nothing is clean."""
    site = tmp_path_factory.mktemp("site")
    (site / "manifest.json").write_text(json.dumps({"schema": "ikreport.manifest/1", **manifest}))
    count, problems = verify_site(str(site))
    listed = manifest.get("records")
    blobs = manifest.get("blobs", [])
    ids = [r for r in listed if isinstance(r, str) and ID_RX.match(r)] if isinstance(listed, list) else []
    assert count == len(ids)  # the record ids it checked
    assert len(problems) == (len(listed) if isinstance(listed, list) else 1) + (len(blobs) if isinstance(blobs, list) else 1)
    assert all("\n" not in p and p.startswith(f"{site}/") for p in problems)
    assert [p for p in problems if p.startswith(f"{site}/e/")] == [
        f"{site}/e/{rid}.json: missing; rebuild the site or copy the file back" for rid in ids]


def test_verify_site_names_planted_and_missing_files_on_one_line_each(site, run):
    (site / "e" / "planted\n\x1b]52;c;eA==\x07.html").write_text("x")
    (site / "index.md").unlink()
    result = run("verify", "--site", site)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and "\x1b" not in result.stdout
    assert lines[0] == f"{site}/e/planted\\x0a\\x1b]52;c;eA==\\x07.html: not written by the build (manifest.json " \
                       "does not list it); delete it (a build leaves files it did not write alone)"
    assert lines[1] == f"{site}/index.md: listed in manifest.json but not in the site; rebuild the site"


def test_verify_site_refuses_a_files_list_that_leaves_the_site(site, run):
    with_manifest(site, lambda m: m["files"].append("../../etc/passwd"))
    result = run("verify", "--site", site)
    assert result.exit_code == 1 and result.stdout == \
        f"{site}/manifest.json: 'files' is not a list of paths inside the site; rebuild the site\n"


def test_verify_prints_a_planted_file_name_on_one_line_without_escapes(archive, run):
    archive.put_record(record(archive))
    shard = next(p for p in archive.records_dir.iterdir())
    (shard / "x\n\x1b[2Jfake: ok.json").write_text("{}")
    (archive.records_dir / ".tmp-\x1b]0;t\x07").write_text("")
    result = run("verify", archive.root)
    assert result.exit_code == 1 and "\x1b" not in result.output
    assert len(result.stdout.splitlines()) == 2
    assert result.stdout.splitlines()[1] == f"{shard}/x\\x0a\\x1b[2Jfake: ok.json: unexpected file in the archive; remove it"


# Found by the review of the merged safety work.
@pytest.mark.parametrize("folder", ["blobs", "records"])
def test_a_linked_records_or_blobs_folder_fails_verify_check_and_build_alike(tmp_path, folder):
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    os.rename(arch / folder, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", arch / folder)
    problems = verify_archive(Archive.open(arch))
    assert f"{arch / folder}: symbolic link in the archive; archives hold plain folders and files only" in problems
    assert problems.count(problems[0]) == 1  # said once, not once per record
    for args in (("check", arch), ("build", arch, "-o", tmp_path / "site")):
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code == 1
        assert result.output.strip().endswith(f"{arch / folder}: is a symbolic link; archives hold plain folders and files only")


def test_a_record_file_replaced_by_a_link_fails_every_command_naming_it(tmp_path):
    """A record file that is a link was passed over: the build left its page out with exit 0,
    and check and list said nothing. Each now refuses in one line naming the link, as verify
    lists it, and as a linked records/ folder is refused."""
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    victim = record_path(Archive.open(arch), Archive.open(arch).record_ids()[0])
    kept = tmp_path / "kept.json"
    shutil.copyfile(victim, kept)
    os.chmod(victim.parent, 0o755)
    victim.unlink()
    victim.symlink_to(kept)
    assert f"{victim}: symbolic link in the archive; remove it" in verify_archive(Archive.open(arch))
    for args in (("check", arch), ("build", arch, "-o", tmp_path / "site"), ("list", "--archive", arch)):
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code == 1, result.output
        assert result.stderr == f"Error: {victim}: is a symbolic link; archives hold plain files only\n"
    assert not (tmp_path / "site").exists()


def test_check_prints_no_escape_sequences_from_a_report_file_name(tmp_path, run):
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    os.chmod(arch / "reports", 0o755)
    (arch / "reports" / "a\x1b]52;c;cHduZWQ=\x07.md").write_text("---\ntitle: t\nsummary: s\n---\nx [ev:zz]\n")
    for args in (("check", arch), ("check", arch, "--json")):
        result = run(*args)
        assert result.exit_code == 1
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "cHduZWQ=" in result.output
