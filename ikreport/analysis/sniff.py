"""What a file of tool output is, so that a reader given another tool's output names it (pure).

Accepts any text. Recognises, from marks each tool prints and the others do not:

- an ncu CSV export: a header row that starts ``"ID",`` and holds ``"Kernel Name"``;
- ncu's session page (``--page session``): no such header, and a quoted row that names one of
  its titles or settings (``is_session_page``), even with ``==PROF==`` lines around it;
- ncu's console log: lines that start ``==PROF==`` (and ``==PROF== Report: PATH.ncu-rep`` when
  ncu wrote a report) with no CSV export in the file;
- ``nvidia-smi -q`` (the ``NVSMI LOG`` banner), plain ``nvidia-smi`` (the ``NVIDIA-SMI …
  Driver Version`` banner) and ``nvidia-smi --query-gpu`` CSV (a first row of field names);
- BabelStream (``BabelStream`` and ``Version:``), nvbandwidth (``nvbandwidth Version:``, or
  a JSON object whose first key is ``"nvbandwidth"``: its ``-j`` output) and the CUDA samples'
  bandwidthTest (its ``[CUDA Bandwidth Test]`` banner or a ``… Bandwidth, N Device(s)`` block).
- ``nsys stats`` CSV (a ``Time (%),Total Time (ns)`` or ``Start (ns),Duration (ns)`` header);
- serving benchmarks: SGLang's JSONL (``e2e_latency_ms`` keys), vLLM's saved JSON
  (``_ttft_ms`` keys otherwise), AIPerf's export (a ``Metric,avg,min,max`` CSV, or JSON with
  ``input_config`` and ``records`` or, from schema 1.3, ``aiperf_version``).

``identify`` says which; ``named`` gives the one line a reader raises: what the file is, and
which option takes it. Readers ask only once their own format is not found, so a file is never
refused for a mark it merely quotes.
"""

from __future__ import annotations

import csv
import re


# an ncu CSV export's header line: the one spelling of it (ncu/export.py reads bytes with it)
NCU_HEADER = r'"ID",[^\n]*"Kernel Name"'
NCU_CSV = re.compile("^\ufeff?" + NCU_HEADER, re.MULTILINE)
NCU_LOG = re.compile(r"^==PROF== ", re.MULTILINE)
NCU_REPORT = re.compile(r"^==PROF== Report: (?P<path>.+\.ncu-rep)\s*$", re.MULTILINE)
SMI_Q = re.compile(r"NVSMI LOG|^GPU [0-9A-Fa-f]{4,8}:", re.MULTILINE)
SMI_TABLE = re.compile(r"NVIDIA-SMI\s+\S+\s+Driver Version:")
# The header row of 'nvidia-smi --query-gpu=... --format=csv': field names, some with a unit
# ("index, name, memory.total [MiB], utilization.gpu [%]").
QUERY_HEADER = re.compile(r"^\s*[a-z][a-z0-9_.]*(?: \[[^\]\n]+\])?(?:, [a-z][a-z0-9_.]*(?: \[[^\]\n]+\])?)+\s*$",
                          re.MULTILINE)
BABELSTREAM_VERSION = re.compile(r"^\s*Version:", re.MULTILINE)
NVBANDWIDTH = re.compile(r"^\s*nvbandwidth Version:", re.MULTILINE)
NVBANDWIDTH_JSON = re.compile(r'\A\ufeff?\s*\{\s*"nvbandwidth"\s*:')
BANDWIDTHTEST = re.compile(r"^\s*(?:\[CUDA Bandwidth Test\]|(?:Host to Device|Device to Host|Device to Device) "
                           r"Bandwidth, \d+ Device\(s\))", re.MULTILINE)
NSYS_STATS = re.compile(r"^\ufeff?(?:Time ?\(%\),Total Time|Start \(ns\),Duration \(ns\))", re.MULTILINE)
AIPERF_CSV = re.compile(r"^\ufeff?Metric,avg,min,max", re.MULTILINE)

# what each is called, and the option that takes it
WHAT = {
    "ncu-csv": ("an ncu CSV export", "give it to 'collect ncu --from-csv'"),
    "ncu-session": ("ncu's session page (--page session)",
                    "give it to 'collect ncu --from-csv' as a third file, beside the raw and details exports "
                    "of the same report"),
    "ncu-log": ("ncu's console log, not an export", "give the report to 'collect ncu --import REPORT.ncu-rep'"),
    "nvidia-smi": ("nvidia-smi output", "give it to 'collect env --from-nvidia-smi'"),
    "query-gpu": ("'nvidia-smi --query-gpu' CSV output",
                  "it holds only the fields it asked for; save 'nvidia-smi -q' and give that to "
                  "'collect env --from-nvidia-smi'"),
    "babelstream": ("BabelStream output", "give it to 'collect bandwidth --from-babelstream'"),
    "nvbandwidth": ("nvbandwidth output", "give it to 'collect bandwidth --from-nvbandwidth'"),
    "bandwidthtest": ("the CUDA samples' bandwidthTest output", "give it to 'collect bandwidth --from-bandwidthtest'"),
    "nsys-stats": ("nsys stats CSV output", "give it to 'collect nsys --from-csv'"),
    "sglang-serving": ("SGLang bench_serving output", "give it to 'collect serving --from-sglang'"),
    "vllm-serving": ("a vLLM serving benchmark result", "give it to 'collect serving --from-vllm'"),
    "aiperf-export": ("an AIPerf profile export", "give it to 'collect serving --from-aiperf'"),
}


