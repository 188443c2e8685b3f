"""Messages and pages read as English: counts agree with their nouns (formatting.plural), field
names are humanised, and a limitation names the tool whose output was read."""

from __future__ import annotations

from click.testing import CliRunner

from conftest import FIXTURES
from ikreport.cli.main import cli
from ikreport.commands.supersede import problems
from ikreport.store.recordset import Supersession
from test_history import nightly  # noqa: F401  (fixture)

SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_an_index_says_1_record_cited(tmp_path):
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


def test_a_history_page_names_its_fields_as_readers_write_them(nightly, tmp_path):
    arch, _ = nightly
    assert run("build", arch, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c").exit_code == 0
    (page,) = (tmp_path / "site" / "h").glob("*.md")
    assert "6 profiles of the same GPU (NVIDIA H200), workload (decode step, batch 8), in order" in page.read_text()


def test_an_environment_from_the_table_names_the_table_as_lacking_compute_capability(tmp_path):
    rid = run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", tmp_path).stdout.strip()
    shown = run("show", rid, "-a", tmp_path).stdout
    assert "nvidia-smi's table output does not report compute capability" in shown
    assert "-q does not report" not in shown
