"""How a profile was made (issue 14 items 6, 8, 9): ncu's session page as a third export, the
clocks ncu's counters show, and durations derived from elapsed cycles. Real exports from
tests/fixtures/ncu (the session page is constructed: see SOURCES.md) and small cases."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.clocks import clock_fact
from ikreport.analysis.ncu.session import is_session_page, parse_session
from ikreport.claims.model import RecordSet
from ikreport.errors import IkreportError, NcuExportError, TruncatedExportError
from ikreport.kinds.ncu_profile.claims import clock_claims
from ikreport.store.archive import Archive
from reliability.fuzz import mutate, one_line_naming

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NCU = FIXTURES / "ncu"
SESSION = NCU / "session_constructed_b200.csv"
RAW_B200 = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
RAW_1650 = NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
T4 = NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"
V100 = NCU / "ncu_details_xplacer_bfs_v100_2020_kerneltime.csv"
RTX50 = NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"


def imported(run, tmp_path, *args) -> dict:
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "--from-csv", *args, "--archive", arch)
    assert result.exit_code == 0, result.output
    return Archive.open(arch).load(result.stdout.strip().splitlines()[-1])


def refused(run, tmp_path, *args) -> str:
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "--from-csv", *args, "--archive", arch)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
    assert not arch.exists() or not [p for p in arch.rglob("*") if p.is_file()]  # nothing written
    return result.stderr


# -- the session page ----------------------------------------------------------------------------

def test_the_session_page_is_told_from_raw_and_details_by_its_content():
    assert is_session_page(SESSION.read_bytes())
    for export in sorted(NCU.glob("*.csv")):
        if export != SESSION:
            assert not is_session_page(export.read_bytes()), export.name


def test_the_session_page_gives_version_command_options_and_device():
    session = parse_session(SESSION.read_bytes(), "s.csv")
    assert session.version == "2025.2.1.0"
    assert session.command is not None and session.command[-2:] == ("--ctx", "4096")
    assert dict(session.options) == {"cache_control": "all", "clock_control": "base", "replay_mode": "kernel"}
    assert (session.device, session.max_sm_khz, session.driver) == ("NVIDIA B200", 1965000.0, "575.57.08")


def test_options_come_from_the_command_line_when_the_page_has_no_rows_for_them():
    page = ('"Launch Settings"\n"Command Line","ncu --clock-control=none --cache-control none -o r ./app"\n'
            '"Session"\n"Profiler Version","2024.3.2.0 (build 1) (public-release)"\n')
    session = parse_session(page, "s.csv")
    assert dict(session.options) == {"cache_control": "none", "clock_control": "none"}
    assert session.version == "2024.3.2.0"


@pytest.mark.parametrize("page,message", [
    ('"Launch Settings"\n"Clock Control","Turbo"\n',
     "s.csv: clock control is 'Turbo', which ikreport does not know (expected one of base, none, reset); "
     "export it again with 'ncu --import REPORT --csv --page session'"),
    ('"Session"\n"Host Name","node7"\n',
     "s.csv: a session page with no ncu version, command line, settings or device; "
     "export it again with 'ncu --import REPORT --csv --page session'"),
])
def test_a_session_page_that_cannot_be_read_is_refused(page, message):
    with pytest.raises(NcuExportError) as exc:
        parse_session(page, "s.csv")
    assert str(exc.value) == message


def test_a_session_page_cut_short_is_refused_with_its_line():
    data = SESSION.read_bytes().split(b"==PROF== Disconnected")[0].rstrip(b"\n")  # ends on a whole row
    assert parse_session(data, "s.csv").version == "2025.2.1.0"
    for cut in range(len(data) - 1, len(data) - 40, -1):
        if data[cut - 1:cut] in (b"\n", b'"'):
            continue  # a cut at a line end or just after a closing quote leaves whole rows
        with pytest.raises(TruncatedExportError, match=r"^s\.csv:\d+: .*cut short"):
            parse_session(data[:cut], "s.csv")


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_a_mutated_session_page_reads_or_is_refused_cleanly(rng):
    data = mutate(SESSION.read_bytes(), rng)
    try:
        session = parse_session(data, "s.csv")
    except IkreportError as exc:
        one_line_naming(exc, "s.csv")
        return
    text = data.decode("utf-8", "replace")
    assert session.name == "s.csv" and session.entries  # read: what it says is in the page
    # as the page writes it: a quoted CSV cell doubles a quote (a mutation made a device 'NVIDIA B200"display_name')
    assert all(fact is None or fact in text or fact.replace('"', '""') in text
               for fact in (session.version, session.device, session.driver))


@pytest.mark.parametrize("order", [(RAW_B200, SESSION), (SESSION, RAW_B200)])
def test_an_import_with_the_session_page_records_what_it_observed(tmp_path, order, run):
    record = imported(run, tmp_path, *order)
    method = record["method"]
    assert method["tool_version"] == "2025.2.1.0"
    assert method["options"] == {"cache_control": "all", "clock_control": "base", "driver": "575.57.08",
                                 "replay_mode": "kernel"}
    assert set(method["option_sources"].values()) == {"observed from the session page"}
    assert method["how"] == ("imported from a CSV export (raw, session page); cache control, clock control, driver, "
                             "ncu version, replay mode observed from the session page")
    assert method["command"][0] == "/usr/local/cuda/bin/ncu"
    assert record["limitations"][0].startswith("ncu ran with --clock-control base and --cache-control all "
                                               "(observed from the session page)")
    roles = sorted(s["role"] for s in record["sources"])
    assert roles == ["ncu-raw-csv", "ncu-session-csv"]


def test_a_stated_option_agreeing_with_the_session_page_is_observed_and_others_stay_stated(tmp_path, run):
    trimmed = tmp_path / "session-without-driver.csv"
    trimmed.write_bytes(b"".join(line for line in SESSION.read_bytes().splitlines(keepends=True)
                                 if not line.startswith(b'"Driver Version"')))
    record = imported(run, tmp_path, RAW_B200, trimmed, "--clock-control", "base", "--driver", "575.57.08")
    sources = record["method"]["option_sources"]
    assert sources["clock_control"] == "observed from the session page"
    assert sources["driver"] == "stated by the importer"
    assert "records --driver 575.57.08, but --driver 560.35 was stated" in refused(
        run, tmp_path / "other", RAW_B200, SESSION, "--driver", "560.35")


def test_a_stated_option_the_session_page_contradicts_is_refused(tmp_path, run):
    assert refused(run, tmp_path, RAW_B200, SESSION, "--clock-control", "none") == (
        f"Error: {SESSION}: the session page records --clock-control base, but --clock-control none was stated; "
        "leave --clock-control out (the session page says how the run was made) or give the session page of "
        "this run\n")
    assert "records --ncu-version 2025.2.1.0, but --ncu-version 2024.1 was stated" in refused(
        run, tmp_path, RAW_B200, SESSION, "--ncu-version", "2024.1")


def test_a_session_page_alone_or_of_another_gpu_is_refused(tmp_path, run):
    assert refused(run, tmp_path, SESSION) == (
        f"Error: {SESSION}: this is a session page: give it with the raw/details exports\n")
    assert refused(run, tmp_path, RAW_1650, SESSION) == (
        f"Error: {SESSION}: the session page names the device 'NVIDIA B200', but {RAW_1650} names "
        "'NVIDIA GeForce GTX 1650 Ti'; give the session page of the same report\n")
    again = tmp_path / "session-again.csv"
    again.write_bytes(SESSION.read_bytes() + b"\n")  # another file: the very same bytes are refused as given twice
    assert "a second session page" in refused(run, tmp_path, RAW_B200, SESSION, again)


# -- clocks from the counters --------------------------------------------------------------------

@pytest.mark.parametrize("export,sm_hz,dram_hz", [
    (T4, 584998877, 4963609951),  # --print-units base: 'hz'
    (RTX50, 1990000000, 13770000000),  # 'Ghz'
    (V100, 1053372525, 704207921),  # 2020: 'cycle/second', DRAM as 'Memory Frequency'; median of 13 launches
])
def test_real_exports_give_the_clocks_they_ran_at(tmp_path, export, sm_hz, dram_hz, run):
    clocks = imported(run, tmp_path, export)["data"]["clocks"]
    assert (clocks["sm_hz"], clocks["dram_hz"]) == (sm_hz, dram_hz)
    assert "max_sm_hz" not in clocks  # a details page carries no device attributes


def test_exports_without_a_clock_keep_no_clocks(tmp_path, run):
    assert "clocks" not in imported(run, tmp_path, RAW_1650)["data"]  # max clock only, no observed clock


def test_the_clock_claim_against_a_datasheet_maximum(tmp_path, run):
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "--from-csv", T4, "--gpu", "Tesla T4", "--archive", arch)
    record_id = result.stdout.strip().splitlines()[-1]
    record = Archive.open(arch).load(record_id)
    [claim] = clock_claims(record_id, record, RecordSet.of({record_id: record}))
    assert claim.text == (
        "SM at 0.58 GHz (maximum 1.59 GHz); the export does not say whether ncu locked the clocks (its default, "
        "--clock-control base, locks them at base). SM clock from ncu's SM Frequency row, median of 1 launch; "
        "maximum from a datasheet value, not measured. DRAM at 4.96 GHz, from ncu's DRAM Frequency row.")


def test_the_session_page_gives_the_maximum_and_the_clock_control():
    profile = read_exports({"t4.csv": T4.read_bytes()})
    from ikreport.collect.ncu_session import provenance_data

    session = parse_session(SESSION.read_bytes(), "s.csv")
    clocks = provenance_data(profile, session)["clocks"]
    assert (clocks["max_sm_hz"], clocks["max_source"]) == (
        1965000000, "the session page's device attribute max_gpu_frequency_khz")


UNSAID = "; the export does not say whether ncu locked the clocks (its default, --clock-control base, locks them at base)"


@pytest.mark.parametrize("sm, top, base, control, text", [
    # issue 32 item 1: a consumer Blackwell card at 93% of its maximum ran locked at base
    (2.40e9, 2.572e9, 2.407e9, ("base", "observed from the session page"),
     "SM at 2.40 GHz (maximum 2.57 GHz, base 2.41 GHz); ncu ran with --clock-control base (observed from the "
     "session page): clocks locked at base"),
    # an A100 PCIe far below its maximum, nothing recorded: not called locked
    (0.765e9, 1.41e9, 0.765e9, None, "SM at 0.77 GHz (maximum 1.41 GHz, base 0.765 GHz)" + UNSAID),
    (1.95e9, 1.965e9, None, ("none", "passed to ncu by ikreport"),
     "SM at 1.95 GHz (maximum 1.97 GHz); ncu ran with --clock-control none (passed to ncu by ikreport): clocks "
     "not locked, as the program runs"),
    (1.10e9, None, None, None, "SM at 1.10 GHz" + UNSAID),
])
def test_clock_fact_says_locked_only_as_recorded(sm, top, base, control, text):
    assert clock_fact(sm, top, base, control) == text
    assert "likely" not in text


# -- durations derived from cycles ---------------------------------------------------------------

def without_durations(path) -> bytes:
    """A real details export with its Duration rows taken out, as an export made with only the
    SpeedOfLight cycle and frequency metrics would be."""
    return b"".join(line for line in path.read_bytes().splitlines(keepends=True)
                    if b'"Duration"' not in line and b'"gpu__time_duration' not in line)


@pytest.mark.parametrize("export", [T4, V100, RTX50])
def test_durations_derived_from_cycles_match_ncus_own(export):
    measured = read_exports({"m.csv": export.read_bytes()}).launches
    derived = read_exports({"d.csv": without_durations(export)}).launches
    for m, d in zip(measured, derived):
        assert "duration_derived" not in m and d["duration_derived"] is True
        # the printed clock is rounded (1.99 Ghz): within 1% of ncu's gpu__time_duration
        assert d["duration_us"] == pytest.approx(m["duration_us"], rel=0.01)


def test_derived_durations_are_labelled_in_the_record_and_its_limitations(tmp_path, run):
    d = tmp_path / "no-duration.csv"
    d.write_bytes(without_durations(V100))
    record = imported(run, tmp_path, d)
    assert all(k["duration_derived"] for k in record["data"]["kernels"])
    assert record["data"]["profiled_time_us"] is not None
    assert ("13 launches have no gpu__time_duration in the export: their durations are derived from elapsed "
            "cycles over the clock they count") in " ".join(record["limitations"])
    measured = imported(run, tmp_path / "m", V100)
    assert not any("derived" in line for line in measured["limitations"])


def test_a_quoted_cell_with_more_after_its_closing_quote_is_refused():
    """csv read '"NVIDIA B2"ID"00"' as the device 'NVIDIA B2ID"00"', a name the page does not
    hold (the mutation property found it in CI); ncu never writes such a cell."""
    data = SESSION.read_bytes().replace(b'"NVIDIA B200"', b'"NVIDIA B2"ID"00"', 1)
    assert data != SESSION.read_bytes()
    with pytest.raises(NcuExportError, match=r"^s\.csv: not a CSV file ncu wrote \(',' expected after '\"'\)"):
        parse_session(data, "s.csv")
