"""Generate realistic benchmark inputs from the real fixtures (never committed; made on demand).

big_raw_export(n): the B200 raw export's own preamble, header and units rows, then its 16
launch rows repeated (IDs renumbered) to n launches, so every quirk of the real file is kept.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
B200 = ROOT / "tests" / "fixtures" / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
WORK = ROOT / "bench" / "work"


def big_raw_export(n: int, path: Path | None = None) -> Path:
    path = path or WORK / f"raw_{n}.csv"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = B200.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    preamble, header, units, rows = lines[:start], lines[start], lines[start + 1], lines[start + 2:]
    parsed = list(csv.reader(rows))
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\n".join([*preamble, header, units]) + "\n")
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(n):
            row = list(parsed[i % len(parsed)])
            row[0] = str(i)
            writer.writerow(row)
            if i % 1000 == 999:
                f.write(out.getvalue())
                out.seek(0)
                out.truncate()
        f.write(out.getvalue())
    return path
