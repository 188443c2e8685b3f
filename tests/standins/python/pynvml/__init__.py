"""Stand-in for nvidia-ml-py in tests: the NVML calls `collect env` makes, for one GPU with a
6144-bit memory bus (as an H200 has). Never a source of evidence."""


def nvmlInit() -> None:  # noqa: N802 - NVML's own spelling
    pass


def nvmlShutdown() -> None:  # noqa: N802
    pass


def nvmlDeviceGetHandleByIndex(index: int) -> int:  # noqa: N802
    return index


def nvmlDeviceGetMemoryBusWidth(handle: int) -> int:  # noqa: N802
    return 6144
