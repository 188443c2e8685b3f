"""Issue 32: truth on exports the project had not seen. Each test runs a real public export
(tests/fixtures, sources in SOURCES.md) through import and build, and checks what the record,
`show`, the HTML page and its Markdown twin say; small hand-made cases cover the spellings of
eras no public fixture holds."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikreport.analysis.ncu.read import read_exports
from ikreport.cli.main import cli

NCU = Path(__file__).parent / "fixtures" / "ncu"
V100 = NCU / "ncu_details_xplacer_bfs_v100_2020_kerneltime.csv"
SOL_TEX = 5.59  # the first launch's "SOL TEX" row
HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def built(tmp_path: Path, *exports: Path, args: tuple[str, ...] = ()) -> tuple[str, str, str]:
    """(record id, HTML page, Markdown twin) of one import of ``exports``."""
    arch = tmp_path / "arch"
    out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", *map(str, exports), "-a", str(arch), *args])
    assert out.exit_code == 0, out.output
    rid = out.stdout.strip().splitlines()[-1]
    done = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert done.exit_code == 0, done.output
    page = tmp_path / "site" / "e" / rid
    return rid, page.with_suffix(".html").read_text("utf-8"), page.with_suffix(".md").read_text("utf-8")


# -- item 6: every era's spelling of a speed-of-light fact ---------------------------------------

def test_the_2020_names_sol_tex_and_sol_l2_are_l1_and_l2(tmp_path):
    profile = read_exports({V100.name: V100.read_bytes()})
    first = profile.launch(0)
    assert (first["l1_pct"], first["l2_pct"], first["dram_pct"]) == (SOL_TEX, 0.47, 1.33)  # SOL TEX, SOL L2, SOL FB
    _, _, md = built(tmp_path, V100, args=("--gpu", "Tesla V100"))
    assert "Bar chart of SM, memory, L1 (active cycles), L2, DRAM throughput" in md
    assert "not in the export" not in md.split("Bar chart of SM")[1].split("](")[0]


@pytest.mark.parametrize("section, names", [
    # 2020.2-2020.3
    ("GPU Speed Of Light", ("SM [%]", "Memory [%]", "SOL DRAM", "SOL L1/TEX Cache", "SOL L2 Cache")),
    # 2021.x
    ("GPU Speed Of Light Throughput", ("Compute (SM) [%]", "Memory [%]", "DRAM Throughput", "L1/TEX Cache Throughput",
                                       "L2 Cache Throughput")),
    # 2022.x and later
    ("GPU Speed Of Light Throughput", ("Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput",
                                       "L1/TEX Cache Throughput", "L2 Cache Throughput")),
])
def test_each_era_s_speed_of_light_names_are_read(tmp_path, section, names):
    values = ("41.00", "63.00", "52.00", "63.00", "30.00")
    rows = [f'"0","k(int)","{section}","Duration","usecond","10.00"'] + [
        f'"0","k(int)","{section}","{name}","%","{value}"' for name, value in zip(names, values)]
    path = tmp_path / "x.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", "utf-8")
    first = read_exports({path.name: path.read_bytes()}).launch(0)
    assert [first[k] for k in ("sm_pct", "mem_pct", "dram_pct", "l1_pct", "l2_pct")] == [41, 63, 52, 63, 30]


LASSEN = NCU / "ncu_details_xplacer_bfs_lassen_v100_2020_smallgrid.csv"
K0005 = NCU / "ncu_details_llmperfopt_k0005_cutlass_bf16_smfreq_memthroughput.csv"
K0005_ROOFLINE = NCU / "ncu_details_llmperfopt_k0005_roofline_cutlass_bf16_tensorop_rtx5090.csv"
K0018 = NCU / "ncu_details_llmperfopt_k0018_reduce_smallgrid_58blocks.csv"


def claim(md: str, start: str) -> str:
    """The text of the Markdown twin's claim that starts with ``start`` (after its anchor)."""
    return next(line.split("</a>", 1)[1] for line in md.splitlines() if line.startswith("- <a id=")
                and line.split("</a>", 1)[1].startswith(start))


def test_the_2020_names_on_a_second_machine(tmp_path):
    """Lassen's V100 (a different run and machine): its SOL TEX and SOL L2 rows are drawn."""
    _, _, md = built(tmp_path, LASSEN)
    assert "Bar chart of SM, memory, L1 (active cycles), L2, DRAM throughput" in md


# -- item 1: whether clocks were locked is never guessed ------------------------------------------

def test_a_clock_far_below_the_maximum_is_not_called_locked(tmp_path):
    """V100 at 1.10 GHz of a 1.53 GHz datasheet maximum, no session page: the export does not tell."""
    rid, html, md = built(tmp_path, LASSEN, args=("--gpu", "Tesla V100-SXM2-16GB"))
    text = claim(md, "SM at")
    assert text.startswith("SM at 1.10 GHz (maximum 1.53 GHz); the export does not say whether ncu locked the clocks")
    assert "likely" not in md and "likely" not in html


