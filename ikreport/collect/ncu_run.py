"""``collect ncu -- CMD…`` and ``collect ncu --import REPORT.ncu-rep``.

Runs ncu with every option that changes results stated on its command line (ncu's defaults
changed between releases, e.g. --clock-control), keeps the .ncu-rep and its raw and details
CSV exports as blobs, snapshots the environment before and after, and writes an
``ncu-profile`` record that cites both environment records.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ikreport.claims.kernel_names import profile_title
from ikreport.formatting import plural
from ikreport.store import records
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.session import parse_session
from ikreport.store.archive import Archive
from ikreport.collect import tools
from ikreport.collect.ncu_outcome import Outcome, outcome
from ikreport.collect.context import Context, utc_now
from ikreport.collect.env import snapshot, write_env_record
from ikreport.collect.ncu_import import launch_table_source, profile_limitations
from ikreport.collect.ncu_session import (SESSION_ROLE, control_limitation, observed_options, provenance_data,
                                          split_session)
from ikreport.progress import Progress
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.kinds.ncu_profile.data import profile_data

# What the summaries need: throughput (SOL), bytes and rates (MWA), occupancy and its limits,
# launch shape, and warp-stall reasons (WarpStateStats, SchedulerStats).
DEFAULT_SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats",
                    "SchedulerStats")


@dataclass(frozen=True)
class NcuOptions:
    """Every ncu option that changes results, stated explicitly so the record can say what ran."""

    clock_control: str = "none"  # the clocks the workload really runs at
    cache_control: str = "all"
    replay_mode: str = "kernel"
    target_processes: str = "all"
    set: str | None = None
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    metrics: tuple[str, ...] = ()
    kernel_name: str | None = None
    launch_skip: int = 0
    launch_count: int | None = None
    nvtx_include: tuple[str, ...] = field(default_factory=tuple)

    def argv(self) -> list[str]:
        """The options as ncu command-line arguments."""
        args = ["--clock-control", self.clock_control, "--cache-control", self.cache_control,
                "--replay-mode", self.replay_mode, "--target-processes", self.target_processes,
                "--launch-skip", str(self.launch_skip)]
        if self.launch_count is not None:
            args += ["--launch-count", str(self.launch_count)]
        if self.set:
            args += ["--set", self.set]
        for section in self.sections:
            args += ["--section", section]
        if self.metrics:
            args += ["--metrics", ",".join(self.metrics)]
        if self.kernel_name:
            args += ["--kernel-name", self.kernel_name]
        if self.nvtx_include:
            args.append("--nvtx")
            for expr in self.nvtx_include:
                args += ["--nvtx-include", expr]
        return args


# what each setting of ncu's clock, cache and replay options means for the numbers
_CLOCKS = {
    "none": "Clocks were not locked (--clock-control none): durations are at the clocks the workload ran at, which "
            "move with temperature and power, so two runs can differ.",
    "base": "Clocks were locked to base (--clock-control base): durations are longer than at the boost clocks the "
            "workload normally runs at.",
}
_CACHES = {
    "all": "--cache-control all flushes the caches before each kernel, so small kernels look slower than in the "
           "running program, where L2 is often warm.",
    "none": "--cache-control none: replay passes after the first may hit caches the previous pass warmed, so memory "
            "metrics can look better than a cold run.",
}
_KERNEL_REPLAY = ("Kernel replay serialises launches and replays each kernel for several passes: overlap between "
                  "kernels and launch gaps are not seen, and profiled time is a sum of isolated kernel durations.")


def option_limitations(o: NcuOptions) -> list[str]:
    """What the chosen options mean for the numbers (pure)."""
    out = [text for text in (_CLOCKS.get(o.clock_control), _CACHES.get(o.cache_control, _CACHES["none"])) if text]
    out.append(_KERNEL_REPLAY if o.replay_mode == "kernel" else
               f"{o.replay_mode} replay runs the workload once per pass: a non-deterministic workload gives metrics "
               "from different runs.")
    if o.launch_count is not None or o.launch_skip:
        counted = "the launches" if o.launch_count is None else plural(o.launch_count, "launch", "launches")
        out.append(f"Only {counted} after skipping {o.launch_skip} {'was' if o.launch_count == 1 else 'were'} "
                   "profiled; the rest of the workload is not shown.")
    if o.kernel_name:
        out.append(f"Only kernels matching --kernel-name {o.kernel_name} were profiled.")
    if o.nvtx_include:
        out.append("Only launches inside the NVTX ranges " + ", ".join(o.nvtx_include) + " were profiled.")
    return out


def ncu_failure(result: tools.Result, version: str | None = None) -> str | None:
    """The one-line message with the fix for a failed ncu run (ncu_outcome.py); None when it worked."""
    found = outcome(result, version)
    return None if found.kind == "ok" else found.message


def ncu_version() -> str | None:
    """The installed ncu's version, or None when it does not say."""
    result = tools.run(["ncu", "--version"], timeout=60)
    m = re.search(r"Version\s+(\S+)", result.stdout)
    return m.group(1) if m else None


