"""The command line as a new user meets it (issue 16): which archive a command works on,
warnings a build prints, errors that point the right way, what ``show`` says."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, NCU, ROOT

K3 = NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"


def files_under(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


# -- item 1: an archive must be named or found; only build falls back to the sample ---------------

def test_writing_commands_never_write_into_the_sample_of_a_clone(tmp_path, run, monkeypatch):
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "sample_evidence", clone / "sample_evidence")
    before = files_under(clone)
    monkeypatch.chdir(clone)
    old, new = sorted(p.stem for p in (clone / "sample_evidence" / "records").rglob("*.json"))[:2]
    expected = (f"Error: {clone}: no archive named, and none found here or above (a folder holding records/ "
                "and blobs/, or evidence/ holding them); give --archive DIR or set IKREPORT_ARCHIVE\n")
    for args in (("supersede", old, "--by", new, "--reason", "oops"), ("compare", old, new),
                 ("collect", "env", "--from-nvidia-smi", SMI_Q), ("collect", "ncu", "--from-csv", K3),
                 ("collect", "bandwidth"), ("list",), ("check",), ("verify",)):
        result = run(*args)
        assert (result.exit_code, result.stderr) == (1, expected), args
    assert files_under(clone) == before
    # build alone keeps the sample as its demo
    built = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    records = len(list((ROOT / "sample_evidence" / "records").rglob("*.json")))  # and index, changelog, report
    assert built.exit_code == 0 and built.stdout.startswith(f"{tmp_path / 'site'}: {records + 3} pages ({records} records")


def test_an_archive_is_found_from_the_working_directory_upward(tmp_path, run, monkeypatch):
    repo = tmp_path / "repo"
    first = run("collect", "env", "--from-nvidia-smi", SMI_Q, "--archive", repo / "evidence")
    assert first.exit_code == 0
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    # found as the evidence/ of a folder above: collect writes there, list and build read it
    second = run("collect", "ncu", "--from-csv", K3, "--gpu", "RTX 5090")
    assert second.exit_code == 0
    assert len(list((repo / "evidence" / "records").rglob("*.json"))) == 2
    assert len(run("list").stdout.splitlines()) == 2
    built = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.stdout.startswith(f"{tmp_path / 'site'}: ") and "(2 records" in built.stdout
    # inside the archive itself, it is the archive
    monkeypatch.chdir(repo / "evidence" / "records")
    assert run("verify").stdout == f"{repo / 'evidence'}: 2 records and 2 blobs verified\n"
    # a folder with records/ but no blobs/ is not an archive
    (tmp_path / "half" / "records").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "half")
    assert run("list").exit_code == 1


def test_a_named_archive_wins_over_a_found_one(tmp_path, run, monkeypatch):
    run("collect", "env", "--from-nvidia-smi", SMI_Q, "--archive", tmp_path / "evidence")
    other = tmp_path / "other"
    assert run("collect", "ncu", "--from-csv", K3, "--archive", other).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert "ncu-profile" in run("list", "--archive", other).stdout
    monkeypatch.setenv("IKREPORT_ARCHIVE", str(other))
    assert "ncu-profile" in run("list").stdout


# -- item 2: build prints every finding check would, with a count; --strict fails on them ---------

@pytest.fixture
def sample(tmp_path):
    """A copy of the sample archive, with a report citing a superseded record and a null value."""
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    return arch


BABEL = "04d263543dee"


def sample_id(run, arch, kind, title_part):
    line = next(x for x in run("list", "-a", arch).stdout.splitlines() if kind in x and title_part in x)
    return line.split()[0]


def test_build_prints_each_warning_with_a_count_and_strict_fails(sample, tmp_path, run):
    old = sample_id(run, sample, "environment", "RTX 3060")  # the sample's report cites neither
    new = sample_id(run, sample, "environment", "H100")
    babel = BABEL  # the A100 BabelStream record
    assert run("supersede", old, "--by", new, "--reason", "wrong kernel", "-a", sample).exit_code == 0
    reports = sample / "reports"
    (reports / "old.md").write_text(f"The laptop [ev:{old}].\n")
    # BabelStream prints no median: the record holds null there
    (reports / "null.md").write_text(f"Median [ev:{babel} data.median_gbs].\n")
    (reports / "none.md").write_text("Nothing cited.\n")
    found = [f"{reports / 'none.md'}:1: IK202 the report cites no record",
             f"{reports / 'null.md'}:1: IK203 record {babel[:8]}: data.median_gbs is null (not measured or "
             "not reported), so the page shows n/a",
             f"{reports / 'old.md'}:1: IK201 cites {old[:8]}, which {new[:8]} supersedes"]
    assert run("check", sample).stdout.splitlines() == found
    built = run("build", sample, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 0
    assert built.stderr.splitlines() == [f"Warning: {line}" for line in found] + [
        "3 warnings; --strict makes the IK2xx ones fail ('ikreport check' lists them)"]
    assert "n/a" in (tmp_path / "site" / "r" / "null.html").read_text()
    strict = run("build", sample, "-o", tmp_path / "strict", "--strict", "--cache-dir", tmp_path / "cache")
    # a failing build stops in one line, as every error does; check lists every finding
    assert (strict.exit_code, strict.stdout) == (1, "")
    assert strict.stderr == f"Error: {found[0]} (and 2 more: 'ikreport check' lists them)\n"
    assert not (tmp_path / "strict").exists()


def test_a_build_stopped_by_an_error_says_so_in_one_line(sample, tmp_path, run):
    (sample / "reports" / "bad.md").write_text("Unknown [ev:0123abcd].\n")
    (sample / "reports" / "none.md").write_text("Nothing cited.\n")
    built = run("build", sample, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 1 and not (tmp_path / "site").exists()
    assert built.stderr == (f"Error: {sample / 'reports' / 'bad.md'}:1: IK103 no record starts with 0123abcd; "
                            "'ikreport list' lists the records\n")


def test_the_sample_builds_without_a_warning(tmp_path, run):
    built = run("build", ROOT / "sample_evidence", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert (built.exit_code, built.stderr) == (0, "")


# -- item 4: errors that point the right way -------------------------------------------------------

# The first 64 bytes of a real report (iamcoleman/monte-carlo-pi profile.ncu-rep, ncu on Windows 10):
# every .ncu-rep starts with NVR\0, then a protobuf stream.
NCU_REP_HEAD = bytes.fromhex(
    "4e56520002000000 0807cb0000000800 10001a5710dfa4a9 fe051a4f0a0a5769"
    "6e646f7773203130 120532303236321a 2949 6e74656c28522920436f72652854".replace(" ", ""))


def test_a_ncu_rep_given_as_csv_is_named_as_a_report(tmp_path, run):
    report = tmp_path / "step.ncu-rep"
    report.write_bytes(NCU_REP_HEAD + bytes(range(256)))
    result = run("collect", "ncu", "--from-csv", report, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {report}: an Nsight Compute report (.ncu-rep), not a CSV export; give it with --import instead "
        f"(needs ncu), or export its pages with 'ncu --import {report} --csv --page raw' and '--page details'\n"))
    assert files_under(tmp_path / "arch") == []


def test_import_of_a_missing_report_says_no_such_file_even_without_ncu(tmp_path, run, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run("collect", "ncu", "--import", tmp_path / "nope.ncu-rep", "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {tmp_path / 'nope.ncu-rep'}: no such file; give the path of an existing .ncu-rep report\n")
    report = tmp_path / "there.ncu-rep"
    report.write_bytes(NCU_REP_HEAD)
    result = run("collect", "ncu", "--import", report, "-a", tmp_path / "arch")
    assert result.stderr == ("Error: ncu: not found on PATH; install Nsight Compute, or export the report's CSV "
                             "pages on a machine that has it and import them with --from-csv\n")


# Shapes printed by 'nvidia-smi --query-gpu=... --format=csv' (header row, units in brackets)
@pytest.mark.parametrize("text", [
    "index, name, memory.total [MiB], memory.used [MiB], utilization.gpu [%]\n"
    "0, NVIDIA RTX A6000, 49140 MiB, 299 MiB, 0 %\n1, NVIDIA RTX A6000, 49140 MiB, 11 MiB, 0 %\n",
    "name, memory.total [MiB], driver_version\r\nNVIDIA A100-SXM4-80GB, 81920 MiB, 570.133.20\r\n",
])
def test_a_query_gpu_csv_is_named_as_such(tmp_path, run, text):
    saved = tmp_path / "gpu.csv"
    saved.write_text(text)
    result = run("collect", "env", "--from-nvidia-smi", saved, "-a", tmp_path / "arch")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {saved}: 'nvidia-smi --query-gpu' CSV output, which holds only the fields it asked for; "
        "save 'nvidia-smi -q' (or plain 'nvidia-smi') to a file instead\n"))


def test_live_bandwidth_without_a_gpu_suggests_only_its_own_options(tmp_path, run, monkeypatch):
    from ikreport.collect import bandwidth_run

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run("collect", "bandwidth", "-a", tmp_path / "arch")  # no CuPy, PyTorch or nvcc here
    assert result.stderr == ("Error: nvcc: not found on PATH; install CuPy, PyTorch or the CUDA toolkit on the GPU "
                             "machine, or import saved output with --from-babelstream FILE, --from-nvbandwidth FILE or "
                             "--from-bandwidthtest FILE\n")
    monkeypatch.setattr(bandwidth_run, "available_backend", lambda wanted: "cupy")  # CuPy, but no GPU
    result = run("collect", "bandwidth", "-a", tmp_path / "arch")
    assert result.stderr == ("Error: nvidia-smi: not found on PATH; a live measurement needs an NVIDIA GPU and its "
                             "driver; or import saved output with --from-babelstream FILE, --from-nvbandwidth FILE or "
                             "--from-bandwidthtest FILE\n")
    assert "--from-nvidia-smi" not in result.stderr and files_under(tmp_path / "arch") == []


def test_a_mistyped_value_path_gets_every_key_or_the_nearest(sample, tmp_path, run):
    gemv = sample_id(run, sample, "ncu-profile", "GEMV (kernel 1)")
    babel = BABEL  # the A100 BabelStream record
    report = sample / "reports" / "typo.md"
    report.write_text(f"[ev:{gemv} data.launches.0.dram_pc] [ev:{babel} data.peek_gbs] "
                      f"[ev:{babel} data.kernels.0.best]\n")
    lines = [x for x in run("check", sample).stdout.splitlines() if "typo.md" in x]
    assert lines == [
        f"{report}:1: IK106 record {gemv[:8]}: data.launches.0.dram_pc: data.launches.0 has no 'dram_pc' "
        "(did you mean dram_pct, dram_gbs or sm_pct? it has 35 keys)",
        f"{report}:1: IK106 record {babel[:8]}: data.peek_gbs: data has no 'peek_gbs' "
        "(did you mean peak_gbs or peak_basis? it has 19 keys)",
        f"{report}:1: IK106 record {babel[:8]}: data.kernels.0.best: data.kernels.0 has no 'best' "
        "(it has avg_s, best_gbs, function, max_s, min_s)"]


def test_grammar_of_messages_and_banner(sample, tmp_path, run):
    from ikreport.formatting import with_article

    assert [with_article(w) for w in ("environment", "comparison", "ncu-profile", "peak-bandwidth", "HBM", "stall")] == [
        "an environment", "a comparison", "an ncu-profile", "a peak-bandwidth", "an HBM", "a stall"]
    gemv = sample_id(run, sample, "ncu-profile", "GEMV (kernel 1)")
    env = sample_id(run, sample, "environment", "RTX 3060")
    refused = run("compare", env, gemv, "-a", sample)
    assert refused.stderr == (f"Error: {env}: is an environment record; compare takes ncu-profile records or "
                              "serving-benchmark records\n")
    h100 = sample_id(run, sample, "environment", "H100")
    assert run("supersede", env, "--by", h100, "--reason", "Wrong box.", "-a", sample).exit_code == 0
    again = run("collect", "ncu", "--from-csv", NCU / "ncu_details_llmperfopt_k0001_metrics.csv", "-a", sample,
                "--title", "the GEMV again").stdout.splitlines()[-1]
    same = run("compare", gemv, again, "-a", sample).stdout.splitlines()[-1]  # one kernel, one launch a side
    assert run("build", sample, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c").exit_code == 0
    full = run("show", env, "-a", sample).stdout.splitlines()[1].split()[-1]
    html = (tmp_path / "site" / "e" / f"{full}.html").read_text()
    assert ": Wrong box. This page stays" in html and "box.." not in html
    assert (tmp_path / "site" / "e" / f"{full}.md").read_text().count("Wrong box.\n") == 1
    page = (tmp_path / "site" / "e" / f"{same}.html").read_text()
    assert "Of 1 kernel: 1 UNDECIDED." in page and "(median of 1 launch in A and 1 launch in B, B/A 1.000)" in page


# -- item 5: show gives what a record is for ---------------------------------------------------------

def test_show_gives_the_peak_of_a_peak_bandwidth_record(run):
    # the sample's BabelStream record, imported from tests/fixtures/bandwidth (Copy: 1394571.325 MBytes/sec,
    # BabelStream's own figure, from its fastest run)
    sample = ROOT / "sample_evidence"
    shown = run("show", sample_id(run, sample, "peak-bandwidth", "BabelStream"), "-a", sample).stdout.splitlines()
    assert shown[shown.index("  limitations:") - 5:shown.index("  limitations:")] == [
        "  peak:      1.39 TB/s (BabelStream's own Copy figure (MBytes/sec), from the fastest of 100 runs)",
        "  best:      1.39 TB/s (Copy)",
        "  validation: no failure printed",
        "  theoretical: unknown",
        "  counting:  read+write: a copy of N bytes counts 2N bytes moved (BabelStream's own: Copy reads one "
        "array and writes another)"]


@pytest.mark.parametrize("title,lines", [
    ("H100", ["  driver:    570.133.20, CUDA 12.8",
              "  gpu 0:     NVIDIA H100 80GB HBM3: memory 81559 MiB, power limit 700 W",
              "  gpu 1:     NVIDIA H100 80GB HBM3: memory 81559 MiB, power limit 700 W"]),
    ("RTX 3060", ["  driver:    610.88, CUDA 13.3",
                  "  gpu 0:     NVIDIA GeForce RTX 3060 Laptop GPU: memory 6144 MiB, power limit 80 W, "
                  "max clocks SM 2100 / memory 7001 MHz"]),
])
def test_show_gives_memory_and_power_of_an_environment_record(run, title, lines):
    # the sample's environment records, imported from the two real nvidia-smi outputs in tests/fixtures
    sample = ROOT / "sample_evidence"
    shown = run("show", sample_id(run, sample, "environment", title), "-a", sample).stdout.splitlines()
    end = shown.index("  limitations:")
    assert shown[end - len(lines):end] == lines


# -- item 3: the README's walkthrough runs as pasted ------------------------------------------------

def test_the_readme_walkthrough_runs_as_pasted(tmp_path):
    """The walkthrough's block, run by bash in a folder laid out as a clone after `make site`.
    The one stand-in is .venv/bin/activate, which puts this test run's ikreport on PATH."""
    import os
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## Walkthrough"):]
    block = section[section.index("```sh\n") + 6:section.index("\n```", section.index("```sh\n"))]
    clone = tmp_path / "clone"
    (clone / "tests" / "fixtures").mkdir(parents=True)
    shutil.copytree(FIXTURES / "ncu", clone / "tests" / "fixtures" / "ncu")
    shutil.copytree(ROOT / "site", clone / "site")  # the committed sample site, which the walkthrough leaves alone
    bin_dir = clone / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "ikreport").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ikreport "$@"\n')
    (bin_dir / "ikreport").chmod(0o755)
    (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"\nexport PATH\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), **{k: v for k, v in os.environ.items() if k == "SYSTEMROOT"}}
    done = subprocess.run(["bash", "-e", "-c", block], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "  ncu-profile  NVIDIA B200  " in out[0] and out[1] == "FlashAttention split-KV decode on a B200"
    assert "  profile:   16 launches of 2 kernels, 991 µs profiled GPU time" in out
    assert f"{clone / 'evidence'}: 1 record and 1 blob verified" in out
    assert f"{clone / 'evidence-site'}: 3 pages (1 record, 5 claims)" in out
    # step 4: two runs compared to a verdict, like-for-like from their session pages, nothing written
    assert "| clock control | base (observed) | base (observed) |" in out
    assert sum(line.endswith("| SAME |") for line in out) == 2 and "Not like-for-like" not in done.stdout
    assert "no comparison record written (--no-record)" in done.stderr
    assert (clone / "evidence-site" / "index.html").is_file()
    assert all((clone / "site" / p.relative_to(ROOT / "site")).read_bytes() == p.read_bytes()
               for p in (ROOT / "site").rglob("*") if p.is_file())