# -- item 3: the clock line names the metric read; durations and rates from cycles ---------------

def test_the_clock_line_names_the_row_it_read(tmp_path):
    _, _, md = built(tmp_path, K0005)
    text = claim(md, "SM at")
    assert "SM clock from ncu's SM Frequency row" in text and "gpc__cycles_elapsed" not in text


def cycles_export(path: Path) -> Path:
    """A --metrics export of two kernels with elapsed SM cycles, their rate and DRAM bytes, and
    no gpu__time_duration: a GEMM of 107 ms a launch and an attention kernel of 132 ms."""
    q = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    rows = [q(["ID", "Kernel Name", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second", "dram__bytes.sum"]),
            q(["", "", "cycle", "cycle/second", "byte"]),
            q(["0", "gemm_bf16(int)", "160,500,000", "1,500,000,000", "50,000,000,000"]),
            q(["1", "attention(int)", "198,000,000", "1,500,000,000", "30,000,000,000"])]
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def test_durations_and_dram_rates_from_cycles_rank_kernels_by_time(tmp_path):
    rid, html, md = built(tmp_path, cycles_export(tmp_path / "m.csv"))
    assert "no kernel durations" not in md
    assert claim(md, "attention takes").startswith("attention takes 55.2% of profiled GPU time: 132 ms over 1 launch, "
                                                   "derived from elapsed cycles")
    assert "SM clock from sm\\_\\_cycles\\_elapsed.avg.per\\_second" in md
    assert ">227 GB/s (derived)<" in html  # 30 GB over 132 ms, to three digits
    shown = CliRunner().invoke(cli, ["show", rid, "-a", str(tmp_path / "arch")]).stdout
    assert shown.index("attention") < shown.index("gemm_bf16")  # longest first
    index = (tmp_path / "site" / "index.md").read_text("utf-8")
    row = next(line for line in index.splitlines() if "ncu profile: attention" in line)
    assert row.endswith("| `attention` |")  # the longest kernel, by time


def test_a_profile_without_durations_names_no_longest_kernel(tmp_path):
    _, _, md = built(tmp_path, K0005_ROOFLINE)
    assert "no kernel durations" in md
    index = (tmp_path / "site" / "index.md").read_text("utf-8")
    row = next(line for line in index.splitlines() if "ncu profile: Kernel2" in line)
    assert row.rstrip().endswith("|  |")  # longest kernel: none, as none has a time


# -- item 4: a FLOP rate says what it counts -----------------------------------------------------

def test_a_tensor_core_kernel_counted_in_fp32_alone_gets_no_fp32_share(tmp_path):
    """A bf16 CUTLASS tensor-op GEMM whose roofline export holds fp32 and fp64 rows only."""
    _, html, md = built(tmp_path, K0005_ROOFLINE)
    text = claim(md, "Kernel2")
    flop = next(line for line in md.splitlines() if "GFLOP/s" in line)
    assert "of fp32 instructions, the only FLOPs the export counts" in flop
    assert "no fp16 and tensor FLOP counter or roofline row, so its FLOP rate and its place on the roofline are not known" \
        in flop
    assert "fp32 peak" not in flop and text


# -- item 7: the export's own figure first ---------------------------------------------------------

@pytest.mark.parametrize("export, printed", [(K0005, 156.55), (K0018, 594.41)])
def test_the_printed_dram_rate_is_shown_not_one_recomputed(export, printed):
    first = read_exports({export.name: export.read_bytes()}).launch(0)
    assert first["dram_gbs"] == pytest.approx(printed, abs=0.051) and "dram_gbs_derived" not in first


# -- item 9: imported is not collected -----------------------------------------------------------

@pytest.mark.parametrize("export, first, last", [
    (V100, "2020-05-29T11:51:18", "2020-05-29T11:51:22"),
    (LASSEN, "2020-04-14T17:06:10", "2020-04-14T17:06:25"),
])
def test_an_import_says_when_it_was_imported_and_when_the_export_says_it_was_profiled(tmp_path, export, first, last):
    rid, html, md = built(tmp_path, export)
    assert "- **imported**: " in md and "**collected**" not in md
    assert f"- **profiled**: {first} to {last} (the export's Kernel Time column" in md
    assert "<dt>imported</dt>" in html and f"<dd>{first} to {last} (" in html
    shown = CliRunner().invoke(cli, ["show", rid, "-a", str(tmp_path / "arch")]).stdout
    assert "  imported: " in shown and f"  profiled:  {first} to {last}" in shown


# -- item 10: waves, on a second architecture ------------------------------------------------------

def test_a_small_grid_without_an_sm_count_is_not_said_to_leave_most_sms_idle(tmp_path):
    _, _, md = built(tmp_path, LASSEN)
    assert "the grid fills 0.03 of a wave: the GPU could run more blocks at once than the grid has" in md
    assert "most SMs have no block" not in md


# -- item 2: stall shares when the PC samples are complete -----------------------------------------

def pcsamp_export(path: Path, count: str) -> Path:
    """A raw page of one launch on a Blackwell part (a compute capability whose warp states
    ikreport does not list) with PC-sampling states and smsp__pcsamp_sample_count."""
    states = {"long_scoreboard": 500, "selected": 200, "wait": 150, "not_selected": 100, "barrier": 50}
    q = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    names = [f"smsp__pcsamp_warps_issue_stalled_{s}" for s in states] + ["smsp__pcsamp_warps_issue_stalled_wait_not_issued"]
    rows = [q(["ID", "Kernel Name", "CC", "gpu__time_duration.sum", "smsp__pcsamp_sample_count", *names]),
            q(["", "", "", "nsecond", "sample", *["sample"] * len(names)]),
            q(["0", "gemm(int)", "12.0", "10,000", count, *(f"{v:,}" for v in states.values()), "120"])]
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def test_pc_sample_states_that_add_up_to_the_sample_count_give_shares_of_samples(tmp_path):
    _, _, md = built(tmp_path, pcsamp_export(tmp_path / "p.csv", "1,000"))
    text = claim(md, "gemm's warps")
    assert text.startswith("gemm's warps were found stalled in 50.0% of its PC samples on long\\_scoreboard, 15.0% on "
                           "wait, 10.0% on not\\_selected and 5.0% on barrier (first launch; PC samples of warp states, "
                           "not cycles).")
    assert "account for 100.0% of PC samples (smsp\\_\\_pcsamp\\_sample\\_count), so none is missing" in text


def test_pc_sample_states_short_of_the_sample_count_give_no_shares(tmp_path):
    _, _, md = built(tmp_path, pcsamp_export(tmp_path / "p.csv", "1,200"))
    text = claim(md, "gemm's warps")
    assert "no share of warp-active cycles is given" in text and "% of its PC samples" not in text


# -- real --metrics exports with cycles and no duration (items 1, 3, 4; issue 27 item 4) ------------

A100_CYCLES = NCU / "ncu_details_cudaroofline_a100pcie_cmdline_cycles_no_duration.csv"
V100_CYCLES = NCU / "ncu_details_cudaroofline_v100pcie_cmdline_cycles_no_duration.csv"
SMSP_PRINTFP = NCU / "ncu_details_learningnote_a100pcie_smsp_cycles_printfp.csv"


def test_a_real_cycles_only_export_gets_derived_durations_rates_and_ranking(tmp_path):
    """An A100 PCIe export of `--metrics sm__cycles_elapsed.avg,…,dram__bytes.sum`: no duration."""
    profile = read_exports({A100_CYCLES.name: A100_CYCLES.read_bytes()})
    first = profile.launch(0)  # 1,708,634.20 cycles at 765,001,631.38 cycle/s; 823,404,288 bytes
    assert (first["duration_us"], first["duration_derived"]) == (pytest.approx(2233.50, abs=0.01), True)
    assert (first["dram_gbs"], first["dram_gbs_derived"]) == (369, True)
    assert profile.kernels[0]["kernel"].startswith("void cutlass::Kernel<")  # 790 ms of 906 ms
    rid, html, md = built(tmp_path, A100_CYCLES, args=("--gpu", "NVIDIA A100-PCIE-40GB"))
    # ran at its 765 MHz base clock, far below its 1.41 GHz maximum: still not called locked
    assert claim(md, "SM at").startswith(
        "SM at 0.76 GHz (maximum 1.41 GHz, base 0.765 GHz); the export does not say whether ncu locked the clocks")
    assert "SM clock from sm\\_\\_cycles\\_elapsed.avg.per\\_second" in md


def test_smsp_cycles_printed_with_print_fp_give_durations(tmp_path):
    """`--print-fp` (two decimals on every value) and smsp__cycles_elapsed (issue 27 item 4)."""
    profile = read_exports({SMSP_PRINTFP.name: SMSP_PRINTFP.read_bytes()})
    gemm = next(k for k in profile.kernels if k["kernel"].startswith("void gemm_v0"))
    assert gemm["total_us"] == pytest.approx(36.984e6, rel=1e-4) and gemm["duration_derived"]


def test_a_volta_tensor_op_gemm_counted_in_fp32_sass_alone_is_said_so(tmp_path):
    """NERSC's roofline metrics (sm__sass_* FP counters, sm__inst_executed_pipe_tensor) on a V100:
    the tensor-op GEMM's FP32 instructions are not its FLOP rate."""
    _, _, md = built(tmp_path, V100_CYCLES)
    flop = [line for line in md.splitlines() if "of fp32 instructions, the only FLOPs the export counts" in line]
    assert len(flop) == 2  # the two CUTLASS GEMMs: one named tensorop, both on the tensor pipes
    assert all("tensor-pipe instructions say" in line and "no tensor FLOP counter or roofline row" in line for line in flop)
    assert not any("fp32 peak" in line for line in flop)


# -- item 8: a measured peak says what it is ----------------------------------------------------------

BW = Path(__file__).parent / "fixtures" / "bandwidth"


def peak(tmp_path: Path, name: str) -> tuple[dict, str]:
    arch = tmp_path / "arch"
    out = CliRunner().invoke(cli, ["collect", "bandwidth", "--from-babelstream", str(BW / name), "-a", str(arch)])
    assert out.exit_code == 0, out.output
    rid = out.stdout.strip().splitlines()[-1]
    return json.loads(CliRunner().invoke(cli, ["show", rid, "-a", str(arch), "--json"]).stdout), \
        CliRunner().invoke(cli, ["show", rid, "-a", str(arch)]).stdout


def test_a_babelstream_run_that_failed_validation_says_so(tmp_path):
    record, shown = peak(tmp_path, "babelstream_uobhpc_graphcoreipu_v3.4_validation_failed_sum.txt")
    assert record["data"]["validation"] == ("failed: Validation failed on sum. Error 7.62939e-06 Sum was "
                                            "19.1933250427246 but should be 19.1933326721191")
    assert record["limitations"][0].startswith("BabelStream reported that the run failed its own validation "
                                               "(Validation failed on sum. Error 7.62939e-06)")
    assert "  validation: failed: Validation failed on sum." in shown


@pytest.mark.parametrize("name, best, kernel, driver", [
    ("babelstream_uobhpc_titanxp_v3.3_addtriad_faster_than_copy.txt", 436.5, "Add, Triad", "9010"),
    ("babelstream_uobhpc_gtx980ti_v2.0_gpustream_opencl_label_nodot.txt", 269.2, "Triad", "7050"),  # GPU-STREAM
    ("babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt", 1394.6, "Copy", "11040"),
])
def test_best_is_the_highest_the_run_measured_and_the_printed_driver_is_kept(tmp_path, name, best, kernel, driver):
    record, shown = peak(tmp_path, name)
    data = record["data"]
    assert (data["max_gbs"], data["max_kernel"], data["peak_kernel"], data["driver"]) == (best, kernel, "Copy", driver)
    assert data["validation"] == "no failure printed"
    assert not any("driver, and other" in x or "clocks, driver" in x for x in record["limitations"])
    assert f"the driver is as BabelStream printed it (Driver: {driver}" in " ".join(record["limitations"])
    assert f"({kernel})" in shown


# -- item 5: the Markdown twin carries every figure the page shows -----------------------------------

class _Cells(HTMLParser):
    """The text of each cell of a page's kernel and launch tables, the kernel names left out."""

    def __init__(self) -> None:
        super().__init__()
        self.table: str | None = None
        self.cell: list[str] | None = None
        self.cells: list[str] = []
        self.kernel = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("class")
        elif tag == "td" and self.table in ("kernels", "launches"):
            self.cell, self.kernel = [], a.get("class") == "kernel"

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.cell is not None:
            if not self.kernel:
                self.cells.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


@pytest.mark.parametrize("export", [K0005, LASSEN, A100_CYCLES])
def test_the_markdown_twin_carries_every_figure_of_the_page_s_tables(tmp_path, export):
    _, html, md = built(tmp_path, export)
    parser = _Cells()
    parser.feed(html)
    assert any("GB/s" in c for c in parser.cells) or export == LASSEN  # the DRAM column is there to carry
    table = md.split("## Launches", 1)[1] if "## Launches" in md else md.split("longest launches", 1)[1]
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    for cell in parser.cells:
        assert any(f"| {cell} |" in row for row in rows), cell
    assert "| ID | kernel | duration | DRAM |" in table


def test_a_flop_rate_with_half_precision_counted_too_is_not_called_fp32_alone(tmp_path):
    """The export counts HFMA as well as FFMA: 'of fp32 instructions, the only FLOPs the export
    counts' was untrue, and it has a tensor-pipe instruction counter, only no tensor FLOP one
    (a review helper recomputed both)."""
    _, _, md = built(tmp_path, SMSP_PRINTFP)
    (flop,) = [line for line in md.splitlines() if "gemm" in line and "FLOPs the export counts" in line]
    assert "runs 1.86 TFLOP/s of the FLOPs the export counts, most of them fp32" in flop
    assert "the only FLOPs" not in flop and "holds no tensor FLOP counter or roofline row" in flop
