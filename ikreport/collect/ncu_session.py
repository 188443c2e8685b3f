"""How an ncu run was made, for the record's method: observed from its session page, or stated.

An importer may give ncu's session page (``--page session``) beside the raw and details
exports, in any order: it is told apart by its content, kept as a blob, and its values are
recorded as observed. Options the importer states (``--clock-control`` …) are kept as stated;
a stated value that the session page contradicts is refused, since one of the two is wrong.
The clocks the counters show (analysis/ncu/clocks.py) are kept beside them.
"""

from __future__ import annotations

from typing import Any

from ikreport.analysis.ncu.read import Profile
from ikreport.analysis.ncu.clocks import clock_summary
from ikreport.analysis.ncu.session import Session, is_session_page, parse_session
from ikreport.errors import MismatchedExportsError, NcuExportError

OBSERVED = "observed from the session page"
STATED = "stated by the importer"
SESSION_ROLE = "ncu-session-csv"
ALONE = "this is a session page: give it with the raw/details exports"


def split_session(texts: dict[str, bytes | str]) -> tuple[Session | None, dict[str, bytes | str]]:
    """(the session page among ``texts``, parsed; the other exports). At most one session page,
    and never one alone: it says how a run was made, not what the kernels did."""
    sessions = [name for name, text in texts.items() if is_session_page(text)]
    if len(sessions) > 1:
        raise NcuExportError(f"{sessions[1]}: a second session page (the first is {sessions[0]}); give one")
    if not sessions:
        return None, texts
    name = sessions[0]
    rest = {n: t for n, t in texts.items() if n != name}
    if not rest:
        raise NcuExportError(f"{name}: {ALONE}")
    return parse_session(texts[name], name), rest


def observed_options(session: Session | None) -> dict[str, str]:
    """The method options a session page records: clock and cache control, replay mode, driver."""
    if session is None:
        return {}
    return {**dict(session.options), **({"driver": session.driver} if session.driver else {})}


def check_session(session: Session, profile: Profile, stated: dict[str, str]) -> None:
    """Refuse a session page of another run (another GPU) or one that contradicts what the
    importer states, in one line naming both values."""
    if session.device and profile.devices and session.device not in profile.devices:
        export = next(iter(profile.pages))
        raise MismatchedExportsError(
            f"{session.name}: the session page names the device {session.device!r}, but {export} names "
            f"{', '.join(repr(d) for d in profile.devices)}; give the session page of the same report")
    observed = observed_options(session)
    if session.version:
        observed["ncu_version"] = session.version
    for key, value in sorted(stated.items()):
        if key in observed and observed[key] != value:
            flag = "--" + key.replace("_", "-")
            raise NcuExportError(f"{session.name}: the session page records {flag} {observed[key]}, but "
                                 f"{flag} {value} was stated; leave {flag} out (the session page says how the "
                                 "run was made) or give the session page of this run")


def method(profile: Profile, stated: dict[str, str], session: Session | None, how: str) -> dict[str, Any]:
    """The record's method: options observed on the session page win over stated ones (they
    cannot differ: check_session refuses that); ``option_sources`` says which is which."""
    observed = observed_options(session)
    version = session.version if session and session.version else stated.get("ncu_version")
    options = {**{k: v for k, v in stated.items() if k != "ncu_version"}, **observed}
    sources = {k: (OBSERVED if k in observed else STATED) for k in options}
    if version:
        sources["ncu_version"] = OBSERVED if session and session.version else STATED
    seen = sorted(k for k, v in sources.items() if v == OBSERVED)
    said = sorted(k for k, v in sources.items() if v == STATED)
    if seen:
        how += "; " + ", ".join(k.replace("_", " ") for k in seen) + " " + OBSERVED
    if said:
        how += "; " + ", ".join(k.replace("_", " ") for k in said) + " as stated by the importer, not observed"
    out: dict[str, Any] = {"tool": "ncu", "tool_version": version,
                           "command": list(session.command) if session and session.command else None,
                           "options": dict(sorted(options.items())), "how": how}
    if sources:
        out["option_sources"] = dict(sorted(sources.items()))
    return out


CONTROLS = ("clock_control", "cache_control")
# what each value of ncu's clock and cache control does to the durations, and what ncu's default
# does when the export does not say which ran
EFFECT = {("clock_control", "base"): "clocks were locked to base, so durations are longer than at the boost clocks a "
                                     "program runs at",
          ("clock_control", "none"): "clocks were not locked, so durations move with temperature and power",
          ("cache_control", "all"): "caches were flushed before each kernel, so small kernels look slower than with "
                                    "a warm L2"}
DEFAULT_EFFECT = {"clock_control": "with ncu's default (base clocks locked) durations can be longer than in the "
                                   "running program",
                  "cache_control": "with ncu's default (caches flushed before each kernel) small kernels look slower "
                                   "than with a warm L2"}
LIMIT_UNKNOWN_CONTROL = (
    "Imported from {what}, which does not say which --clock-control and --cache-control "
    "ncu ran under: with ncu's default (base clocks locked, caches flushed) durations can be "
    "longer than in the running program."
)


def control_limitation(observed: dict[str, str], stated: dict[str, str], what: str = "a CSV export") -> str:
    """What is known of the run's clock and cache control, as a limitation: each as the session
    page records it, else as the importer states it, else unknown, with what that does to the
    durations. Never says a control is unknown that the record's method gives."""
    known = {key: (observed[key], OBSERVED) if key in observed else (stated[key], STATED)
             for key in CONTROLS if key in observed or key in stated}
    if not known:
        return LIMIT_UNKNOWN_CONTROL.format(what=what)
    flags = {key: f"--{key.replace('_', '-')}" for key in CONTROLS}
    sources = {source for _, source in known.values()}
    if len(known) == 2 and sources == {STATED}:
        return (f"Imported from {what}: {flags['clock_control']} {known['clock_control'][0]} and "
                f"{flags['cache_control']} {known['cache_control'][0]} are as stated by the importer, not observed.")
    if len(known) == 2 and sources == {OBSERVED}:
        text = (f"ncu ran with {flags['clock_control']} {known['clock_control'][0]} and {flags['cache_control']} "
                f"{known['cache_control'][0]} ({OBSERVED})")
    else:
        text = "ncu ran with " + " and ".join(f"{flags[key]} {value} ({source})" for key, (value, source) in known.items())
    effects = [effect for key in CONTROLS if key in known and (effect := EFFECT.get((key, known[key][0])))]
    text += "".join((": " if n == 0 else "; ") + effect for n, effect in enumerate(effects))
    for key in CONTROLS:
        if key not in known:
            text += f"; the export does not say which {flags[key]} it ran under: {DEFAULT_EFFECT[key]}"
    return text + "."


def provenance_data(profile: Profile, session: Session | None) -> dict[str, Any]:
    """The record data this module adds: the clocks the counters show (with the device's top
    SM clock from the session page when it has one), only when the export holds a clock."""
    top = session.max_sm_khz if session else None
    clocks = clock_summary(profile.clocks, top, "the session page's device attribute max_gpu_frequency_khz"
                           if top else None, profile.metric_names)
    return {"clocks": clocks} if clocks else {}
