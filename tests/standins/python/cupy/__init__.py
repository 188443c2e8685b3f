"""Stand-in for CuPy in tests: the calls `collect bandwidth --backend cupy` makes, with
copies timed for a made-up 4.3 TB/s device (read + write). Never a source of evidence."""

__version__ = "0.0-standin"
uint8 = "uint8"
_clock = [0.0]  # seconds of simulated GPU time
RATE = 4.3e12  # bytes moved per second, read + write


class _Array:
    def __init__(self, size: int) -> None:
        self.size = size

    def __setitem__(self, key, value) -> None:  # dst[...] = src: a device-to-device copy
        _clock[0] += 2 * value.size / RATE


def ones(size, dtype=None):
    return _Array(size)


def empty_like(array):
    return _Array(array.size)


class _Pool:
    def free_all_blocks(self) -> None:
        pass


def get_default_memory_pool():
    return _Pool()


class _Event:
    def record(self) -> None:
        self.at = _clock[0]

    def synchronize(self) -> None:
        pass


class _Runtime:
    @staticmethod
    def getDeviceProperties(device):
        return {"name": b"NVIDIA H200"}


class cuda:  # noqa: N801 - the module's own spelling
    runtime = _Runtime
    Event = _Event

    @staticmethod
    def get_elapsed_time(start, stop):
        return (stop.at - start.at) * 1e3  # milliseconds, as CuPy gives
