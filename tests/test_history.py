"""History pages: profiles of one GPU and workload form a series; per kernel, each profile's
median with its interval, and a step change found at the first record after it."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ikreport.cli.main import cli
from ikreport.site.history import find_series, kernel_history
from ikreport.store.archive import Archive
from ikreport.store.recordset import load

HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
# six nightly profiles of one decode step: the GEMM steps from about 10 to 12 µs at the fourth,
# the norm kernel stays put
LEVELS = [10.0, 10.05, 9.98, 12.0, 12.04, 11.97]


def export(path, gemm: float):
    rows, i = [HEADER], 0
    for kernel, level in (("gemm(float*)", gemm), ("norm(float*)", 2.0)):
        for n in range(6):
            rows.append(f'"{i}","{kernel}","GPU Speed Of Light Throughput","Duration","usecond",'
                        f'"{level * (1 + 0.002 * (n - 2.5)):.4f}"')
            i += 1
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def nightly(tmp_path, monkeypatch):
    """An archive of six profiles of one series, one a day, and one of another workload."""
    arch = tmp_path / "arch"
    ids = []
    for day, level in enumerate(LEVELS):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + day * 86400))
        csv = export(tmp_path / f"d{day}.csv", level)
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(csv), "-a", str(arch), "--gpu",
                                       "NVIDIA H200", "--workload", "decode step, batch 8"])
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip())
    other = export(tmp_path / "other.csv", 10.0)
    CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(other), "-a", str(arch), "--gpu", "NVIDIA H200",
                             "--workload", "prefill"])
    return arch, ids


def test_a_step_change_is_found_at_the_first_record_after_it(nightly):
    arch, ids = nightly
    archive = Archive.open(arch)
    records = load(archive)
    (series,) = find_series(records)  # the lone prefill profile is no series
    assert series.records == tuple(ids) and series.title == "decode step, batch 8 on NVIDIA H200"
    gemm, norm = kernel_history(series, records, archive.read_blob)
    assert gemm["kernel"] == "gemm(float*)" and norm["kernel"] == "norm(float*)"
    assert [p["change"] for p in gemm["points"]] == ["", "", "", "SLOWER", "", ""]
    assert gemm["points"][3]["id"] == ids[3] and gemm["points"][3]["since"] == ids[2]
    first = gemm["points"][0]
    assert first["median_us"] == pytest.approx(10.0) and first["low_us"] < first["median_us"] < first["high_us"]
    assert [p["change"] for p in norm["points"]] == [""] * 6


def test_the_site_has_a_history_page_linked_from_the_index(nightly, tmp_path):
    arch, ids = nightly
    out = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert out.exit_code == 0, out.output
    index = (tmp_path / "site" / "index.md").read_text()
    (link,) = re.findall(r"\[decode step, batch 8 on NVIDIA H200\]\((h/[a-z0-9-]+\.md)\) \(6 profiles\)", index)
    page = (tmp_path / "site" / link).read_text()
    assert ("- gemm: SLOWER from \\#3 to \\#4, B/A 1.202 \\[1.196, 1.210\\]" in page
            and f"first record after the change: [\\[{ids[3][:8]}\\]](../e/{ids[3]}.md)" in page)
    assert page.count("## ") == 4  # profiles, changes, and one section per kernel
    svg = re.search(r"\(\.\./charts/([0-9a-f]{64})\.svg\)", page).group(1)
    assert f'href="../e/{ids[0]}.html"' in (tmp_path / "site" / "charts" / f"{svg}.svg").read_text()  # linked points
