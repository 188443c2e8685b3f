"""Fuzz the parsers, the record loader and the Markdown plugin at volume (no hypothesis
shrinking, just many random and mutated inputs). Every case must give a clean IkreportError
or a result, never another exception, and finish within a time bound.

    .venv/bin/python tests/reliability/fuzz.py [--cases 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

import rfc8785

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from ikreport.store import records  # noqa: E402
from ikreport.analysis.ncu.read import read_exports  # noqa: E402
from ikreport.claims.model import RecordSet  # noqa: E402
from ikreport.errors import IkreportError  # noqa: E402
from ikreport.reports.render import render_report  # noqa: E402
from ikreport.reports.resolver import RecordResolver  # noqa: E402

NCU = ROOT / "tests" / "fixtures" / "ncu"
TOKENS = [b'"', b",", b"\n", b"\r\n", b"n/a", b"1,234.5", b"usecond", b"%", b"==PROF== x", b'"ID"', b"\x00", b"\xff",
          b"Kernel Name", b"Metric Value", b"gpu__time_duration.sum", b"<script>", b"\xe2\x80\xa6"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A few random edits of a real input: cut, delete, duplicate, insert tokens or bytes."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not out:
            out.extend(rng.choice(TOKENS))
            continue
        at = rng.randrange(len(out))
        op = rng.randrange(6)
        if op == 0:
            del out[at:]
        elif op == 1:
            del out[at: at + rng.randint(1, 200)]
        elif op == 2:
            end = min(len(out), at + rng.randint(1, 400))
            out[at:at] = out[at:end]
        elif op == 3:
            out[at:at] = rng.choice(TOKENS)
        elif op == 4:
            out[at] = rng.randrange(256)
        else:
            line = out.find(b"\n", at)
            if line > 0:
                out[line:line] = b"\n" + bytes(out[at:line])
    return bytes(out)


def one_line_naming(exc: IkreportError, name: str) -> None:
    """What a user reads of a refusal: one line that starts with the file's name."""
    text = str(exc)
    assert text.startswith(f"{name}:") and "\n" not in text, text


def check_ncu(data: bytes | str) -> None:
    """Read ``data`` as an export: refused naming the file, or read into kernels that launched."""
    try:
        profile = read_exports({"fuzz.csv": data})
    except IkreportError as exc:
        one_line_naming(exc, "fuzz.csv")
        return
    assert profile.launch_count > 0
    for kernel in profile.kernels[:3]:
        assert kernel["launches"] >= 1
    profile.csv()


def check_record(data: bytes, where: str = "r.json") -> bool:
    """Decode ``data`` as a record: refused naming ``where``, or accepted only as the canonical
    (RFC 8785) bytes of a record of this schema. True when accepted."""
    try:
        record = records.decode(data, where)
    except IkreportError as exc:
        one_line_naming(exc, where)
        return False
    assert record["schema"] == records.SCHEMA and rfc8785.dumps(record) == data
    return True


RESOLVER = RecordResolver(RecordSet.of({"a" * 64: {"kind": "x", "title": "t <b>", "subject": {}, "data": {"v_gbs": 1.5},
                                                   "limitations": ["l <i>"], "supersedes": [], "cites": [],
                                                   "collected_at": None}}), "../")
MD_TOKENS = ["[ev:aaaaaaaa]", "[ev:aaaaaaaa data.v_gbs]", "[ev:", "]", "[ev:zz]", "<script>x</script>", "`", "\n\n",
             "- ", "# ", "[a](javascript:x)", "{{ x }}", "---\ntitle: t\n---\n", "> ", "|a|b|\n|-|-|\n"]
# front matter a report may open with: plain, an alias bomb, too deep, an unknown record, not YAML
FRONT_MATTER = ["", "---\ntitle: t\nsummary: s\n---\n", "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n",
                "---\nt: " + "[" * 40 + "]" * 40 + "\n---\n", "---\nrecords: [aaaaaaaa, bbbbbbbb]\n---\n",
                "---\n: : [\n---\n", "---\n" + "k: v\n" * 20000 + "---\n"]


def check_markdown(text: str, rng: random.Random) -> None:
    pieces = [text]
    for _ in range(rng.randint(0, 8)):
        at = rng.randrange(len(pieces) + 1)
        pieces.insert(at, rng.choice(MD_TOKENS))
    source = rng.choice(FRONT_MATTER) + "".join(pieces)
    report = render_report(Path("fuzz.md"), source, RESOLVER)
    assert "<script" not in report.html and "javascript:" not in report.html.replace("javascript:x)", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    exports = [p.read_bytes() for p in sorted(NCU.glob("*.csv"))]
    counts = {"ncu export": 0, "record bytes": 0, "report markdown": 0}
    failures: list[str] = []
    slowest = 0.0
    for i in range(args.cases):
        kind = ("ncu export", "record bytes", "report markdown")[i % 3]
        t = time.perf_counter()
        try:
            if kind == "ncu export":
                check_ncu(mutate(rng.choice(exports), rng))
            elif kind == "record bytes":
                data = mutate(b'{"schema":"ikreport.record/1","kind":"ncu-profile","title":"t","limitations":["x"]}', rng)
                check_record(data, "fuzz.json")
            else:
                check_markdown("".join(rng.choice(MD_TOKENS + ["text ", "12.5 "]) for _ in range(20)), rng)
        except Exception:  # noqa: BLE001 (the point is to catch what escapes)
            failures.append(f"case {i} ({kind}): {traceback.format_exc(limit=3)}")
        slowest = max(slowest, time.perf_counter() - t)
        counts[kind] += 1
    for kind, n in counts.items():
        print(f"{kind:18} {n} cases")
    print(f"{'slowest case':18} {slowest:.3f} s")
    print(f"{'tracebacks':18} {len(failures)}")
    for f in failures[:10]:
        print(f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