def _export(report: Path, progress: Progress | None, pages_wanted: tuple[str, ...] = ("raw", "details"),
            version: str | None = None) -> dict[str, bytes]:
    """Each page of ``pages_wanted`` as ncu exports it. The session page is left out when the
    installed ncu has none (before 2023.1 '--page session' is an option error)."""
    pages = {}
    for page in pages_wanted:
        if progress:
            progress.step(f"exporting the {page} page")
        result = tools.run(["ncu", "--import", str(report), "--csv", "--page", page], timeout=3600)
        found = outcome(result, version)
        if page == "session" and found.kind == "option":
            continue
        if found.kind != "ok":
            raise tools.ToolError(f"{report}: {found.message}")
        if not result.stdout.strip():
            raise tools.ToolError(f"{report}: ncu exported an empty {page} page: the report holds no profiled "
                                  "launch, or is damaged")
        pages[page] = result.stdout.encode("utf-8")
    return pages


def profile_argv(options: NcuOptions, report: Path, command: list[str]) -> list[str]:
    """The exact ncu command line a live profile runs: every option stated, the report kept."""
    return ["ncu", *options.argv(), "--export", str(report), "--force-overwrite", *command]


def check_command_line(command: list[str], options: NcuOptions) -> str:
    """Run the ncu command line a profile of ``command`` would, keeping nothing, and say in one
    line whether this ncu accepts it; ToolError naming the option when it does not. A target
    that launches no kernel, or a machine without a GPU, still shows every option accepted."""
    if not command:
        raise tools.ToolError("give the command to check after '--': ikreport collect ncu --check -- python step.py")
    tools.find("ncu")
    version = ncu_version()
    with tempfile.TemporaryDirectory(prefix="ikreport-ncu-check-") as tmp:
        result = tools.run(profile_argv(options, Path(tmp) / "check.ncu-rep", command), timeout=3600)
        wrote = (Path(tmp) / "check.ncu-rep").exists()
    found: Outcome = outcome(result, version)
    if not found.accepted:
        raise tools.ToolError(found.message)
    named = f"ncu {version or '(version unknown)'} accepts the command line 'collect ncu' builds"
    if found.kind == "ok":
        return f"{named}; it profiled the command{'' if wrote else ' but wrote no report'} (nothing was stored)"
    return f"{named}; it profiled nothing ({found.said}): nothing was stored"


def _changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    keys = ("sm_clock_mhz", "memory_clock_mhz", "power_limit_w", "performance_state", "ecc_mode", "mig_mode")
    out = []
    for i, (b, a) in enumerate(zip(before["gpus"], after["gpus"])):
        out += [{"gpu": i, "field": k, "before": b.get(k), "after": a.get(k)} for k in keys if b.get(k) != a.get(k)]
    return out


def _write(archive: Archive, context: Context, *, pages: dict[str, bytes], report: bytes | None,
           report_name: str, method: dict[str, Any], extra_limits: list[str], env_ids: list[str],
           changes: list[dict[str, Any]] | None, run: tuple[int, int] | None = None) -> str:
    session, texts = split_session({f"{report_name} ({page} page)": data.decode("utf-8", "replace")
                                    for page, data in pages.items()})
    profile = read_exports(texts)
    sources = launch_table_source(archive, profile)
    if report is not None:
        sources.append({"role": "ncu-report", "id": archive.put_blob(report), "size": len(report),
                        "media_type": "application/octet-stream", "name": report_name})
    for page, page_bytes in pages.items():
        role = SESSION_ROLE if page == "session" else f"ncu-{page}-csv"
        sources.append({"role": role, "id": archive.put_blob(page_bytes), "size": len(page_bytes),
                        "media_type": "text/csv", "name": f"{Path(report_name).stem}-{page}.csv"})
    gpu = context.gpu or (profile.devices[0] if len(profile.devices) == 1 else None)
    limitations = extra_limits + profile_limitations(profile, gpu, imported=False)
    data = {**profile_data(profile), **provenance_data(profile, session)}
    if changes is not None:
        data["environment_changes"] = changes
        if changes:
            listed = "; ".join(f"GPU {c['gpu']} {c['field']} {c['before']} -> {c['after']}" for c in changes[:4])
            limitations.append(f"The environment changed between the snapshots before and after profiling ({listed}).")
    title = context.title or profile_title(profile.kernels[0]['kernel'] if profile.kernels else None)
    record = records.new_record(
        NCU_PROFILE, title + (f" (run {run[0]} of {run[1]})" if run else ""),
        collected_at=utc_now(), subject=context.subject(gpu), method=method, data=data,
        limitations=limitations + list(context.limitations), sources=sources,
        environment=env_ids[0] if env_ids else None, cites=env_ids,
    )
    return archive.put_record(record)


