"""``collect ncu --from-csv``: turn saved ncu CSV exports into an ``ncu-profile`` record.

Each export is kept verbatim as a blob; the record holds one summary per launch, a
per-kernel table, and the limitations that follow from what an export does not say.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ikreport.claims.kernel_names import profile_title
from ikreport.store import records
from ikreport.analysis.ncu import Profile, read_exports
from ikreport.analysis.ncu_summary import SOL_RULE
from ikreport.store.archive import Archive, sha256
from ikreport.collect.context import Context, utc_now
from ikreport.collect.ncu_session import SESSION_ROLE, check_session, method, observed_limitation, provenance_data, split_session
from ikreport.collect.big_export import Streamed, stream_export
from ikreport.collect.textfile import read_export
from ikreport.errors import IkreportError, NcuExportError
from ikreport.formatting import plural
from ikreport.progress import Progress
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE, ONE_RUN
from ikreport.kinds.ncu_profile_data import LAUNCH_TABLE_ROLE, inline, profile_data

BIG_EXPORT = 10_000_000  # bytes: an import this big takes long enough to say what it is doing
LIMIT_REPLAY = (
    "ncu serialises kernel launches and replays each one, so overlap between kernels and "
    "launch gaps are not seen: profiled GPU time is a sum of isolated kernel durations, not "
    "the workload's wall time."
)
LIMIT_IMPORTED = (
    "Imported from a CSV export, which does not say which --clock-control and --cache-control "
    "ncu ran under: with ncu's default (base clocks locked, caches flushed) durations can be "
    "longer than in the running program."
)
LIMIT_BOUND = (
    f"The bound label follows {SOL_RULE}. It names the busiest unit, not the cause, and "
    "ncu's Memory Throughput is the busiest of L1, L2 and DRAM (DRAM alone where the export lacks it)."
)
LIMIT_NO_STALLS = "No warp-stall metrics were captured, so stall reasons are not known."
LIMIT_NO_SOL = (
    "The export has no DRAM, memory or SM throughput metrics, so no kernel can be called "
    "memory- or compute-bound."
)


class LaunchSpool:
    """The temporary file a streamed export's per-launch CSV is written to as it is made (in
    TMPDIR, deleted when closed). A write the folder refuses (full, or a file-size limit) is one
    line naming the folder, like every error, and nothing is stored."""

    def __init__(self) -> None:
        try:
            self.file = tempfile.NamedTemporaryFile(prefix="ikreport-launches-", suffix=".csv")
        except OSError as exc:
            raise self._error(exc) from exc
        self.name = self.file.name

    @staticmethod
    def _error(exc: OSError) -> IkreportError:
        return IkreportError(f"{tempfile.gettempdir()}: cannot write the export's per-launch table there "
                             f"({exc.strerror}); free some space or set TMPDIR to a folder with room")

    def write(self, data: bytes) -> int:
        try:
            return self.file.write(data)
        except OSError as exc:
            raise self._error(exc) from exc

    def flush(self) -> None:
        try:
            self.file.flush()
        except OSError as exc:
            raise self._error(exc) from exc

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        return self.file.read(size)

    def close(self) -> None:
        self.file.close()


def sol_limitation(profile: Profile) -> str:
    """Why no launch has a bound label, naming only what the export lacks: an export holding
    DRAM bytes per second but no % of peak must not be said to have no DRAM metric."""
    facts = profile.facts
    has_gbs = facts.dram_gbs
    missing = [what for what, has in (("memory", facts.memory_pct), ("SM", facts.sm_pct)) if not has]
    if len(missing) == 2 and not has_gbs:
        return LIMIT_NO_SOL
    said = (f"The export has no {' or '.join(missing)} throughput as a % of peak" if missing
            else "No launch in the export has both memory and SM throughput as a % of peak")
    if has_gbs and "memory" in missing:
        said += " (it has DRAM bytes per second, but no DRAM peak to divide them by)"
    return said + ", so no kernel can be called memory- or compute-bound."


def stated_limitation(stated: dict[str, str], observed: str | None = None) -> str:
    """What an import can say of the run's clock and cache control: as the session page
    records them (``observed``), else as stated, else unknown."""
    if observed:
        return observed
    if "clock_control" in stated and "cache_control" in stated:
        return (f"Imported from a CSV export: --clock-control {stated['clock_control']} and --cache-control "
                f"{stated['cache_control']} are as stated by the importer, not observed.")
    return LIMIT_IMPORTED


def profile_limitations(profile: Profile, gpu: str | None, *, imported: bool = True,
                        stated: dict[str, str] | None = None, observed: str | None = None) -> list[str]:
    """Limitations that follow from what the exports hold (pure). ``imported``: the run's
    options are unknown unless ``observed`` on a session page or ``stated`` (a collector that
    ran ncu states them itself)."""
    out = [stated_limitation(stated or {}, observed), LIMIT_REPLAY] if imported else []
    out += [ONE_RUN, LIMIT_BOUND]
    facts = profile.facts
    if not facts.stalls:
        out.append(LIMIT_NO_STALLS)
    if not facts.bound:
        out.append(sol_limitation(profile))
    derived_count = facts.derived_durations
    if derived_count:
        out.append(f"{plural(derived_count, 'launch has', 'launches have')} no gpu__time_duration in the export: "
                   "their durations are derived from elapsed cycles over the SM clock (gpc__cycles_elapsed.max / "
                   "gpc__cycles_elapsed.avg.per_second), not measured, and are marked derived.")
    if not facts.timed:
        out.append("The export has no kernel durations (gpu__time_duration), so no time shares can be given.")
    if facts.unread:
        out.append(f"Some values had units that could not be read and were left out ({', '.join(facts.unread)}).")
    errors = [m for m in profile.messages if m.startswith("==ERROR==")]
    if errors:  # e.g. '==ERROR== Failed to profile "gemm"': those launches are not in the export
        out.append(f"ncu reported {plural(len(errors), 'error', 'errors')} while profiling, so the export may be "
                   f"partial: what ncu failed to profile is missing. First: {errors[0]}")
    warnings = len(profile.messages) - len(errors)
    if warnings:
        out.append(f"ncu printed {plural(warnings, 'warning', 'warnings')} (kept in the record as ncu_messages).")
    if gpu is None:
        cc = ", ".join(profile.compute_capabilities) or "unknown"
        out.append(f"The export does not name the GPU (compute capability {cc}); pass --gpu when importing.")
    return out


def launch_table_source(archive: Archive, profile: Profile, written: Path | None = None) -> list[dict[str, Any]]:
    """The per-launch CSV blob of a profile too big to keep every launch in its record;
    ``written``: the file it was written to as it was made (a streamed import), copied from
    there in chunks rather than read back whole."""
    if inline(profile):
        return []
    if written is not None:
        archive.put_blob_file(written, profile.launch_csv.sha256)
        blob_id, size = profile.launch_csv.sha256, profile.launch_csv.size
    else:
        table = profile.csv()
        blob_id, size = archive.put_blob(table), len(table)
    return [{"role": LAUNCH_TABLE_ROLE, "id": blob_id, "size": size, "media_type": "text/csv", "name": "launches.csv"}]


def import_csv(archive: Archive, paths: list[Path], context: Context,
               progress: Progress | None = None) -> str:
    """Store the exports and their ``ncu-profile`` record; return the record's id."""
    if not paths or len(paths) > 3:
        raise NcuExportError("give one raw and/or one details export, and optionally the session page (one to three files)")
    raw_bytes: dict[str, bytes] = {}
    texts: dict[str, bytes | str] = {}
    streamed: dict[str, Streamed] = {}  # big exports: checked and hashed in chunks, rows read from the file
    given: dict[str, Path] = {}  # sha256 -> the path first given with those bytes
    for path in paths:
        big = stream_export(path)
        if big is not None:
            streamed[str(path)] = big
            digest = big.sha256
        else:
            raw_bytes[str(path)], texts[str(path)] = read_export(path, NcuExportError)
            digest = sha256(raw_bytes[str(path)])
        # one export given twice (the same path, or a copy) would be read as one: say so instead
        if digest in given:
            raise NcuExportError(f"{path}: the same file as {given[digest]}, given twice; give each export once")
        given[digest] = path
    size = sum(len(d) for d in raw_bytes.values()) + sum(s.size for s in streamed.values())
    if progress and size > BIG_EXPORT:
        progress.step(f"parsing {size / 1e6:.0f} MB of ncu export")
    session, rest = split_session(texts)  # a streamed export is a raw page, never the session page
    exports = {str(p): streamed[str(p)].export if str(p) in streamed else rest[str(p)]
               for p in paths if str(p) in streamed or str(p) in rest}
    # a streamed export's per-launch CSV goes to a file as it is made, never whole in memory
    spool = LaunchSpool() if streamed else None
    try:
        profile = read_exports(exports, spool)  # parse everything before writing anything
        stated = dict(context.stated)
        if session is not None:
            check_session(session, profile, stated)
        if progress and size > BIG_EXPORT:
            progress.step(f"writing the record of {plural(profile.launch_count, 'launch', 'launches')}")
        sources = launch_table_source(archive, profile, Path(spool.name) if spool else None)
    finally:
        if spool is not None:
            spool.close()  # and so deleted
    for name in map(str, paths):
        if name in streamed:
            blob_id, blob_size = streamed[name].sha256, streamed[name].size
            archive.put_blob_file(Path(name), blob_id)
        else:
            blob_id, blob_size = archive.put_blob(raw_bytes[name]), len(raw_bytes[name])
        sources.append({
            "role": SESSION_ROLE if session is not None and name == session.name else f"ncu-{profile.pages[name]}-csv",
            "id": blob_id,
            "size": blob_size,
            "media_type": "text/csv",
            "name": Path(name).name,
        })
    gpu = context.gpu or (profile.devices[0] if len(profile.devices) == 1 else None)
    pages = sorted(set(profile.pages.values())) + (["session"] if session is not None else [])
    how = "imported from a CSV export (" + ", ".join(pages) + " page)"
    title = context.title or profile_title(profile.kernels[0]["kernel"] if profile.kernels else None)
    record = records.new_record(
        NCU_PROFILE,
        title,
        collected_at=utc_now(),
        subject=context.subject(gpu),
        # the page shows "how": which options were observed on the session page, which stated
        method=method(profile, stated, session, how),
        data={**profile_data(profile), **provenance_data(profile, session)},
        limitations=profile_limitations(profile, gpu, stated=stated, observed=observed_limitation(session))
        + list(context.limitations),
        sources=sorted(sources, key=lambda s: (s["role"], s["id"])),
    )
    return archive.put_record(record)
