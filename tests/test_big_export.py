"""Big exports are streamed (checked, hashed and read a chunk at a time): the record is the
one the whole-file reader makes, and a cut or broken export is refused the same way."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, blob_path
from ikreport.analysis.ncu.read import read_exports
from ikreport.collect import big_export, ncu_import
from ikreport.collect.big_export import stream_export
from ikreport.collect.context import Context
from ikreport.errors import ArchiveError, NcuExportError, TruncatedExportError
from ikreport.store.archive import Archive
from ikreport.kinds.ncu_profile.data import profile_data

B200 = FIXTURES / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
GTX = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"


def head_bytes(path: Path) -> int:
    """Bytes up to the end of the units row: the smallest first chunk that can be streamed."""
    data = path.read_bytes()
    header = data.index(b'"ID",')
    return data.index(b"\n", data.index(b"\n", header) + 1) + 1


@pytest.mark.parametrize("fixture", [B200, GTX], ids=["b200", "gtx1650ti"])
def test_streamed_real_exports_read_as_the_whole_file_does(fixture):
    whole = profile_data(read_exports({str(fixture): fixture.read_bytes()}))
    streamed_sizes = 0
    head = head_bytes(fixture)
    for chunk in (1, 512, head - 1, head, head + 100, 2 * head, 1 << 20):
        big = stream_export(fixture, threshold=0, chunk_bytes=chunk)
        if big is None:  # the first chunk holds no header and units row: read whole instead
            continue
        streamed_sizes += 1
        assert big.sha256 == hashlib.sha256(fixture.read_bytes()).hexdigest()
        assert big.size == fixture.stat().st_size
        assert profile_data(read_exports({str(fixture): big.export})) == whole
    assert streamed_sizes >= 4


def import_record(tmp_path: Path, path: Path, monkeypatch, threshold: int) -> dict:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    monkeypatch.setattr(ncu_import, "stream_export",
                        lambda p, **kw: big_export.stream_export(p, **kw, threshold=threshold, chunk_bytes=head_bytes(p)))
    archive = Archive.create(tmp_path / f"a{threshold}")
    record_id = ncu_import.import_csv(archive, [path], Context(title="t"))
    return {"id": record_id, "record": archive.load(record_id),
            "blobs": {b: archive.read_blob(b) for b in archive.blob_ids()}}


def test_a_streamed_import_stores_the_same_record_and_blobs(tmp_path, monkeypatch):
    streamed = import_record(tmp_path, B200, monkeypatch, threshold=0)
    whole = import_record(tmp_path, B200, monkeypatch, threshold=1 << 40)
    assert streamed["id"] == whole["id"]
    assert streamed["blobs"] == whole["blobs"]
    assert B200.read_bytes() in streamed["blobs"].values()


def rows_of(path: Path) -> tuple[list[bytes], int]:
    lines = path.read_bytes().split(b"\n")
    units = next(i for i, line in enumerate(lines) if line.startswith(b'"ID",')) + 1
    return lines, units


def test_a_cut_export_is_refused_naming_its_last_line(tmp_path):
    lines, _ = rows_of(B200)
    cut = tmp_path / "cut.csv"
    body = b"\n".join(lines).rstrip(b"\n")
    cut.write_bytes(body[: body.rfind(b"\",\"") + 4])  # inside the last row's next field
    with pytest.raises(TruncatedExportError, match=rf"cut\.csv:{len(body.split(chr(10).encode()))}: the last row ends inside"):
        stream_export(cut, threshold=0, chunk_bytes=head_bytes(B200))
    with pytest.raises(TruncatedExportError) as whole:
        read_exports({str(cut): cut.read_bytes()})
    assert "the last row ends inside a quoted field" in str(whole.value)


def test_a_broken_row_late_in_the_file_is_refused_naming_its_line(tmp_path):
    lines, units = rows_of(B200)
    row = len(lines) - 3  # far past the first chunk
    lines[row] = lines[row].replace(b'","', b',"', 1)  # one quote lost
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b"\n".join(lines))
    assert row > units
    with pytest.raises(TruncatedExportError, match=rf"broken\.csv:{row + 1}: a quoted field does not close"):
        stream_export(broken, threshold=0, chunk_bytes=head_bytes(B200))


def test_chatter_between_rows_is_read_whole_and_filtered(tmp_path):
    lines, _ = rows_of(B200)
    lines.insert(len(lines) - 3, b"==PROF== Disconnected from process 1234")
    chatty = tmp_path / "chatty.csv"
    chatty.write_bytes(b"\n".join(lines))
    assert stream_export(chatty, threshold=0, chunk_bytes=head_bytes(B200)) is None
    assert read_exports({str(chatty): chatty.read_bytes()}).launch_count == 16  # every launch, the line dropped


def test_a_file_changed_while_it_was_imported_is_not_stored(tmp_path, monkeypatch):
    """The bytes the archive keeps are those hashed and gzipped in the first read; the rows are
    read from the file after. A file changed between the two would give a record of other bytes
    than its blob: refused, nothing stored."""
    from ikreport.analysis.ncu import read as ncu

    changed = tmp_path / "changed.csv"
    changed.write_bytes(B200.read_bytes())
    monkeypatch.setattr(ncu_import, "stream_export", lambda p, **kw: big_export.stream_export(p, **kw, threshold=0))
    real = ncu.read_exports

    def edit_meanwhile(*args, **kwargs):
        changed.write_bytes(B200.read_bytes().replace(b"NVIDIA B200", b"NVIDIA B300"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ncu_import, "read_exports", edit_meanwhile)
    archive = Archive.create(tmp_path / "a")
    with pytest.raises(ArchiveError, match="changed.csv: the file changed while it was imported"):
        ncu_import.import_csv(archive, [changed], Context(title="t"))
    assert archive.blob_ids() == [] and archive.record_ids() == []


def test_a_streamed_export_is_hashed_and_gzipped_in_one_read(tmp_path, monkeypatch):
    """The export is read once to check, hash and gzip it and once for its rows: the archive
    copies the gzipped spool, and what it keeps is the file, byte for byte."""
    import gzip

    monkeypatch.setattr(ncu_import, "stream_export", lambda p, **kw: big_export.stream_export(p, **kw, threshold=0))
    opened: list[str] = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **kw: opened.append(str(self)) or real_open(self, *a, **kw))
    archive = Archive.create(tmp_path / "a")
    rid = ncu_import.import_csv(archive, [B200], Context(title="t"))
    assert opened.count(str(B200)) == 1  # the pass that hashes and gzips (pyarrow reads the rows itself)
    (source,) = [s for s in archive.load(rid)["sources"] if s["role"] == "ncu-raw-csv"]
    assert gzip.decompress(blob_path(archive, source["id"]).read_bytes()) == B200.read_bytes()


def test_the_launch_csv_written_in_slices_is_the_whole_table(monkeypatch):
    from ikreport.analysis.ncu import summary as ncu_summary

    whole = read_exports({str(B200): B200.read_bytes()}).csv()
    monkeypatch.setattr(ncu_summary, "CSV_SLICE", 5)  # 16 launches: four slices, the last one short
    assert read_exports({str(B200): B200.read_bytes()}).csv() == whole
    assert whole.count(b"\n") == 17 and whole.startswith(b'"index","id","kernel"')


def lines_by_hand(data: bytes) -> tuple[int, int | None, bool]:
    """What ``scan_lines`` must find, the slow way: line ends, the first line with an odd
    number of quotes, and whether a later line starts with anything but a quote or line end."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the empty part after a last line end is no line
    odd = next((i for i, line in enumerate(lines) if line.count(b'"') % 2), None)
    chatter = any(line[:1] not in (b'"', b"", b"\r") for line in data.split(b"\n")[1:])
    return data.count(b"\n"), odd, chatter


