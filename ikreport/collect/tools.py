"""Running external tools (ncu, nvidia-smi, nvcc): one place for 'not found' and failures."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from ikreport.errors import ToolError

__all__ = ["ToolError", "INSTALL_HINT"]  # ToolError's home is errors.py; callers say tools.ToolError

INSTALL_HINT = {
    "ncu": "install Nsight Compute, or put its folder (e.g. /usr/local/cuda/bin) on PATH",
    "nvidia-smi": "install the NVIDIA driver, or import saved output with --from-nvidia-smi FILE",
    "nvcc": "install the CUDA toolkit, or install CuPy or PyTorch so no compiler is needed",
}


@dataclass(frozen=True)
class Result:
    """What a finished tool run returned: its arguments, exit status and output."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def find(tool: str, hint: str | None = None) -> str:
    """The path of ``tool`` on PATH; ToolError with ``hint`` (what the command that needs it
    offers instead), else the tool's install hint, when it is missing."""
    path = shutil.which(tool)
    if path is None:
        raise ToolError(f"{tool}: not found on PATH; {hint or INSTALL_HINT.get(tool, 'install it')}")
    return path


def run(argv: list[str], timeout: float | None = None, hint: str | None = None) -> Result:
    """Run a tool to completion, capturing its output as text; never raises on a bad exit.
    ``hint``: as for find."""
    exe = find(argv[0], hint)
    try:
        done = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, errors="replace",
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ToolError(f"{argv[0]}: still running after {timeout:.0f} s; stopped it") from exc
    except OSError as exc:
        raise ToolError(f"{argv[0]}: cannot run {exe} ({exc.strerror})") from exc
    return Result(tuple(argv), done.returncode, done.stdout, done.stderr)
