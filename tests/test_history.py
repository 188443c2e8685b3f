"""History pages: profiles of one GPU and workload form a series; per kernel, each profile's
median with its interval, and a step change found at the first record after it."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ikreport.cli.main import cli
from ikreport.kinds.base import SeriesContext
from ikreport.kinds.ncu_profile.history import kept_history
from ikreport.kinds.ncu_profile.history import kernel_history as profile_history
from ikreport.site.history import find_series
from ikreport.store.archive import Archive
from ikreport.store.cache import Cache
from ikreport.store.recordset import load

HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
# six nightly profiles of one decode step: the GEMM steps from about 10 to 12 µs at the fourth,
# the norm kernel stays put
LEVELS = [10.0, 10.05, 9.98, 12.0, 12.04, 11.97]


def kernel_history(series, records, read_blob):
    """A profile series' per-kernel history, as its page shows it."""
    return profile_history(series.records, series.when, records, read_blob)


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


def series_of(tmp_path, monkeypatch, levels, days):
    """An archive of one series: a profile per level, collected on the given day (same day: same second)."""
    arch = tmp_path / "arch"
    ids = []
    for n, (level, day) in enumerate(zip(levels, days)):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + day * 86400))
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / f"p{n}.csv", level)),
                                       "-a", str(arch), "--gpu", "NVIDIA H200", "--workload", "decode"])
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip())
    return arch, ids


def build_page(arch, tmp_path) -> str:
    out = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert out.exit_code == 0, out.output
    (page,) = (tmp_path / "site" / "h").glob("*.md")
    return page.read_text()


def test_profiles_of_the_same_second_have_no_order_and_no_change_between_them(tmp_path, monkeypatch):
    arch, ids = series_of(tmp_path, monkeypatch, [100.0, 100.0, 100.0, 80.0, 80.0, 80.0], [0] * 6)
    archive = Archive.open(arch)
    records = load(archive)
    (series,) = find_series(records)
    gemm = kernel_history(series, records, archive.read_blob)[0]
    assert [p["change"] for p in gemm["points"]] == [""] * 6  # hash order is no order in time
    page = build_page(arch, tmp_path)
    assert "\\#1 to \\#6 share the collection time 2026-12-02T00:00:00Z: their order is not known" in page
    assert "No change between neighbouring profiles" in page


def test_a_change_after_a_tie_is_marked_only_against_every_profile_of_the_time_before(tmp_path, monkeypatch):
    arch, ids = series_of(tmp_path, monkeypatch, [100.0, 100.0, 80.0, 80.0], [0, 0, 1, 1])
    archive = Archive.open(arch)
    records = load(archive)
    (series,) = find_series(records)
    gemm = kernel_history(series, records, archive.read_blob)[0]
    assert [p["change"] for p in gemm["points"]] == ["", "", "FASTER", "FASTER"]
    assert {p["since"] for p in gemm["points"][2:]} == {series.records[1]}


def test_history_times_that_differ_never_read_the_same_and_the_chart_reads_in_words(tmp_path, monkeypatch):
    arch, ids = series_of(tmp_path, monkeypatch, [100.0, 100.5], [0, 1])
    page = build_page(arch, tmp_path)
    rows = [line for line in page.splitlines() if line.startswith("| \\#")]
    medians = [row.split(" | ")[3] for row in rows[2:4]]  # the gemm table, after the profiles table
    # five digits: an interval's end of 99.998 is 100.0 at four, as the first median is
    assert medians[0] != medians[1] and medians == ["100.00 µs", "100.50 µs"]
    svg = re.search(r"\(\.\./charts/([0-9a-f]{64})\.svg\)", page).group(1)
    text = (tmp_path / "site" / "charts" / f"{svg}.svg").read_text()
    labels = re.findall(r'aria-label="([^"]*)"', text)
    assert any(label.startswith("#1: median 100.00 µs, 95% interval") for label in labels)
    assert not any(raw in text for raw in ("median_us", "low_us", "high_us", "href: "))


