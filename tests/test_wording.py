"""Messages and pages read as English: counts agree with their nouns (formatting.plural), field
names are humanised, and a limitation names the tool whose output was read."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from ikreport.commands.supersede import problems
from ikreport.store.recordset import Supersession
from test_history import nightly  # noqa: F401  (fixture)

SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"


def test_an_index_says_1_record_cited(tmp_path, run):
    arch = tmp_path / "arch"
    rid = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", arch).stdout.strip()
    (arch / "reports").mkdir()
    (arch / "reports" / "one.md").write_text(f"---\ntitle: One\n---\n\nIt ran for [ev:{rid[:8]} "
                                             "data.launches.0.duration_us].\n")
    assert run("build", arch, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c").exit_code == 0
    assert "(1 record cited)" in (tmp_path / "site" / "index.html").read_text()
    assert "(1 record cited)" in (tmp_path / "site" / "index.md").read_text()


def test_a_kind_mismatch_says_which_kind_the_correction_must_be():
    (found,) = problems([Supersession("c" * 64, "a" * 64, "b" * 64)], {"a" * 64: "environment",
                                                                       "b" * 64: "ncu-profile"})
    assert found[1].endswith("a correction must be of the same kind: supersede it by an environment record")


def test_a_history_page_names_its_fields_as_readers_write_them(nightly, tmp_path, run):
    arch, _ = nightly
    assert run("build", arch, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c").exit_code == 0
    (page,) = (tmp_path / "site" / "h").glob("*.md")
    assert "6 profiles of the same GPU (NVIDIA H200), workload (decode step, batch 8), in order" in page.read_text()


def test_an_environment_from_the_table_names_the_table_as_lacking_compute_capability(tmp_path, run):
    rid = run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", tmp_path).stdout.strip()
    shown = run("show", rid, "-a", tmp_path).stdout
    assert "nvidia-smi's table output does not report compute capability" in shown
    assert "-q does not report" not in shown


def test_a_dump_that_says_1_gpu_but_holds_2_says_so_in_english(tmp_path):
    from ikreport.analysis.nvidia_smi import NvidiaSmiError, parse_nvidia_smi

    text = SMI_Q.read_text("utf-8")
    section = text[text.index("\nGPU 0000"):]
    doubled = text + section.replace("GPU 00000000:01:00.0", "GPU 00000000:02:00.0", 1)
    with pytest.raises(NvidiaSmiError, match="says 1 GPU is attached but holds 2; the dump is truncated"):
        parse_nvidia_smi(doubled, "q.txt")


def test_a_live_run_of_one_launch_says_1_launch_was_profiled():
    from ikreport.collect.ncu_run import NcuOptions, option_limitations

    options = NcuOptions(launch_count=1)
    expected = "Only 1 launch after skipping 0 was profiled; the rest of the workload is not shown."
    assert expected in option_limitations(options)
