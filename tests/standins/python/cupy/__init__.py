"""Stand-in for CuPy in tests: the calls `collect bandwidth --backend cupy` makes, on the
simulated device of standin_gpu. Never a source of evidence."""

import standin_gpu

__version__ = "0.0-standin"
uint8 = "uint8"
uint64 = int


class _Array(standin_gpu.Buffer):
    pass


class RawKernel:
    """The shipped copy kernel: (src, dst, n int4 words), launched as kernel(grid, block, args)."""

    def __init__(self, code: str, name: str) -> None:
        assert name == "copy_kernel" and 'extern "C" __global__ void copy_kernel' in code

    def __call__(self, grid, block, args) -> None:
        src, dst, words = args
        assert isinstance(src, _Array) and isinstance(dst, _Array) and words * 16 <= dst.size
        standin_gpu.copy(words * 16)


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
            return {"name": standin_gpu.NAME.encode(), "multiProcessorCount": 132}  # name in bytes, as CuPy gives

    @staticmethod
    def get_elapsed_time(start, stop):
        return start.elapsed_time(stop)
