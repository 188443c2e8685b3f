"""Stand-in for PyTorch in tests: the calls `collect bandwidth --backend torch` makes, with
copies timed for a made-up 4.3 TB/s device (read + write). Never a source of evidence."""

__version__ = "0.0+standin"
uint8 = "uint8"
_clock = [0.0]  # seconds of simulated GPU time
RATE = 4.3e12  # bytes moved per second, read + write


class _Tensor:
    def __init__(self, size: int) -> None:
        self.size = size

    def copy_(self, other) -> None:
        _clock[0] += 2 * other.size / RATE


def ones(size, dtype=None, device=None):
    assert device == "cuda"
    return _Tensor(size)


def empty_like(tensor):
    return _Tensor(tensor.size)


class _Event:
    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing

    def record(self) -> None:
        self.at = _clock[0]

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end) -> float:
        return (end.at - self.at) * 1e3  # milliseconds, as PyTorch gives


class cuda:  # noqa: N801 - the module's own spelling
    Event = _Event

    @staticmethod
    def get_device_name(device) -> str:
        return "NVIDIA H200"

    @staticmethod
    def empty_cache() -> None:
        pass
