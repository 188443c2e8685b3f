"""The site a reader meets (issue 16), built for the tests and for `make screenshots`: the sample
archive copied to a temporary folder, with real exports from tests/fixtures added: a profile
imported twice under one title, one superseding the other (so the changelog lists a supersession),
an automatic title, and two imports of the B200 export under one GPU and workload, compared (so
the site has a history page). The sample archive itself is never written."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.commands.compare import compare_records
from ikreport.commands.supersede import supersede
from ikreport.commands.build import build_site
from ikreport.store.archive import Archive

ROOT = Path(__file__).resolve().parents[1]
NCU = ROOT / "tests" / "fixtures" / "ncu"
CUTLASS_OLD = "ba98cb69600d9af788208bdecdab244551d37054bde0aa2ff26cf12322644c34"  # cited by the sample report
CUTLASS_TITLE = "DeepSeek-OCR: CUTLASS bf16 WMMA GEMM (kernel 3)"
CUTLASS = NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
B200 = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
B200_WORKLOAD = "decode attention"
STEP_S = 60  # between the records added, when their times are fixed


@contextmanager
def _clock(epoch: int | None) -> Iterator[None]:
    """Records made inside carry ``epoch`` as their time (SOURCE_DATE_EPOCH), when one is given;
    the variable is put back as it was after."""
    if epoch is None:
        yield
        return
    before = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        yield
    finally:
        if before is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = before


def build_readers_site(root: Path, epoch: int | None = None) -> dict:
    """Build the archive under ``root/arch`` and its site under ``root/site``; returns the site
    folder ("out"), the ids added and the history page's path in the site ("history"). With
    ``epoch`` (seconds), the records added are dated from it, a minute apart, so the same site
    comes out every time (screenshots); without, they carry the time they are made."""
    arch = root / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    archive = Archive.open(arch)
    times = (None if epoch is None else epoch + STEP_S * n for n in itertools.count())
    with _clock(next(times)):
        new = import_csv(archive, [CUTLASS], Context(title=CUTLASS_TITLE, gpu="NVIDIA GeForce RTX 5090"))
    with _clock(next(times)):
        supersede(archive, CUTLASS_OLD, new, "the GPU is now named")
    with _clock(next(times)):
        auto = import_csv(archive, [CUTLASS], Context())
    # one GPU and workload: the two imports make a history series
    with _clock(next(times)):
        a = import_csv(archive, [B200], Context(title="B200 decode, run 1", workload=B200_WORKLOAD))
    with _clock(next(times)):
        b = import_csv(archive, [B200], Context(title="B200 decode, run 2", workload=B200_WORKLOAD))
    with _clock(next(times)):
        comparison, _ = compare_records(archive, [a], [b], 5.0, 3)
    out = root / "site"
    build_site(Archive.open(arch), out, cache_dir=root / "cache")
    (history,) = (p.relative_to(out).as_posix() for p in (out / "h").glob("*.html"))
    return {"out": out, "new": new, "auto": auto, "comparison": comparison, "a": a, "b": b, "history": history}
