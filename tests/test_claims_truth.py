"""Issue 27's claims: what a page says must be what the numbers show, on exports shaped as the
ones users met (small hand-made details pages, one quirk each)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikreport.cli.main import cli

HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def export(path: Path, rows: list[tuple[str, str, str, str]], kernel: str = "gemm_int8(int*)") -> Path:
    """A details page of one launch: (section, metric, unit, value) rows."""
    lines = [HEADER] + [f'"0","{kernel}","{s}","{m}","{u}","{v}"' for s, m, u, v in rows]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def page(tmp_path: Path, *exports: Path, args: tuple[str, ...] = ()) -> str:
    """The Markdown twin of the one profile imported from ``exports``."""
    arch = tmp_path / "arch"
    out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", *map(str, exports), "-a", str(arch), *args])
    assert out.exit_code == 0, out.output
    rid = out.stdout.strip().splitlines()[-1]
    built = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert built.exit_code == 0, built.output
    return (tmp_path / "site" / "e" / f"{rid}.md").read_text("utf-8")


def occupancy(grid: int, sms: int, per_sm: int, waves: float) -> list[tuple[str, str, str, str]]:
    theoretical = 100 * per_sm * 128 / 2048  # blocks of 128 threads, 2,048 a SM
    return [("GPU Speed Of Light Throughput", "Duration", "usecond", "20.0"),
            ("Launch Statistics", "Grid Size", "", str(grid)), ("Launch Statistics", "Block Size", "", "128"),
            ("Launch Statistics", "# SMs", "SM", str(sms)), ("Launch Statistics", "Waves Per SM", "", str(waves)),
            ("Occupancy", "Block Limit Registers", "block", str(per_sm)),
            ("Occupancy", "Block Limit Shared Mem", "block", "16"), ("Occupancy", "Block Limit Warps", "block", "16"),
            ("Occupancy", "Block Limit SM", "block", "32"),
            ("Occupancy", "Theoretical Occupancy", "%", f"{theoretical:.2f}"),
            ("Occupancy", "Achieved Occupancy", "%", f"{theoretical / 4:.2f}")]


@pytest.mark.parametrize("grid, sms, per_sm, waves, said", [
    # a B200 int8 GEMM: 128 blocks on 148 SMs, 3 resident a SM (issue 27 item 1)
    (128, 148, 3, 0.29, "its 128 blocks leave 20 of the 148 SMs without a block (the grid fills 0.29 of a wave)"),
    # 144 blocks on a 36-SM card, 10 resident a SM (issue 32 item 10): every SM has four
    (144, 36, 10, 0.4, "every one of the 36 SMs has a block, but only about 4, of the 10 each could hold at once "
                       "(144 blocks: the grid fills 0.4 of a wave)"),
])
def test_a_grid_of_less_than_a_wave_is_said_as_its_numbers_show(tmp_path, grid, sms, per_sm, waves, said):
    text = page(tmp_path, export(tmp_path / "x.csv", occupancy(grid, sms, per_sm, waves)))
    assert said in text
    assert "most SMs have no block" not in text


FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
SESSION = (FIXTURES / "session_constructed_b200.csv").read_text("utf-8")
PROFILE = [("GPU Speed Of Light Throughput", "Duration", "usecond", "20.0")]


def session(path: Path, *, drop: tuple[str, ...] = (), rename: dict[str, str] | None = None) -> Path:
    """The constructed B200 session page without the rows named in ``drop`` (by their first
    cell) and with the first cells in ``rename`` respelled."""
    lines = []
    for line in SESSION.splitlines():
        first = line.split(",")[0].strip('"')
        if first in drop:
            continue
        if rename and first in rename:
            line = line.replace(f'"{first}"', f'"{rename[first]}"', 1)
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("drop, said, unsaid", [
    # only the clock control observed: the cache control alone is unknown (issue 27 item 2)
    (("Cache Control", "Command Line"),
     "ncu ran with --clock-control base (observed from the session page): clocks were locked to base",
     "does not say which --clock-control"),
    # both observed: nothing is unknown
    ((), "ncu ran with --clock-control base and --cache-control all (observed from the session page)",
     "does not say which"),
])
def test_a_limitation_never_calls_unknown_what_the_session_page_observed(tmp_path, drop, said, unsaid):
    text = page(tmp_path, export(tmp_path / "x.csv", PROFILE), session(tmp_path / "s.csv", drop=drop))
    assert said in text
    assert unsaid not in text
    if "Cache Control" in drop:
        assert "does not say which --cache-control it ran under" in text


@pytest.mark.parametrize("spelling", ["Nsight Compute Target", "Nsight Compute Target Version", "NCU Version"])
def test_every_version_spelling_of_the_session_page_is_read(tmp_path, spelling):
    arch = tmp_path / "arch"
    ids = []
    for side in "ab":
        pages = [export(tmp_path / f"{side}.csv", PROFILE),
                 session(tmp_path / f"{side}s.csv", rename={"Profiler Version": spelling})]
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", *map(str, pages), "-a", str(arch)])
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip().splitlines()[-1])
    shown = CliRunner().invoke(cli, ["show", ids[0], "-a", str(arch), "--json"])
    assert json.loads(shown.stdout)["method"]["tool_version"] == "2025.2.1.0"
    compared = CliRunner().invoke(cli, ["compare", ids[0], ids[1], "-a", str(arch)])
    assert "| ncu version | 2025.2.1.0 (observed) | 2025.2.1.0 (observed) |" in compared.stdout
    assert "not recorded" not in compared.stdout.split("ncu version")[1].splitlines()[0]


def raw_export(path: Path, columns: dict[str, tuple[str, str]]) -> Path:
    """A raw page of one launch: metric name -> (unit, value)."""
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    path.write_text("\n".join([quote(["ID", "Kernel Name", *columns]), quote(["", "", *(u for u, _ in columns.values())]),
                               quote(["0", "gemm_int8(int*)", *(v for _, v in columns.values())])]) + "\n", "utf-8")
    return path


SOL = "GPU Speed Of Light Throughput"


@pytest.mark.parametrize("make", [
    # --print-fp: thousands separators and two decimals on every value
    lambda p: raw_export(p, {"gpc__cycles_elapsed.max": ("cycle", "12,345.00"),
                             "gpc__cycles_elapsed.avg.per_second": ("cycle/nsecond", "1.50")}),
    lambda p: raw_export(p, {"sm__cycles_elapsed.avg": ("cycle", "12345"),
                             "sm__cycles_elapsed.avg.per_second": ("cycle/usecond", "1500")}),
    lambda p: raw_export(p, {"smsp__cycles_elapsed.avg": ("cycle", "12,345.00"),
                             "smsp__cycles_elapsed.avg.per_second": ("cycle/second", "1,500,000,000.00")}),
    # only the DRAM's cycles and clock: 4,000 cycles at 0.486 GHz
    lambda p: raw_export(p, {"dram__cycles_elapsed.avg": ("cycle", "4,000.00"),
                             "dram__cycles_elapsed.avg.per_second": ("cycle/nsecond", "0.486")}),
    lambda p: export(p, [(SOL, "Elapsed Cycles", "cycle", "12,345.00"), (SOL, "SM Frequency", "Ghz", "1.50")]),
    # --metrics names on a details page
    lambda p: export(p, [("Command line profiler metrics", "sm__cycles_elapsed.max", "cycle", "12,345.00"),
                         ("Command line profiler metrics", "sm__cycles_elapsed.avg.per_second", "Mhz", "1,500.00")]),
])
def test_durations_are_derived_from_any_elapsed_cycles_and_their_clock(tmp_path, make):
    text = page(tmp_path, make(tmp_path / "x.csv"))
    assert re.search(r"takes 100\.0% of profiled GPU time: 8\.2\d? µs over 1 launch, derived from elapsed cycles", text)
    assert "durations are derived from elapsed cycles over the clock they count" in text
    assert "no kernel durations" not in text


def test_the_speed_of_light_chart_says_l1_is_over_active_cycles(tmp_path):
    rows = [(SOL, "Duration", "usecond", "20.0"), (SOL, "Compute (SM) Throughput", "%", "30.0"),
            (SOL, "Memory Throughput", "%", "60.0"), (SOL, "L1/TEX Cache Throughput", "%", "60.0"),
            (SOL, "L2 Cache Throughput", "%", "20.0"), (SOL, "DRAM Throughput", "%", "10.0")]
    text = page(tmp_path, export(tmp_path / "x.csv", rows))
    assert "L1 is % of its peak over the cycles L1/TEX was active" in text
    assert "L1 over its active cycles, the others over elapsed cycles" in text  # the chart's alt text
    svg = next(p for p in (tmp_path / "site" / "charts").iterdir() if "L1 (active cycles)" in p.read_text("utf-8"))
    assert ">L1<" not in svg.read_text("utf-8")


def durations(path: Path, launches: list[tuple[str, str, str]]) -> Path:
    """A details page of (kernel, unit, duration) launches."""
    lines = [HEADER] + [f'"{i}","{k}","{SOL}","Duration","{u}","{v}"' for i, (k, u, v) in enumerate(launches)]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("launches", [
    [("a(int)", "nsecond", "0.2"), ("b(int)", "nsecond", "0.9"), ("b(int)", "nsecond", "0.3")],  # sub-ns
    [("a(int)", "usecond", "0.00"), ("b(int)", "usecond", "10.00"), ("a(int)", "usecond", "0")],  # printed zero
])
def test_a_duration_under_a_nanosecond_is_no_timing_and_gets_no_share(tmp_path, launches):
    text = page(tmp_path, durations(tmp_path / "x.csv", launches))
    assert not re.search(r"takes [\d.]+% of profiled GPU time: 0 ns", text)
    assert "a takes" not in text  # kernel a has no timed launch: no share of nothing
    assert "a duration under 1 ns in the export" in text


def test_compare_calls_a_kernel_untimed_on_one_side_undecided_not_only_in_b(tmp_path):
    arch = tmp_path / "arch"
    ids = []
    for side, value in (("a", "0.00"), ("b", "12.00")):
        csv = durations(tmp_path / f"{side}.csv", [("k(int)", "usecond", value)] * 3 + [("j(int)", "usecond", "5.00")] * 3)
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(csv), "-a", str(arch)])
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip().splitlines()[-1])
    out = CliRunner().invoke(cli, ["compare", *ids, "-a", str(arch)])
    assert out.exit_code == 0, out.output
    shown = CliRunner().invoke(cli, ["show", out.stdout.strip().splitlines()[-1], "-a", str(arch), "--json"])
    kernels = {k["kernel"]: k for k in json.loads(shown.stdout)["data"]["kernels"]}
    assert kernels["k(int)"]["verdict"] == "UNDECIDED"
    assert kernels["k(int)"]["reason"].startswith("no launch of it in A has a duration")
    assert "ONLY IN" not in out.stdout
