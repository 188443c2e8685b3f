"""Stand-in for CuPy in tests: the calls `collect bandwidth --backend cupy` makes, on the
simulated device of standin_gpu. Never a source of evidence."""

import standin_gpu

__version__ = "0.0-standin"
uint8 = "uint8"


class _Array(standin_gpu.Buffer):
    def __setitem__(self, key, value) -> None:  # dst[...] = src: a device-to-device copy
        standin_gpu.copy(value.size)


def ones(size, dtype=None):
    return _Array(size)


def empty_like(array):
    return _Array(array.size)


class _Pool:
    def free_all_blocks(self) -> None:
        pass


def get_default_memory_pool():
    return _Pool()


class cuda:  # noqa: N801 - the module's own spelling
    Event = standin_gpu.Event

    class runtime:  # noqa: N801
        @staticmethod
        def getDeviceProperties(device):  # noqa: N802
            return {"name": standin_gpu.NAME.encode()}  # bytes, as CuPy gives

    @staticmethod
    def get_elapsed_time(start, stop):
        return start.elapsed_time(stop)
