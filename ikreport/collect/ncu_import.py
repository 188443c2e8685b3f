"""``collect ncu --from-csv``: turn saved ncu CSV exports into an ``ncu-profile`` record.

Each export is kept verbatim as a blob; the record holds one summary per launch, a
per-kernel table, and the limitations that follow from what an export does not say.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ikreport.claims.kernel_names import profile_title
from ikreport.store import records
from ikreport.analysis.ncu.read import Profile, read_exports
from ikreport.analysis.ncu.summary import SOL_RULE
from ikreport.store.archive import Archive, sha256
from ikreport.collect.context import Context, utc_now
from ikreport.collect.ncu_session import (SESSION_ROLE, check_session, control_limitation, method, observed_options,
                                         provenance_data, split_session)
from ikreport.collect.big_export import Streamed, stream_export
from ikreport.collect.textfile import read_export
from ikreport.errors import ArchiveError, IkreportError, NcuExportError
from ikreport.store.compression import GzipSpool
from ikreport.formatting import plural
from ikreport.progress import Progress
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE, ONE_RUN
from ikreport.kinds.ncu_profile.data import LAUNCH_TABLE_ROLE, inline, profile_data

BIG_EXPORT = 10_000_000  # bytes: an import this big takes long enough to say what it is doing
LIMIT_REPLAY = (
    "ncu serialises kernel launches and replays each one, so overlap between kernels and "
    "launch gaps are not seen: profiled GPU time is a sum of isolated kernel durations, not "
    "the workload's wall time."
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


class Spool(GzipSpool):
    """A temporary file (in TMPDIR, deleted when closed) that what an import writes as it goes is
    gzipped into: a streamed export's bytes as they are read and hashed, or its per-launch CSV
    as it is made. A write the folder refuses (full, or a file-size limit) is one line naming the
    folder, like every error, and nothing is stored."""

    def __init__(self, what: str) -> None:
        self.what = what
        try:
            super().__init__(lambda: tempfile.NamedTemporaryFile(prefix="ikreport-", suffix=".gz"))  # noqa: SIM115
        except OSError as exc:
            raise self._error(exc) from exc

    def _error(self, exc: OSError) -> IkreportError:
        return IkreportError(f"{tempfile.gettempdir()}: cannot write {self.what} there "
                             f"({exc.strerror}); free some space or set TMPDIR to a folder with room")

    def _check(self) -> None:
        try:
            super()._check()
        except OSError as exc:  # the spool's thread met it
            raise self._error(exc) from exc

    def compressed(self, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
        try:
            yield from super().compressed(chunk_bytes)
        except OSError as exc:
            raise self._error(exc) from exc


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


def profile_limitations(profile: Profile, gpu: str | None, *, imported: bool = True,
                        stated: dict[str, str] | None = None, observed: dict[str, str] | None = None) -> list[str]:
    """Limitations that follow from what the exports hold (pure). ``imported``: the run's
    options are unknown unless ``observed`` on a session page or ``stated`` (a collector that
    ran ncu states them itself)."""
    out = [control_limitation(observed or {}, stated or {}), LIMIT_REPLAY] if imported else []
    out += [ONE_RUN, LIMIT_BOUND]
    facts = profile.facts
    if not facts.stalls:
        out.append(LIMIT_NO_STALLS)
    if not facts.bound:
        out.append(sol_limitation(profile))
    derived_count = facts.derived_durations
    if derived_count:
        out.append(f"{plural(derived_count, 'launch has', 'launches have')} no gpu__time_duration in the export: "
                   "their durations are derived from elapsed cycles over the clock they count (the SM's "
                   "gpc__, sm__ or smsp__cycles_elapsed over its .avg.per_second; the DRAM's dram__cycles_elapsed "
                   "where the SM's are missing), not measured, and are marked derived.")
    if facts.too_short:
        out.append(f"{plural(facts.too_short, 'launch has', 'launches have')} a duration under 1 ns in the export (zero, "
                   "or rounded to zero by the unit it was printed in), which no kernel launch takes: "
                   f"{'it is' if facts.too_short == 1 else 'they are'} left untimed, out of profiled GPU time and time "
                   "shares.")
    if not facts.timed:
        out.append("The export has no kernel durations (gpu__time_duration), so no time shares can be given.")
    elif facts.untimed:
        out.append(f"{plural(facts.untimed, 'launch has', 'launches have')} no duration: profiled GPU time and time "
                   f"shares cover the other {plural(profile.launch_count - facts.untimed, 'launch', 'launches')} only.")
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


def launch_table_source(archive: Archive, profile: Profile, spool: GzipSpool | None = None) -> list[dict[str, Any]]:
    """The per-launch CSV blob of a profile too big to keep every launch in its record;
    ``spool``: the spool it was gzipped into as it was made (a streamed import), copied from
    there rather than read back whole."""
    if inline(profile):
        return []
    if spool is not None:
        blob_id, size = archive.put_blob(spool), profile.launch_csv.size
    else:
        table = profile.csv()
        blob_id, size = archive.put_blob(table), len(table)
    return [{"role": LAUNCH_TABLE_ROLE, "id": blob_id, "size": size, "media_type": "text/csv", "name": "launches.csv"}]


def import_csv(archive: Archive, paths: list[Path], context: Context,
               progress: Progress | None = None) -> str:
    """Store the exports and their ``ncu-profile`` record; return the record's id."""
    if not paths or len(paths) > 3:
        raise NcuExportError("give one raw and/or one details export, and optionally the session page (one to three files)")
    with contextlib.ExitStack() as spools:
        return _import(archive, paths, context, progress, spools)


