"""Mutate the values in the ``data`` of the sample's records, store each mutant (re-hashed, so
it is a well-formed archive file) beside the sample's records in a temporary archive, then run
``verify`` and ``build`` on it. Each case must end in one of:

- accepted: verify finds nothing and the build succeeds;
- refused: verify reports the record (one line), and the build fails with one line.

Never a traceback (nor from what ``show`` prints of an accepted record), never a message over
one line, and never "verify passes but build fails".

    .venv/bin/python tests/reliability/mutate_records.py [--cases 5000] [--seed 1]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from ikreport.store import records  # noqa: E402
from ikreport.store.archive import Archive, sha256  # noqa: E402
from ikreport.commands.describe import summary_line  # noqa: E402
from ikreport.commands.show import show  # noqa: E402
from ikreport.errors import IkreportError  # noqa: E402
from ikreport.commands.build import build_site  # noqa: E402
from ikreport.commands.verify import verify_archive  # noqa: E402

SAMPLE = ROOT / "sample_evidence"
MAX_LINE = 300  # a one-line error a terminal shows whole

# What a value is replaced with: each is a kind of value a hand-edited or hostile record could hold.
REPLACEMENTS: list[Any] = [None, -1, 0, 1e300, -1e300, 2**53 - 1, 0.5, True, "", "x", "a" * 100_000, [], [1, 2], {},
                           {"a": {"b": [None]}}, [[[]]], "<script>", "../../etc/passwd", "9" * 70, [None], [{}],
                           "0" * 64,  # an id that is well formed but names no record
                           1e15, 1e6, 100.5, 1e-300, -0.0]  # at and near the limits the schema sets


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    """Every path inside ``value`` (dict keys and list indices), the value itself first."""
    out = [at]
    if isinstance(value, dict):
        for key in sorted(value):
            out.extend(_paths(value[key], (*at, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value[:20]):  # the first rows are enough; later ones are alike
            out.extend(_paths(item, (*at, i)))
    return out


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def mutate(data: dict[str, Any], rng: random.Random, ids: list[str] = ()) -> dict[str, Any]:
    """One to three edits at random places of ``data``: replace a value, delete a key, add one,
    or put the id of another record (``ids``) where an id or any value was."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(data)[1:] or [()])
        if not path:
            data[rng.choice(["x", "kernels", "peak_gbs"])] = rng.choice(REPLACEMENTS)
            continue
        parent, last = _get(data, path[:-1]), path[-1]
        op = rng.randrange(10)
        if op == 0 and isinstance(parent, dict):
            del parent[last]
        elif op == 1 and isinstance(parent, list):
            del parent[last]
        elif op == 2 and isinstance(parent, dict):
            parent[rng.choice(["extra", "first_launch", "by_size", "per_gpu", "environment_changes"])] = \
                copy.deepcopy(rng.choice(REPLACEMENTS))
        elif op == 4 and ids:
            parent[last] = rng.choice(ids)
        elif op == 3:
            original = parent[last]
            parent[last] = -original if isinstance(original, (int, float)) and not isinstance(original, bool) else None
        else:
            parent[last] = copy.deepcopy(rng.choice(REPLACEMENTS))
    return data


def _one_line(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and len(text) <= MAX_LINE


def _add_supersession(archive: Archive) -> None:
    """The sample has no supersession; one (with a fixed time, so its id and the run are
    reproducible) lets its data be mutated too and puts a banner on the page it supersedes."""
    profiles = sorted(rid for rid in archive.record_ids() if archive.load(rid)["kind"] == "ncu-profile")
    old, new = profiles[0], profiles[1]
    archive.put_record(records.new_record(
        "supersession", "a correction", collected_at="2026-01-01T00:00:00Z", subject={},
        method={"tool": "ikreport supersede", "tool_version": None, "command": None, "options": {}, "how": "by hand"},
        data={"old": old, "new": new, "reason": "re-run"}, limitations=[], cites=[new],
        supersedes=[{"id": old, "reason": "re-run"}]))


class Trial:
    """A scratch archive: the sample's records and blobs hard-linked (cheap), plus one mutant."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.base = work / "base"
        shutil.copytree(SAMPLE, self.base)
        _add_supersession(Archive(self.base))
        self.cache = work / "cache"
        self.originals = {rid: Archive(self.base).load(rid) for rid in Archive(self.base).record_ids()}

    def run(self, record: dict[str, Any]) -> str:
        """'accepted' or 'refused'; raises AssertionError with the story when the outcome is wrong."""
        case = self.work / "case"
        if case.exists():
            shutil.rmtree(case)
        shutil.copytree(self.base, case / "archive", copy_function=os.link)
        archive = Archive(case / "archive")
        try:
            data = records.encode(record)
        except IkreportError:
            data = None  # not even writable through the library: store the bytes a hostile hand would
        if data is None:
            import rfc8785
            try:
                data = rfc8785.dumps(record)
            except Exception:
                return "unwritable"  # e.g. a float JSON cannot hold; no one can store it
        rid = sha256(data)
        path = archive.layout.path("records", rid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        try:
            problems = verify_archive(archive)
        except Exception:  # verify reports problems as lines; it raises on none of them
            raise AssertionError(f"verify traceback:\n{traceback.format_exc()}") from None
        for line in problems:
            assert _one_line(line), f"verify printed a long or multi-line problem: {line[:400]!r}"
        try:
            build_site(archive, case / "site", cache_dir=self.cache, workers=1)
        except IkreportError as exc:
            assert _one_line(str(exc)), f"build error is not one line: {str(exc)[:400]!r}"
            assert problems, f"verify passed but build failed: {exc}"
            return "refused"
        except Exception:
            raise AssertionError(f"build traceback (verify {'refused' if problems else 'passed'}):\n"
                                 f"{traceback.format_exc()}") from None
        assert not problems, f"verify refused but build succeeded: {problems[0]}"
        try:  # what 'ikreport list' and 'show' print of an accepted record
            summary_line(rid, record)
            show(archive, rid)
        except Exception:
            raise AssertionError(f"show traceback:\n{traceback.format_exc()}") from None
        return "accepted"


def run(cases: int, seed: int, out=sys.stdout) -> Counter:
    """Run ``cases`` mutations; the counts by outcome (and 'traceback'/'wrong' for failures)."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    failures: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="ik-mutate-") as tmp:
        trial = Trial(Path(tmp))
        ids = sorted(trial.originals)
        for n in range(cases):
            rid = rng.choice(ids)
            record = copy.deepcopy(trial.originals[rid])
            record["data"] = mutate(record["data"], rng, ids)
            try:
                counts[trial.run(record)] += 1
            except AssertionError as exc:
                counts["FAILED"] += 1
                first = str(exc).strip().splitlines()
                key = (first[0][:60] + " | " + first[-1][:160]) if first else "?"
                failures[key] += 1
                if failures[key] == 1:
                    print(f"case {n} ({record['kind']}): {str(exc)[-1500:]}", file=out)
    print(f"{cases} cases, seed {seed}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=out)
    if failures:
        print(f"{len(failures)} distinct failures", file=out)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    counts = run(args.cases, args.seed)
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
