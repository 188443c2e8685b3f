"""The site a reader meets (issue 16), built for the tests and for `make screenshots`: the sample
archive copied to a temporary folder, with real exports from tests/fixtures added: a profile
imported twice under one title, one superseding the other (so the changelog lists a supersession),
an automatic title, and two imports of the B200 export under one GPU and workload, compared (so
the site has a history page). The sample archive itself is never written."""

from __future__ import annotations

import shutil
from pathlib import Path

from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.commands.compare import compare_records
from ikreport.commands.supersede import supersede
from ikreport.site.build import build_site
from ikreport.store.archive import Archive

ROOT = Path(__file__).resolve().parents[1]
NCU = ROOT / "tests" / "fixtures" / "ncu"
CUTLASS_OLD = "de1397fb1f0e8d58e6340c546c541f508dc77779e24ad84ba62bdbfa620da5cd"  # cited by the sample report
CUTLASS_TITLE = "DeepSeek-OCR: CUTLASS bf16 WMMA GEMM (kernel 3)"
CUTLASS = NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
B200 = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
B200_WORKLOAD = "decode attention"


def build_readers_site(root: Path) -> dict:
    """Build the archive under ``root/arch`` and its site under ``root/site``; returns the site
    folder ("out"), the ids added and the history page's path in the site ("history")."""
    arch = root / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    archive = Archive.open(arch)
    new = import_csv(archive, [CUTLASS], Context(title=CUTLASS_TITLE, gpu="NVIDIA GeForce RTX 5090"))
    supersede(archive, CUTLASS_OLD, new, "the GPU is now named")
    auto = import_csv(archive, [CUTLASS], Context())
    # one GPU and workload: the two imports make a history series
    a = import_csv(archive, [B200], Context(title="B200 decode, run 1", workload=B200_WORKLOAD))
    b = import_csv(archive, [B200], Context(title="B200 decode, run 2", workload=B200_WORKLOAD))
    comparison, _ = compare_records(archive, [a], [b], 5.0, 3)
    out = root / "site"
    build_site(Archive.open(arch), out, cache_dir=root / "cache")
    (history,) = (p.relative_to(out).as_posix() for p in (out / "h").glob("*.html"))
    return {"out": out, "new": new, "auto": auto, "comparison": comparison, "a": a, "b": b, "history": history}