def identify(text: str) -> str | None:
    """Which tool's output ``text`` is (a key of WHAT), or None when none is recognised."""
    if NCU_CSV.search(text):
        return "ncu-csv"
    if SMI_Q.search(text) or SMI_TABLE.search(text):
        return "nvidia-smi"
    if NVBANDWIDTH.search(text) or NVBANDWIDTH_JSON.match(text):
        return "nvbandwidth"
    if BANDWIDTHTEST.search(text):
        return "bandwidthtest"
    if "BabelStream" in text and BABELSTREAM_VERSION.search(text):
        return "babelstream"
    serving = _serving(text)
    if serving:
        return serving
    if NSYS_STATS.search(text):
        return "nsys-stats"
    # after the tools' banners (its words, "Version", "System", are common ones) and before
    # the log: ncu prints its ==PROF== lines around a session page it exports
    if is_session_page(text):
        return "ncu-session"
    if NCU_LOG.search(text):
        return "ncu-log"
    if QUERY_HEADER.match(text.lstrip("\ufeff")):
        return "query-gpu"
    return None


def _serving(text: str) -> str | None:
    """A serving benchmark's result, by the keys only its tool writes; None otherwise."""
    head = text.lstrip("\ufeff \r\n\t")
    if AIPERF_CSV.match(head) or (head.startswith("{") and '"input_config"' in text
                                     and ('"records"' in text or '"aiperf_version"' in text)):
        return "aiperf-export"
    if head.startswith("{") and "e2e_latency_ms" in text:
        return "sglang-serving"
    if head.startswith("{") and "_ttft_ms" in text:
        return "vllm-serving"
    return None


def other_tool(text: str, name: str, expected: str) -> str | None:
    """The line ``named`` gives when ``text`` is recognised as another tool's output than
    ``expected`` (a key of WHAT); None when it is the expected kind or not recognised."""
    return named(text, name) if identify(text) not in (None, expected) else None


def named(text: str, name: str) -> str | None:
    """One line naming ``name`` as the tool output it is and saying which option takes it;
    None when it is not recognised. An ncu log names the report ncu wrote, when it says."""
    found = identify(text)
    if found is None:
        return None
    what, fix = WHAT[found]
    if found == "ncu-log":
        report = NCU_REPORT.search(text)
        if report:
            fix = f"the report is {report['path']}: give it with 'collect ncu --import {report['path']}'"
    return f"{name}: this is {what}; {fix}"


# -- ncu's session page: its words, the one home of them (ncu/session.py parses with them) --

BLOCKS = ("launch settings", "session", "device attributes", "process", "system", "profiler")
# every spelling of the profiling ncu's version, the one that ran on the target first: the
# host's version is the one that wrote the export, which may be newer
VERSION_KEYS = ("nsight compute target", "nsight compute target version", "target version", "profiler version",
                "ncu version", "nsight compute version", "nsight compute", "version", "nsight compute host",
                "nsight compute host version", "host version")
COMMAND_KEYS = ("command line", "profiler command line", "command")
OPTION_KEYS = {"clock control": "clock_control", "cache control": "cache_control", "replay mode": "replay_mode"}
MARKERS = {*BLOCKS, *VERSION_KEYS, *COMMAND_KEYS, *OPTION_KEYS}


def session_key(text: str) -> str:
    """'Clock_Control ' -> 'clock control'; 'device__attribute_display_name' -> 'display name'."""
    text = re.sub(r"^device__attribute_", "", text.strip(), flags=re.IGNORECASE)
    return " ".join(text.replace("_", " ").lower().split())


def session_text(data: bytes | str) -> str:
    """The page as text, without a UTF-8 BOM."""
    return data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data.lstrip("\ufeff")


def session_rows(data: bytes | str) -> list[list[str]]:
    """The CSV rows of the lines that start with a quote: ncu's ``==PROF==`` lines and the blank
    lines between blocks are not part of the page. Raises csv.Error on a line csv cannot read
    (a cell over its 128 kB limit, say), and on a quoted cell with more after its closing quote
    ("NVIDIA B2"ID"00"), which ncu never writes: csv would read it as one made-up value."""
    return [row for row in csv.reader((ln for ln in session_text(data).splitlines() if ln.startswith('"')), strict=True)
            if row]


def is_session_page(data: bytes | str) -> bool:
    """True when a row of at most two cells names a session-page title or setting. A raw or
    details export's rows have many cells, but a caller that may hold one tests its header first.
    A text csv cannot read is no session page (this test runs on any file a reader was given)."""
    try:
        return any(session_key(row[0]) in MARKERS for row in session_rows(data) if len(row) <= 2)
    except csv.Error:
        return False
