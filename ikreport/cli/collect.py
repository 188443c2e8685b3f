"""The ``ikreport collect`` commands: capture or import measurements as records.

Options in, one library call, the new record's id out (the last line printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ikreport.cli.options import archive_option, context_options, input_files, make_context, terminal_progress


@click.group()
def collect() -> None:
    """Capture measurements as evidence records in an archive."""


@collect.command("ncu", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--from-csv", "from_csv", is_flag=True,
              help="ARGS are one raw and/or one details CSV export to import (page detected from the header), "
                   "and optionally the session page of the same report (--page session).")
@click.option("--import", "report", type=click.Path(dir_okay=False, path_type=Path),
              help="Export and import an existing REPORT.ncu-rep (needs ncu, not a GPU).")
@click.option("--check", is_flag=True,
              help="Run the exact ncu command line a profile of ARGS would, keep nothing, and say in one line "
                   "whether the installed ncu accepts every option (no GPU needed).")
@click.option("--clock-control", type=click.Choice(["none", "base", "reset"]), default="none", show_default=True,
              help="none: the clocks the workload really runs at; base: locked base clocks.")
@click.option("--cache-control", type=click.Choice(["all", "none"]), default="all", show_default=True)
@click.option("--replay-mode", type=click.Choice(["kernel", "application", "range", "app-range"]),
              default="kernel", show_default=True)
@click.option("--target-processes", type=click.Choice(["all", "application-only"]), default="all", show_default=True)
@click.option("--set", "section_set", help="An ncu section set instead of the default sections.")
@click.option("--section", "sections", multiple=True,
              help="Sections to collect (repeatable) [default: SpeedOfLight MemoryWorkloadAnalysis Occupancy "
                   "LaunchStats WarpStateStats SchedulerStats].")
@click.option("--metrics", multiple=True, help="Extra metrics (repeatable).")
@click.option("--kernel-name", help="Profile only kernels matching this name (ncu syntax, e.g. regex:gemm).")
@click.option("--launch-skip", type=int, default=0, show_default=True)
@click.option("--launch-count", type=int)
@click.option("--nvtx-include", multiple=True, help="Profile only inside these NVTX ranges (repeatable).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Profile the command this many times, one record per run (compare takes runs as its unit).")
@click.option("--ncu-version", help="With --from-csv: the ncu version that profiled, as you state it.")
@click.option("--driver", help="With --from-csv: the NVIDIA driver version it ran under, as you state it.")
@archive_option(unless="check")
@context_options
def collect_ncu(args: tuple[str, ...], from_csv: bool, report: Path | None, check: bool, archive: Path,
                limitations: tuple[str, ...], context_file: Path | None, **options: Any) -> None:
    """Profile a command with Nsight Compute, or import an existing report or CSV export.

    \b
    ikreport collect ncu --archive evidence -- python step.py --batch 32
    ikreport collect ncu --repeat 3 --archive evidence -- python step.py
    ikreport collect ncu --import step.ncu-rep --archive evidence
    ikreport collect ncu --from-csv raw.csv [details.csv] [session.csv] --archive evidence
    ikreport collect ncu --check -- python step.py

    Every option that changes results is passed to ncu explicitly and recorded.
    Prints the new record's id as the last line (with --repeat, the ids joined by commas,
    as 'ikreport compare' takes several runs a side).
    """
    from ikreport.store.archive import Archive

    fields = {k: options.pop(k) for k in ("title", "gpu", "engine", "model", "workload")}
    # an export does not say how it was made: with --from-csv the run's options are what the
    # importer states (recorded as stated), so only options given on the command line count
    source = click.get_current_context().get_parameter_source
    given = {k: options[k] for k in ("clock_control", "cache_control", "replay_mode", "ncu_version", "driver")
             if options[k] is not None and source(k) != click.core.ParameterSource.DEFAULT}
    if check and (from_csv or report is not None or options["repeat"] > 1):
        raise click.UsageError("--check runs ncu's command line for a live profile; give it without --import, "
                               "--from-csv and --repeat")
    if from_csv and report is not None:
        raise click.UsageError("give --import REPORT or --from-csv FILES, not both")
    if report is not None and args:
        raise click.UsageError(f"--import takes one report and nothing else (got {' '.join(args)!r}); "
                               "import each report on its own")
    if options["repeat"] > 1 and (from_csv or report is not None):
        raise click.UsageError("--repeat makes several live runs; an import is one run (import each one)")
    if not from_csv and ("ncu_version" in given or "driver" in given):
        raise click.UsageError("--ncu-version and --driver state how an imported CSV export was made; "
                               "give them with --from-csv (a live run or --import records what it sees)")
    if check:
        from ikreport.collect.ncu_run import check_command_line

        click.echo(check_command_line(list(args), _ncu_options(options)))
        return
    context = make_context(context_file, limitations, fields, given if from_csv else None)
    store = Archive.create(archive)
    if from_csv:
        from ikreport.collect.ncu_import import import_csv

        if not args:
            raise click.UsageError("give the CSV exports after --from-csv: one raw and/or one details page, "
                                   "and optionally the session page")
        with terminal_progress() as progress:
            record_id = import_csv(store, [Path(a) for a in args], context, progress)
    elif report is not None:
        from ikreport.collect.ncu_run import import_report

        with terminal_progress() as progress:
            record_id = import_report(store, context, report, progress)
    else:
        from ikreport.collect.ncu_run import run_profiles

        if not args:
            raise click.UsageError("give the command to profile after '--', or --import / --from-csv")
        with terminal_progress() as progress:
            record_id = ",".join(run_profiles(store, context, list(args), _ncu_options(options), options["repeat"],
                                              progress))
    click.echo(record_id)


def _ncu_options(options: dict[str, Any]) -> Any:
    """The live-profile options as ncu_run.NcuOptions (imported only when a profile runs)."""
    from ikreport.collect.ncu_run import DEFAULT_SECTIONS, NcuOptions

    return NcuOptions(
        clock_control=options["clock_control"], cache_control=options["cache_control"],
        replay_mode=options["replay_mode"], target_processes=options["target_processes"],
        set=options["section_set"], sections=tuple(options["sections"]) or (() if options["section_set"] else DEFAULT_SECTIONS),
        metrics=tuple(options["metrics"]), kernel_name=options["kernel_name"], launch_skip=options["launch_skip"],
        launch_count=options["launch_count"], nvtx_include=tuple(options["nvtx_include"]),
    )


@collect.command("env")
@click.option("--from-nvidia-smi", "from_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Import saved 'nvidia-smi -q' or 'nvidia-smi' output instead of querying this machine.")
@archive_option()
@context_options
def collect_env(from_file: Path | None, archive: Path, limitations: tuple[str, ...], context_file: Path | None,
                **fields: Any) -> None:
    """Record the GPU and software environment (nvidia-smi, NVML, host, Python packages)."""
    from ikreport.store.archive import Archive
    from ikreport.collect.env import collect_env as collect

    click.echo(collect(Archive.create(archive), make_context(context_file, limitations, fields), from_file))


@collect.command("bandwidth")
@input_files(
    ("--from-babelstream", "Import saved BabelStream output (counts read + write, as ikreport does)."),
    ("--from-nvbandwidth", "Import saved nvbandwidth output, text or JSON (-j); only device_local_copy measures "
                           "device memory."),
    ("--from-bandwidthtest", "Import saved CUDA samples bandwidthTest output; its device-to-device figure already "
                             "counts read + write."))
@click.option("--backend", type=click.Choice(["cupy", "torch", "nvcc"]),
              help="How to measure [default: CuPy, else the shipped CUDA program via nvcc (both a copy kernel), "
                   "else PyTorch (a cudaMemcpy)].")
@click.option("--size-mib", "sizes", type=int, multiple=True, help="Buffer sizes in MiB [default: 256 512 1024].")
@click.option("--warmup", type=int, default=3, show_default=True)
@click.option("--repeats", type=int, default=10, show_default=True, help="Timed copies per size.")
@archive_option()
@context_options
def collect_bandwidth(from_babelstream: Path | None, from_nvbandwidth: Path | None, from_bandwidthtest: Path | None,
                      backend: str | None,
                      sizes: tuple[int, ...], warmup: int, repeats: int, archive: Path,
                      limitations: tuple[str, ...], context_file: Path | None, **fields: Any) -> None:
    """Measure peak device-memory bandwidth with a device-to-device copy, or import a tool's output.

    Bytes are counted read + write (a copy of N bytes moves 2N); the record says so.
    """
    from ikreport.store.archive import Archive
    from ikreport.collect import bandwidth

    if sum(x is not None for x in (from_babelstream, from_nvbandwidth, from_bandwidthtest)) > 1:
        raise click.UsageError("give one of --from-babelstream, --from-nvbandwidth and --from-bandwidthtest")
    context = make_context(context_file, limitations, fields)
    store = Archive.create(archive)
    if from_babelstream:
        record_id = bandwidth.import_babelstream(store, from_babelstream, context)
    elif from_nvbandwidth:
        record_id = bandwidth.import_nvbandwidth(store, from_nvbandwidth, context)
    elif from_bandwidthtest:
        record_id = bandwidth.import_bandwidthtest(store, from_bandwidthtest, context)
    else:
        from ikreport.collect.bandwidth_run import DEFAULT_SIZES_MIB

        if warmup < 0 or repeats < 1 or any(s < 1 for s in sizes):
            raise click.UsageError("--warmup >= 0, --repeats >= 1 and --size-mib >= 1")
        with terminal_progress("copies") as progress:
            record_id = bandwidth.measure_bandwidth(store, context, sizes_mib=list(sizes or DEFAULT_SIZES_MIB),
                                                    warmup=warmup, repeats=repeats, backend=backend, progress=progress)
    click.echo(record_id)


@collect.command("serving")
@input_files(
    ("--from-vllm", "Import vLLM's saved serving benchmark JSON (benchmark_serving.py --save-result, vllm bench serve)."),
    ("--from-sglang", "Import SGLang bench_serving JSONL output: one record per line (run)."),
    ("--from-aiperf", "Import AIPerf's profile_export_aiperf.csv or profile_export_aiperf.json."))
@archive_option()
@context_options
def collect_serving(from_vllm: Path | None, from_sglang: Path | None, from_aiperf: Path | None, archive: Path,
                    limitations: tuple[str, ...], context_file: Path | None, **fields: Any) -> None:
    """Import a serving benchmark's saved result as serving-benchmark records.

    Prints the new records' ids joined by commas as the last line (an SGLang file holds a run a line).
    """
    from ikreport.collect.serving_import import import_serving
    from ikreport.store.archive import Archive

    given = [(fmt, path) for fmt, path in (("vllm", from_vllm), ("sglang", from_sglang), ("aiperf", from_aiperf)) if path]
    if len(given) != 1:
        raise click.UsageError("give one of --from-vllm, --from-sglang or --from-aiperf")
    fmt, path = given[0]
    context = make_context(context_file, limitations, fields)
    click.echo(",".join(import_serving(Archive.create(archive), path, fmt, context)))


@collect.command("nsys", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--from-csv", "from_csv", type=click.Path(dir_okay=False, path_type=Path),
              help="Import saved 'nsys stats --format csv' output (cuda_gpu_kern_sum, cuda_gpu_kern_gb_sum or "
                   "cuda_gpu_trace).")
@archive_option()
@context_options
def collect_nsys(args: tuple[str, ...], from_csv: Path | None, archive: Path, limitations: tuple[str, ...],
                 context_file: Path | None, **fields: Any) -> None:
    """Record per-kernel times of a real run with Nsight Systems, or import nsys stats CSV output.

    \b
    ikreport collect nsys --archive evidence -- python serve_step.py
    ikreport collect nsys --from-csv cuda_gpu_kern_sum.csv --archive evidence
    """
    from ikreport.collect import nsys_import
    from ikreport.store.archive import Archive

    if from_csv is not None and args:
        raise click.UsageError("give --from-csv FILE or a command after '--', not both")
    if from_csv is None and not args:
        raise click.UsageError("give the command to profile after '--', or --from-csv FILE")
    context = make_context(context_file, limitations, fields)
    store = Archive.create(archive)
    if from_csv is not None:
        click.echo(nsys_import.import_csv(store, from_csv, context))
    else:
        click.echo(nsys_import.profile(store, list(args), context))
