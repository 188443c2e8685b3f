"""Stand-in for PyTorch in tests: the calls `collect bandwidth --backend torch` makes, on the
simulated device of standin_gpu. Never a source of evidence."""

import standin_gpu

__version__ = "0.0+standin"
uint8 = "uint8"


class _Tensor(standin_gpu.Buffer):
    def copy_(self, other) -> None:
        standin_gpu.copy(other.size)


def ones(size, dtype=None, device=None):
    assert device == "cuda"
    return _Tensor(size)


def empty_like(tensor):
    return _Tensor(tensor.size)


class cuda:  # noqa: N801 - the module's own spelling
    Event = standin_gpu.Event

    @staticmethod
    def get_device_name(device) -> str:
        return standin_gpu.NAME

    @staticmethod
    def empty_cache() -> None:
        pass