def _import(archive: Archive, paths: list[Path], context: Context, progress: Progress | None,
            spools: contextlib.ExitStack) -> str:
    """``import_csv``'s work; ``spools`` closes the spools it makes."""
    raw_bytes: dict[str, bytes] = {}
    texts: dict[str, bytes | str] = {}
    streamed: dict[str, Streamed] = {}  # big exports: checked and hashed in chunks, rows read from the file
    given: dict[str, Path] = {}  # sha256 -> the path first given with those bytes
    for path in paths:
        big = stream_export(path, spool=functools.partial(Spool, f"a copy of {path.name}"))
        if big is not None:
            spools.callback(big.spool.close)  # and so deleted, whatever happens next
            streamed[str(path)] = big  # still being hashed and gzipped, in the spool's thread
        else:
            raw_bytes[str(path)], texts[str(path)] = read_export(path, NcuExportError)
            digest = sha256(raw_bytes[str(path)])
            # one export given twice (the same path, or a copy) would be read as one: say so instead
            if digest in given:
                raise NcuExportError(f"{path}: the same file as {given[digest]}, given twice; give each export once")
            given[digest] = path
    if len(streamed) > 1 or (streamed and given):  # a big export given twice: its hash is needed now
        for name, big in streamed.items():
            if big.sha256 in given:
                raise NcuExportError(f"{name}: the same file as {given[big.sha256]}, given twice; give each export once")
            given[big.sha256] = Path(name)
    size = sum(len(d) for d in raw_bytes.values()) + sum(s.size for s in streamed.values())
    if progress and size > BIG_EXPORT:
        progress.step(f"parsing {size / 1e6:.0f} MB of ncu export")
    session, rest = split_session(texts)  # a streamed export is a raw page, never the session page
    exports = {str(p): streamed[str(p)].export if str(p) in streamed else rest[str(p)]
               for p in paths if str(p) in streamed or str(p) in rest}
    # a streamed export's per-launch CSV goes to a spool as it is made, never whole in memory
    spool = Spool("the export's per-launch table") if streamed else None
    if spool is not None:
        spools.callback(spool.close)
    profile = read_exports(exports, spool)  # parse everything before writing anything
    stated = dict(context.stated)
    if session is not None:
        check_session(session, profile, stated)
    for name, big in streamed.items():  # else the record would describe other bytes than its blob
        if not big.unchanged(Path(name)):
            raise ArchiveError(f"{name}: the file changed while it was imported; import it again")
    if progress and size > BIG_EXPORT:
        progress.step(f"writing the record of {plural(profile.launch_count, 'launch', 'launches')}")
    sources = launch_table_source(archive, profile, spool)
    blobs = {name: (archive.put_blob(big.spool), big.size) for name, big in streamed.items()}
    for name in map(str, paths):
        if name in blobs:
            blob_id, blob_size = blobs[name]
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
        limitations=profile_limitations(profile, gpu, stated=stated, observed=observed_options(session))
        + list(context.limitations),
        sources=sorted(sources, key=lambda s: (s["role"], s["id"])),
    )
    return archive.put_record(record)