def test_a_correction_stands_at_the_place_of_the_profile_it_corrects(tmp_path, monkeypatch):
    arch, ids = series_of(tmp_path, monkeypatch, [10.0, 10.0, 10.0, 10.0], [0, 1, 2, 3])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + 9 * 86400))
    fix = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / "fix.csv", 10.0)),
                                   "-a", str(arch), "--gpu", "NVIDIA H200", "--workload", "decode"]).stdout.strip()
    out = CliRunner().invoke(cli, ["supersede", ids[1], "--by", fix, "--reason", "clocks were not locked", "-a", str(arch)])
    assert out.exit_code == 0, out.output
    (series,) = find_series(load(Archive.open(arch)))
    assert series.records == (ids[0], fix, ids[2], ids[3])
    page = build_page(arch, tmp_path)
    assert (f"\\#2 \\[{fix[:8]}\\] corrects \\[{ids[1][:8]}\\], collected 2026-12-03T00:00:00Z, which is superseded "
            "(clocks were not locked): it stands at that place in the series" in page)


def test_profiles_within_one_second_keep_their_order_through_milliseconds(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    arch = tmp_path / "arch"
    for n, (level, at) in enumerate(((100.0, 1796169600.25), (80.0, 1796169600.75))):
        monkeypatch.setattr("time.time", lambda at=at: at)
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / f"p{n}.csv", level)),
                                       "-a", str(arch), "--gpu", "NVIDIA H200", "--workload", "decode"])
        assert out.exit_code == 0, out.output
    archive = Archive.open(arch)
    records = load(archive)
    (series,) = find_series(records)
    assert series.when == ("2026-12-02T00:00:00.250Z", "2026-12-02T00:00:00.750Z")
    assert [p["change"] for p in kernel_history(series, records, archive.read_blob)[0]["points"]] == ["", "FASTER"]
    assert CliRunner().invoke(cli, ["verify", str(arch)]).exit_code == 0


def test_a_profile_joining_a_series_costs_its_own_launches_not_the_series(nightly, tmp_path, monkeypatch):
    """What follows from one profile, or one pair, is kept by their ids: a rebuild after a profile
    joins a series reads that profile's launches (and, where the medians allow a change, the
    pair's), and gives what a build from no cache gives."""
    import ikreport.kinds.ncu_profile.history as history

    arch, ids = nightly
    cache = tmp_path / "c"
    out = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(cache)])
    assert out.exit_code == 0, out.output
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + 9 * 86400))
    added = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / "d9.csv", 12.01)), "-a",
                                     str(arch), "--gpu", "NVIDIA H200", "--workload", "decode step, batch 8"])
    new = added.stdout.strip()
    read: list[str] = []
    real = history.durations_by_kernel
    monkeypatch.setattr(history, "durations_by_kernel", lambda record, *a: read.append(record["title"]) or real(record, *a))
    out = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(cache)])
    assert out.exit_code == 0, out.output
    assert read == [Archive.open(arch).load(new)["title"]]  # the same level as the one before: no pair to bootstrap
    monkeypatch.undo()
    fresh = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "clean"), "--cache-dir", str(tmp_path / "c2")])
    assert fresh.exit_code == 0, fresh.output
    assert [p.read_bytes() for p in sorted((tmp_path / "site" / "h").iterdir())] == \
        [p.read_bytes() for p in sorted((tmp_path / "clean" / "h").iterdir())]


# Two workloads whose series once shared a page name (issue 27 item 13): "!" and "?" leave the
# readable slug ("nvidia-h100-decode"), and the first 8 hex digits of the subjects' sha256 agree
# (bd223c12), a pair a brute-force search of about 85,000 subjects finds in a second.
COLLIDING = ("decode !?!??!!?????!?!", "decode !?!!?!???!???!!!")


