"""A reader given another tool's output names what it was given and which option takes it
(analysis/sniff.py), on the real exports in tests/fixtures and a small ncu console log."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from ikreport.analysis.sniff import identify

BW = FIXTURES / "bandwidth"
BABEL = BW / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"
NVB = BW / "nvbandwidth_llmaction_h800x8_v0.2_excerpt.txt"
RAW = FIXTURES / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"
SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
SESSION = FIXTURES / "ncu" / "session_constructed_b200.csv"
# what ncu prints on the console when it writes a report (ncu -o /tmp/step ...)
NCU_LOG = ("==PROF== Connected to process 4242 (/usr/bin/python3.12)\n"
           '==PROF== Profiling "flash_fwd_kernel" - 0: 0%....50%....100% - 38 passes\n'
           "==PROF== Disconnected from process 4242\n"
           "==PROF== Report: /tmp/step.ncu-rep\n")
QUERY_GPU = "index, name, memory.total [MiB]\n0, NVIDIA H200, 143771 MiB\n"


@pytest.mark.parametrize(("path", "kind"), [(BABEL, "babelstream"), (NVB, "nvbandwidth"), (RAW, "ncu-csv"),
                                            (SMI_Q, "nvidia-smi"), (SMI_TABLE, "nvidia-smi"),
                                            (SESSION, "ncu-session")])
def test_each_real_export_is_recognised_as_its_tool(path, kind):
    assert identify(path.read_text("utf-8")) == kind


def test_an_ncu_log_given_as_csv_names_the_report_to_import(tmp_path, run):
    log = tmp_path / "step.log"
    log.write_text(NCU_LOG)
    result = run("collect", "ncu", "--from-csv", log, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {log}: this is ncu's console log, not an export; the report is /tmp/step.ncu-rep: "
        "give it with 'collect ncu --import /tmp/step.ncu-rep'\n"))


def test_a_query_gpu_csv_given_to_collect_ncu_is_named_as_such(tmp_path, run):
    saved = tmp_path / "gpu.csv"
    saved.write_text(QUERY_GPU)
    result = run("collect", "ncu", "--from-csv", saved, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {saved}: this is 'nvidia-smi --query-gpu' CSV output;")


@pytest.mark.parametrize(("option", "given", "what", "fix"), [
    ("--from-babelstream", NVB, "nvbandwidth output", "--from-nvbandwidth"),
    ("--from-nvbandwidth", BABEL, "BabelStream output", "--from-babelstream"),
])
def test_one_bandwidth_tool_s_output_given_for_the_other_is_named(tmp_path, option, given, what, fix, run):
    result = run("collect", "bandwidth", option, given, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {given}: this is {what}; give it to 'collect bandwidth {fix}'\n")


def test_an_ncu_csv_given_as_nvidia_smi_output_is_named(tmp_path, run):
    result = run("collect", "env", "--from-nvidia-smi", RAW, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {RAW}: this is an ncu CSV export; give it to 'collect ncu --from-csv'\n")


@pytest.mark.parametrize("importer", [("env", "--from-nvidia-smi"), ("bandwidth", "--from-babelstream"),
                                      ("bandwidth", "--from-nvbandwidth")])
def test_a_session_page_given_to_another_importer_is_named_with_where_it_goes(tmp_path, importer, run):
    # the fixture has ==PROF== lines around the page, as ncu prints them: not called a console log
    result = run("collect", *importer, SESSION, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {SESSION}: this is ncu's session page (--page session); give it to 'collect ncu --from-csv' "
        "as a third file, beside the raw and details exports of the same report\n"))
    assert not (tmp_path / "arch").exists()



@pytest.mark.parametrize("extra", ['"' + "x" * 140_000 + '"\n',  # a cell past csv's 128 kB limit
                                   '"Version"\n'])  # a session-page word, quoted
def test_a_valid_nvbandwidth_output_is_not_taken_for_a_session_page(tmp_path, extra, run):
    from test_bandwidth_parsers import LOCAL

    given = tmp_path / "nvb.txt"
    given.write_text(extra + LOCAL)
    result = run("collect", "bandwidth", "--from-nvbandwidth", given, "--gpu", "NVIDIA GeForce RTX 3050 Laptop GPU",
                 "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    assert identify(given.read_text()) == "nvbandwidth"


def test_a_file_csv_cannot_read_is_one_line_for_every_importer(tmp_path, run):
    given = tmp_path / "long.txt"
    given.write_text('"' + "x" * 140_000 + '"\n')
    for importer in (("env", "--from-nvidia-smi"), ("bandwidth", "--from-babelstream"), ("ncu", "--from-csv")):
        result = run("collect", *importer, given, "-a", tmp_path / "arch")
        assert result.exit_code == 1 and "Traceback" not in result.output, (importer, result.output)
        assert result.stderr.startswith(f"Error: {given}") and result.stderr.count("\n") == 1, (importer, result.stderr)
    assert not (tmp_path / "arch").exists()
