"""The one build cache (store/cache.py): a rebuild parses only records it has not seen and still
re-hashes every one; what other code kept is not used; verify and build share what they learn;
the cache can be deleted at any time and only costs time."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import NCU, ROOT
from ikreport.store import records as records_module
from ikreport.store.archive import Archive
from ikreport.store.cache import FILE
from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.errors import BuildError
from ikreport.commands.build import build_site

SAMPLE = ROOT / "sample_evidence"


@pytest.fixture
def arch(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "arch")
    return Archive.open(tmp_path / "arch")


@pytest.fixture
def decodes(monkeypatch):
    seen: list[str] = []
    real = records_module.decode

    def counting(data, where, known_valid=False):
        seen.append(where)
        return real(data, where, known_valid)

    monkeypatch.setattr(records_module, "decode", counting)
    return seen


def test_a_rebuild_parses_only_the_records_it_needs(arch, tmp_path, decodes):
    shutil.rmtree(arch.root / "reports")  # a report's values are read from whole records, on every build
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    total = len(arch.record_ids())
    assert len(decodes) >= total  # the first build parses every record once
    new = import_csv(arch, [NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"],
                     Context(title="one more", gpu="NVIDIA GeForce GTX 1650 Ti"))
    # a supersession's data (old, new, reason) fills the changes page, so it is read on every build
    stating = {f"{rid[2:]}.json" for rid in arch.record_ids() if arch.load(rid)["kind"] == "supersession"}
    decodes.clear()
    build_site(arch, out, cache_dir=cache)
    parsed = {os.path.basename(p) for p in decodes}
    assert f"{new[2:]}.json" in parsed  # the new record (files are named by the id, less its shard)
    assert parsed - stating == {f"{new[2:]}.json"}, parsed  # the others are known by their summaries


def test_a_tampered_record_is_caught_although_its_summary_is_kept(arch, tmp_path):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    victim = arch.record_path(arch.record_ids()[0])
    os.chmod(victim, 0o644)
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b'"title":"', b'"title":"X', 1))
    with pytest.raises(BuildError, match="IK108 the bytes do not hash to the file's name"):
        build_site(arch, out, cache_dir=cache)


def test_summaries_kept_under_other_rules_are_not_used(arch, tmp_path, decodes):
    """A summary is kept under the digest of what makes it (the schema, the checks, each kind's
    part, the summary code): one kept under other rules, here with a title no record has, is
    never read."""
    import sqlite3

    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    first = (out / "index.html").read_bytes()
    with sqlite3.connect(cache / FILE) as db:
        rows = db.execute("SELECT space, key, value FROM kept WHERE space LIKE 'summary %'").fetchall()
        assert len(rows) == len(arch.record_ids())
        db.execute("DELETE FROM kept WHERE space LIKE 'summary %'")
        for space, key, value in rows:
            entry = json.loads(value)
            entry["head"]["title"] = "a title no record has"
            db.execute("INSERT INTO kept VALUES (?, ?, ?)", ("summary another", key, json.dumps(entry).encode()))
    decodes.clear()
    build_site(arch, out, cache_dir=cache)
    assert len(decodes) >= len(arch.record_ids())  # parsed again, not taken from the kept summaries
    assert (out / "index.html").read_bytes() == first


def test_verify_and_build_share_what_they_learn(arch, tmp_path, decodes):
    """One cache: records a verify validated are not parsed by the build after it."""
    from ikreport.commands.verify import verify_archive
    from ikreport.store.cache import Cache

    shutil.rmtree(arch.root / "reports")  # a report's values are read from whole records, on every build
    cache = Cache(tmp_path / "cache")
    assert verify_archive(arch, cache=cache) == []
    cache.close()
    stating = {f"{rid[2:]}.json" for rid in arch.record_ids() if arch.load(rid)["kind"] == "supersession"}
    validations: list[str] = []
    real = records_module.validate
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(records_module, "validate", lambda record, where: validations.append(where) or real(record, where))
        build_site(arch, tmp_path / "site", cache_dir=tmp_path / "cache")
    assert validations == []  # pages read whole records, but none is validated again
    decodes.clear()
    build_site(arch, tmp_path / "site", cache_dir=tmp_path / "cache")
    assert {os.path.basename(p) for p in decodes} - stating == set()  # nothing new: nothing parsed


def test_a_summarised_record_answers_as_the_whole_record(arch):
    """A LazyRecord gives what the record itself gives for every field, with ``[]`` and
    ``get`` alike (its own ``get``, one call a field), and loads its data only when asked."""
    from ikreport.store.recordset import LazyRecord, summarize

    for rid in arch.record_ids():
        whole = arch.load(rid)
        loads: list[str] = []
        lazy = LazyRecord(summarize(whole), lambda loads=loads, rid=rid, whole=whole: loads.append(rid) or whole)
        for key in [*whole, "no-such-field"]:
            if key != "data":
                assert lazy.get(key) == whole.get(key) and lazy.get(key, "x") == whole.get(key, "x")
        assert loads == []
        assert lazy.get("data") == whole["data"] and lazy["data"] == whole["data"] and loads == [rid]
        assert dict(lazy) == whole
