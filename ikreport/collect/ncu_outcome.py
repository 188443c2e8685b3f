"""What a finished ncu run came to, read from its exit status and console output, and the one
line that says so with the fix.

ncu's wording, as Nsight Compute 2022.3 (Debian's) to 2025 print it:

- an option it does not know, or a value it does not take: ``unrecognised option '--X'``,
  ``the argument for option '--X' is invalid`` (exit 255, before any target runs). An option
  ikreport builds that an older ncu lacks reads this way, e.g. ``--replay-mode app-range`` or
  ``--page session`` (both newer than 2022.3);
- no GPU or driver: ``Nsight Compute failed to connect to the CUDA driver``, then
  ``No kernels were profiled``: the command line was accepted and the target ran;
- ``ERR_NVGPUCTRPERM``: the counters are restricted to administrators;
- ``did not match any section``: a ``--section`` name this ncu does not have;
- ``Failed to load report file 'R'``: a report it cannot read (made by a newer Nsight Compute,
  or damaged), with exit status 0 for a truncated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ikreport.collect import tools

# kinds of outcome: what the caller decides on, never the message text
ACCEPTED = ("no-driver", "no-kernels")


@dataclass(frozen=True)
class Outcome:
    """``kind``: ok, option, no-driver, no-kernels, counters, section, report or failed;
    ``message``: the one line for the user (empty when ok); ``said``: ncu's own line."""

    kind: str
    message: str = ""
    said: str = ""

    @property
    def accepted(self) -> bool:
        """ncu took every option and ran the target (it may have profiled nothing)."""
        return self.kind == "ok" or self.kind in ACCEPTED


OPTION = re.compile(r"unrecognised option '(?P<opt>--[\w-]+)'|the argument for option '(?P<arg>--[\w-]+)' is invalid")
KNOWN = (
    (re.compile(r"failed to connect to the CUDA driver"), "no-driver",
     "ncu could not reach the CUDA driver: this machine has no NVIDIA GPU or driver; profile on the GPU machine, "
     "or import a report made there with --import"),
    (re.compile(r"ERR_NVGPUCTRPERM"), "counters", "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): "
     "run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0"),
    (re.compile(r"No kernels were profiled"), "no-kernels", "ncu profiled no kernels: check that the command "
     "launches CUDA kernels and that --kernel-name, --launch-skip and --nvtx-include match some"),
    (re.compile(r"did not match any section"), "section", "a --section name is unknown to this ncu; "
     "'ncu --list-sections' lists them"),
    (re.compile(r"Failed to load report file"), "report", "the installed ncu could not load the report: a newer "
     "Nsight Compute made it, or the file is damaged; export its raw and details pages with the ncu that made it "
     "('ncu --import REPORT --csv --page raw', then '--page details') and import them with --from-csv"),
)


def _value_of(argv: tuple[str, ...], option: str) -> str | None:
    """The value given to ``option`` on the command line (``--opt V`` or ``--opt=V``)."""
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(option + "="):
            return arg.split("=", 1)[1]
    return None


def outcome(result: tools.Result, version: str | None = None) -> Outcome:
    """Read a finished ncu run. ``version``: the installed ncu's, named in an option error."""
    said = result.stdout + "\n" + result.stderr
    bad = OPTION.search(said)
    if bad:
        option = bad["opt"] or bad["arg"]
        value = _value_of(result.argv, option) if bad["arg"] else None
        given = f"{option} {value}" if value is not None else option
        which = "this value of the option is" if bad["arg"] else "the option is"
        return Outcome("option", f"ncu {version or '(version unknown)'} does not accept '{given}' (ncu said: "
                                 f"{bad.group(0)}): {which} newer than the installed Nsight Compute; install a newer "
                                 "release, or leave the option out", bad.group(0))
    for rx, kind, message in KNOWN:
        found = rx.search(said)
        if found:
            line = next((ln.strip() for ln in said.splitlines() if rx.search(ln)), "")
            return Outcome(kind, f"{message} (ncu said: {line})", line)
    if result.returncode != 0:
        line = next((ln.strip() for ln in said.splitlines() if "==ERROR==" in ln),
                    said.strip().splitlines()[-1] if said.strip() else "no output")
        return Outcome("failed", f"ncu failed with exit status {result.returncode}: {line}", line)
    return Outcome("ok")
