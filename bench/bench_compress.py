"""How to store blobs: gzip by zlib and by ISA-L at each level, on exports made as the bench's
archives are (bench/inputs.py: four real exports, a thousand launches each, timing cells varied).

    .venv/bin/python bench/bench_compress.py [--launches 1000]

Prints, per compressor and level, the ratio (raw bytes over compressed) and the speed of
compressing and of decompressing (MB of raw bytes a second, best of 3), over the four exports
together. The archive uses ISA-L level 1 (store/compression.py). zstd compresses better and
faster still, but no browser's DecompressionStream reads it, and a site publishes blobs as
stored; gzip is what every browser and `gunzip` read.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import export_makers  # noqa: E402


def best(work: Callable[[], object], times: int = 3) -> float:
    """The shortest of ``times`` runs of ``work``, in seconds."""
    out = []
    for _ in range(times):
        start = time.perf_counter()
        work()
        out.append(time.perf_counter() - start)
    return min(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=1000)
    args = parser.parse_args()
    from isal import isal_zlib

    rnd = random.Random(1)
    exports = []
    for maker in export_makers():
        text = io.StringIO()
        maker.write(text, args.launches, rnd, 1.0)
        exports.append(text.getvalue().encode())
    raw = sum(map(len, exports))
    print(f"{len(exports)} exports of {args.launches} launches, {raw / 1e6:.1f} MB")

    def gzip_with(module: object, level: int) -> Callable[[bytes], bytes]:
        def compress(data: bytes) -> bytes:
            c = module.compressobj(level, module.DEFLATED, 31)  # type: ignore[attr-defined]
            return c.compress(data) + c.flush()  # type: ignore[no-any-return]
        return compress

    compressors = [("zlib", level, gzip_with(zlib, level)) for level in (1, 6, 9)]
    compressors += [("isal", level, gzip_with(isal_zlib, level)) for level in (0, 1, 2, 3)]
    print(f"{'compressor':12} {'level':>5} {'ratio':>7} {'compress MB/s':>14} {'decompress MB/s':>16}")
    for name, level, compress in compressors:
        packed = [compress(e) for e in exports]
        ratio = raw / sum(map(len, packed))
        into = best(lambda compress=compress: [compress(e) for e in exports])
        out = best(lambda packed=packed: [isal_zlib.decompress(p, 31) for p in packed])
        print(f"{name:12} {level:>5} {ratio:>7.1f} {raw / into / 1e6:>14.0f} {raw / out / 1e6:>16.0f}")


if __name__ == "__main__":
    main()
