"""The simulated device behind the stand-in cupy and torch packages: copies are timed for a
made-up 4.3 TB/s device, counting bytes read + written. Never a source of evidence."""

RATE = 4.3e12  # bytes moved per second, read + write
NAME = "NVIDIA H200"
_now = [0.0]  # seconds of simulated GPU time


def copy(nbytes: int) -> None:
    _now[0] += 2 * nbytes / RATE


def now() -> float:
    return _now[0]


class Buffer:
    def __init__(self, size: int) -> None:
        self.size = size


class Event:
    def __init__(self, enable_timing: bool = True) -> None:
        assert enable_timing

    def record(self) -> None:
        self.at = now()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: "Event") -> float:
        return (end.at - self.at) * 1e3  # milliseconds, as both libraries give