@pytest.mark.parametrize("window", [61, 4096, 1 << 20])
@pytest.mark.parametrize("fixture", [B200, GTX], ids=["b200", "gtx1650ti"])
def test_the_vectorised_line_scan_finds_what_a_line_by_line_count_finds(fixture, window, monkeypatch):
    from ikreport.analysis.ncu import export as ncu_export

    monkeypatch.setattr(ncu_export, "SCAN_BYTES", window)  # window edges inside lines, quotes, line ends
    data = fixture.read_bytes()
    body = data[data.index(b'"ID",'):]
    quotes = [i for i in range(len(body)) if body[i:i + 1] == b'"']
    cases = [body, body.rstrip(b"\n"), body.replace(b"\n", b"\r\n"), body + b"\n\n", body[:-40],
             body[:quotes[-1]] + body[quotes[-1] + 1:],  # the last row's closing quote lost
             body.replace(b'\n"', b'\n==PROF== said\n"', 1)]
    for at in (quotes[3], quotes[len(quotes) // 2], quotes[-2]):  # one quote lost: early, middle, late
        cases.append(body[:at] + body[at + 1:])
    for case in cases:
        found = ncu_export.scan_lines(case)
        assert (found.ends, found.odd, found.chatter) == lines_by_hand(case)
        view = memoryview(b"xx" + case + b"yy")  # a part of a bigger buffer, as a view
        assert ncu_export.scan_lines(view, 2, 2 + len(case)) == found


@pytest.mark.parametrize("window", [1, 2, 3, 4, 5])
def test_the_line_scan_carries_a_line_across_window_edges(window, monkeypatch):
    from ikreport.analysis.ncu import export as ncu_export

    monkeypatch.setattr(ncu_export, "SCAN_BYTES", window)
    for case in (b'"a"\n"b"\n\n"c",""\n', b'"a"\n"b\n"c"\n', b'"ab","c"\n"d', b'"a"\nx"\n', b'""\r\n\r\n"a""b"', b"\n\n", b'"'):
        found = ncu_export.scan_lines(case)
        assert (found.ends, found.odd, found.chatter) == lines_by_hand(case), case


@pytest.mark.parametrize("size", [1, 100, 3000, 1 << 20])
def test_line_chunks_are_the_file_cut_at_line_ends(tmp_path, size):
    data = B200.read_bytes()
    long_line = data.replace(b"\n", b"\n" + b"x" * 5000 + b"\n", 1) + b'"no line end"'  # longer than a chunk
    path = tmp_path / "e.csv"
    path.write_bytes(long_line)
    with path.open("rb", buffering=0) as f:
        chunks = [bytes(c) for c in big_export.line_chunks(f, size)]
    assert b"".join(chunks) == long_line
    assert all(c.endswith(b"\n") and b"\n" in c for c in chunks[:-1])
    assert chunks[-1].endswith(b'"no line end"')


def test_a_big_file_with_no_line_end_is_refused_before_it_is_held_whole(tmp_path, monkeypatch):
    """A big file of one endless line (no CSV row is that long) is refused once a line passes
    MAX_LINE, naming the file, not read into memory whole; one of NUL bytes is left to the
    whole-file reader, which refuses it from its first bytes."""
    monkeypatch.setattr(big_export, "MAX_LINE", 3 << 20)
    endless = tmp_path / "endless.csv"
    endless.write_bytes(B200.read_bytes().split(b"\n")[0] + b"x" * (8 << 20))
    with pytest.raises(NcuExportError, match=f"^{re.escape(str(endless))}: no line end in its first 3 MB; "):
        stream_export(endless, threshold=1, chunk_bytes=1 << 20)
    zeros = tmp_path / "zeros.csv"
    with open(zeros, "wb") as f:
        f.truncate(8 << 20)
    assert stream_export(zeros, threshold=1, chunk_bytes=1 << 20) is None


@pytest.mark.parametrize("fails", ["create", "write"])
def test_a_temp_folder_that_refuses_a_spool_is_one_line(tmp_path, monkeypatch, run, fails):
    # a streamed export and its per-launch CSV are gzipped into spools in TMPDIR: a full one (or a
    # file-size limit) is a one-line error naming it, not a traceback, and nothing is stored
    import errno
    import tempfile

    real = tempfile.NamedTemporaryFile

    def refusing(*args, **kwargs):
        if fails == "create":
            raise OSError(errno.ENOSPC, "No space left on device")
        spool = real(*args, **kwargs)

        class Full:
            name = spool.name

            def write(self, data):
                raise OSError(errno.EFBIG, "File too large")

            def __getattr__(self, attr):
                return getattr(spool, attr)

        return Full()

    monkeypatch.setattr(ncu_import.tempfile, "NamedTemporaryFile", refusing)
    monkeypatch.setattr(ncu_import, "stream_export",
                        lambda p, **kw: big_export.stream_export(p, **kw, threshold=0, chunk_bytes=head_bytes(p)))
    archive = Archive.create(tmp_path / "a")
    result = run("collect", "ncu", "--from-csv", B200, "-a", archive.root, "--title", "t")
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    # the spool the export is gzipped into as it is read, or the one its per-launch table goes to
    assert re.match(rf"Error: {re.escape(tempfile.gettempdir())}: cannot write (a copy of {B200.name}|the export's "
                    r"per-launch table) there \(", line), line
    assert "TMPDIR" in line and "Traceback" not in result.output
    assert archive.record_ids() == [] and archive.blob_ids() == []