def test_two_series_whose_short_names_collide_get_two_pages(tmp_path, monkeypatch):
    import hashlib

    def old_name(workload: str) -> str:  # the page name before: slug and 8 hex digits
        subject = {"gpu": "NVIDIA H100", "workload": workload}
        return "nvidia-h100-decode-" + hashlib.sha256(repr(sorted(subject.items())).encode()).hexdigest()[:8]

    assert old_name(COLLIDING[0]) == old_name(COLLIDING[1])
    arch = tmp_path / "arch"
    for n, workload in enumerate(COLLIDING * 2):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + n * 86400))
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / f"{n}.csv", 10.0 + n)),
                                       "-a", str(arch), "--gpu", "NVIDIA H100", "--workload", workload])
        assert out.exit_code == 0, out.output
    for _ in range(2):  # a first build and a rebuild
        out = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
        assert out.exit_code == 0, out.output
    index = (tmp_path / "site" / "index.md").read_text()
    for workload in COLLIDING:
        title = f"{workload} on NVIDIA H100"
        (link,) = re.findall(rf"\[{re.escape(title)}\]\((h/[a-z0-9-]+)\.md\) \(2 profiles\)", index)
        assert f"# History: {title}" in (tmp_path / "site" / f"{link}.md").read_text()


def test_a_history_page_lost_from_the_cache_after_its_look_up_is_made_again(nightly, tmp_path, monkeypatch):
    """A history page, like a record page, is kept in the build cache and read from it when it
    is written; an entry gone by then (another build, a damaged file) is made again."""
    import ikreport.commands.build as build_module
    import ikreport.store.cache as cache_module

    arch, _ = nightly
    cache = tmp_path / "c"

    def build(out):
        built = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / out), "--cache-dir", str(cache)])
        assert built.exit_code == 0, built.output

    build("clean")
    monkeypatch.setattr(build_module, "kept_file", lambda *args: None)  # every entry gone when read
    real_get = cache_module.Cache.get
    monkeypatch.setattr(cache_module.Cache, "get",
                        lambda self, space, key: None if space == "chart" else real_get(self, space, key))
    made_again: list[str] = []
    real_again = build_module._history_again
    monkeypatch.setattr(build_module, "_history_again", lambda *a: made_again.append(a[-1]) or real_again(*a))
    build("again")  # from the cache the first build filled
    assert sorted(map(str, made_again))[:2] == ["0", "1"]  # the page's html and Markdown, and its charts
    assert [p.read_bytes() for p in sorted((tmp_path / "again").rglob("*.*"))] == \
        [p.read_bytes() for p in sorted((tmp_path / "clean").rglob("*.*"))]


def test_the_median_interval_rank_is_the_binomial_quantile_computed_exactly():
    """A history point's interval runs from the l-th to the (n+1-l)-th smallest launch, l the
    least k whose Binomial(n, 1/2) CDF reaches 2.5%: here summed in integers, no rounding."""
    from math import comb

    from ikreport.analysis.ratio_interval import _lower_rank, median_interval

    for n in [*range(1, 300), 1000, 4097]:
        total, k = 0, 0
        while k <= n // 2 and 40 * (total := total + comb(n, k)) < 2**n:
            k += 1
        assert _lower_rank(n) == max(k, 1), n
        if n >= 2:
            assert median_interval(list(range(n, 0, -1)))[1:] == (max(k, 1), n + 1 - max(k, 1))


def test_the_kept_history_of_the_same_profiles_at_other_times_is_worked_out_again(tmp_path, monkeypatch):
    """A correction moves a profile to the time of the one it corrects (possibly of another
    workload), so the same ids, in the same order, can tie where they did not: the kept history
    is keyed by their times too, and a rebuild gives what a clean build gives."""
    arch, ids = series_of(tmp_path, monkeypatch, [100.0, 80.0], [0, 1])
    archive = Archive.open(arch)
    records = load(archive)
    (series,) = find_series(records)
    cache = Cache(tmp_path / "c")

    def kept(when):
        return kept_history(SeriesContext(records, series.records, when, series.path, archive.read_blob, cache, None, str))

    assert [p["change"] for p in kept(series.when)[0]["points"]] == ["", "FASTER"]
    tied = (series.when[0], series.when[0])
    assert [p["change"] for p in kept(tied)[0]["points"]] == ["", ""]
    assert kept(tied) == profile_history(series.records, tied, records, archive.read_blob)