def run_profile(archive: Archive, context: Context, command: list[str], options: NcuOptions,
                progress: Progress | None = None, run: tuple[int, int] | None = None) -> str:
    """Profile ``command`` with ncu and store the report, its exports and the record; return the
    record's id. ``run``: (n, of) when this is one of several runs, said in the title."""
    if not command:
        raise tools.ToolError("give the command to profile after '--': ikreport collect ncu -- python step.py")
    tools.find("ncu")
    version = ncu_version()
    if progress:
        progress.step("environment before profiling")
    # written only once profiling has worked: a failure leaves nothing
    raw_before, before = snapshot("a live profile needs an NVIDIA GPU and its driver; or import an export with --from-csv")
    with tempfile.TemporaryDirectory(prefix="ikreport-ncu-") as tmp:
        report = Path(tmp) / "profile.ncu-rep"
        argv = profile_argv(options, report, command)
        if progress:
            progress.step("profiling with ncu: the workload runs once per replay pass, so this takes a while")
        result = tools.run(argv, timeout=None)
        problem = ncu_failure(result, version)
        if problem is None and not report.exists():
            problem = "ncu wrote no report: " + (result.stdout + result.stderr).strip().splitlines()[-1:][0] \
                if (result.stdout + result.stderr).strip() else "ncu wrote no report"
        if problem:
            raise tools.ToolError(problem)
        pages = _export(report, progress)
        report_bytes = report.read_bytes()
    if progress:
        progress.step("environment after profiling")
    raw_after, after = snapshot()
    # The snapshots describe the same run: same subject and limitations, the environment's own title.
    snapshot_context = replace(context, title=None)
    env_before = write_env_record(archive, raw_before, before, snapshot_context)
    env_after = write_env_record(archive, raw_after, after, snapshot_context)
    method = {"tool": "ncu", "tool_version": version, "command": [Path(argv[0]).name, *argv[1:]],
              "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(options).items()},
              "how": "profiled on this machine"}
    env_ids = [env_before] if env_before == env_after else [env_before, env_after]
    return _write(archive, context, pages=pages, report=report_bytes, report_name="profile.ncu-rep",
                  method=method, extra_limits=option_limitations(options), env_ids=env_ids,
                  changes=_changes(before, after), run=run)


def run_profiles(archive: Archive, context: Context, command: list[str], options: NcuOptions, repeat: int,
                 progress: Progress | None = None) -> list[str]:
    """Profile ``command`` ``repeat`` times, one record per run (the unit ``compare`` takes the
    interval over); return the records' ids in run order. A failed run stops the rest; the
    runs before it are kept, each complete in itself, and the error names them."""
    if repeat < 1:
        raise tools.ToolError(f"--repeat {repeat}: give a number of runs of at least 1")
    ids: list[str] = []
    for n in range(1, repeat + 1):
        if progress and repeat > 1:
            progress.step(f"run {n} of {repeat}")
        try:
            ids.append(run_profile(archive, context, command, options, progress, (n, repeat) if repeat > 1 else None))
        except tools.ToolError as exc:
            if not ids:
                raise
            raise tools.ToolError(f"run {n} of {repeat}: {exc} (runs 1 to {n - 1} are kept: {','.join(ids)})") from exc
    return ids


def import_report(archive: Archive, context: Context, report: Path, progress: Progress | None = None) -> str:
    """Export an existing .ncu-rep with ncu and store it with its record; return the record's id."""
    if not report.is_file():  # before looking for ncu: a mistyped path is the first thing to fix
        raise tools.ToolError(f"{report}: no such file; give the path of an existing .ncu-rep report")
    tools.find("ncu", "install Nsight Compute, or export the report's CSV pages on a machine that has it "
                      "and import them with --from-csv")
    exporter = ncu_version()
    pages = _export(report, progress, ("raw", "details", "session"), exporter)
    if "session" in pages:
        # the session page says how the report was made, and which ncu made it: the local ncu
        # only exported it, and may be another release
        session = parse_session(pages["session"], f"{report.name} (session page)")
        options = observed_options(session)
        seen = ["ncu version"] * bool(session.version) + ["command"] * bool(session.command)
        seen += [k.replace("_", " ") for k in sorted(options)]
        how = ", ".join(seen) + " observed from its session page" if seen else "its session page says nothing"
        made_by, command = session.version, list(session.command or []) or None
    else:
        options, made_by, command = {}, None, None
        how = (f"the installed ncu ({exporter or 'version unknown'}) has no session page, so the ncu version, "
               "command and options the report was made with are not observed")
    method = {"tool": "ncu", "tool_version": made_by, "command": command, "options": options,
              "how": "imported from an existing .ncu-rep report; " + how, "exported_with": exporter}
    limits = [control_limitation(options, {}, "an existing report"),
              "The environment the report was made in is not known (no snapshots were taken).",
              "ncu serialises kernel launches, so overlap between kernels and launch gaps are not seen."]
    return _write(archive, context, pages=pages, report=report.read_bytes(), report_name=report.name,
                  method=method, extra_limits=limits, env_ids=[], changes=None)
