"""Evidence records: build, check against the shipped JSON Schema, encode canonically.

A record's bytes are its RFC 8785 canonical JSON (sorted keys, no spaces, fixed number
form), so one record has one byte form and its sha256 is a stable id.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

import rfc8785

from ikreport.errors import NonCanonicalRecordError, RecordError
from ikreport.store.schema_parts import data_links, record_schema

SCHEMA = "ikreport.record/1"
Record = dict[str, Any]


def _schema() -> dict[str, Any]:
    """The record schema: the envelope shipped here with each kind's data part (store/schema_parts.py)."""
    return record_schema(json.loads(resources.files("ikreport").joinpath("schema/record-1.json").read_text("utf-8")))


MASK = "\x00"  # stands for the offending value in the validator's messages: _describe quotes it cut short


@lru_cache(maxsize=1)
def _validator() -> Any:
    """The schema (draft 2020-12) compiled by jsonschema-rs, which decides and words the error.
    Its messages would quote the offending value whole (a record can hold a 100 kB string):
    they say MASK instead."""
    import jsonschema_rs  # only when records are checked: keeps 'ikreport --help' fast

    return jsonschema_rs.Draft202012Validator(_schema(), mask=MASK)


def validate(record: Any, where: str = "record") -> None:
    """Raise RecordError naming ``where`` when ``record`` is not a valid record/1."""
    if not isinstance(record, dict):
        raise RecordError(f"{where}: not a JSON object; this is not an ikreport record")
    version = record.get("schema")
    if version != SCHEMA:
        raise RecordError(
            f"{where}: schema {_short(version)} is not {SCHEMA!r}; "
            "it was written by another ikreport version: upgrade ikreport to read it"
        )
    validator = _validator()
    if not validator.is_valid(record):  # the common case, a valid record, at the speed of is_valid
        # the first error by path (sorted as text: a list index and a key can meet)
        error = min(validator.iter_errors(record), key=lambda e: [str(p) for p in e.instance_path])
        raise RecordError(f"{where}: {_describe(error)}") from None
    _check_links(record, where)


def _check_links(record: Record, where: str) -> None:
    """Ids inside ``data`` that pages follow (each kind's ``data_links``). The schema cannot say
    "equal to an item of another array", so this checks that each is one the record declares
    (cites or supersedes): then verify's check that every declared record is present covers
    them, and a build never meets a record that is not there."""
    declared = set(record["cites"]) | {old["id"] for old in record["supersedes"]}
    for key in data_links(record["kind"]):
        named = record["data"].get(key, [])  # a key a kind's older data lacks names nothing
        for rid in named if isinstance(named, list) else [named]:
            if rid not in declared:
                raise RecordError(f"{where}: data/{key}: names record {rid[:12]}, which the record does "
                                  "not cite; add it to 'cites' (or 'supersedes') or correct the id")


MAX_PART = 40  # characters of one key or value quoted in an error: the whole error stays one short line


def _short(value: Any) -> str:
    """``repr(value)``, cut to MAX_PART characters: a record can hold a 100 kB string."""
    text = repr(value)
    return text if len(text) <= MAX_PART else text[: MAX_PART - 3] + "..."


def _describe(error: Any) -> str:
    """'JSON/path: what is wrong' for a jsonschema-rs error, in at most about 200 characters,
    the offending value (MASK in the message) quoted as JSON and cut short."""
    import orjson

    path = "/".join(str(p)[:MAX_PART] for p in error.instance_path) or "(top)"
    try:
        value = orjson.dumps(error.instance).decode()
    except TypeError:  # a record made in Python can hold what JSON cannot
        value = repr(error.instance)
    if len(value) > MAX_PART:
        value = value[: MAX_PART - 3] + "..."
    message = error.message.replace(MASK, value)
    if len(message) > 160:
        message = message[:157] + "..."
    return f"{path}: {message}"


def encode(record: Record) -> bytes:
    """The canonical bytes of a valid record."""
    validate(record)
    try:
        return rfc8785.dumps(record)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise RecordError(f"record: cannot be written as canonical JSON ({exc})") from exc


def decode(data: bytes, where: str, known_valid: bool = False) -> Record:
    """Parse and validate a record's bytes (``known_valid``: these exact bytes passed
    validation before, so parse only)."""
    import orjson  # parses records several times faster than json: a build reads them all

    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{where}: not valid JSON ({exc}); the file is truncated or damaged") from exc
    if not known_valid:
        validate(record, where)
        check_canonical(data, record, where)
    return record


# Where orjson's sorted output may differ from RFC 8785's, each found by a search at C speed
# (a hit inside a string only sends the record down the slow path): a float with an
# exponent (orjson always signs it: "1e+16", "1e-6"), an integral float ("100.0", "-0.0"), and
# a character from U+E000 up (RFC 8785 sorts keys by UTF-16 units, orjson by code point).
# Integers past 2**53, which RFC 8785 refuses, orjson refuses too (OPT_STRICT_INTEGER, in
# check_canonical). The first two count only after a digit and, for "N.0", where a number ends
# (",", "]", "}", the end): text such as "compute capability 12.0)" or "time-1" sent 4 of the
# 11 sample records down the slow path, 10x the cost of the fast one.
_EXPONENT = re.compile(rb"e[-+][0-9]")
_INTEGRAL_FLOAT = re.compile(rb"\.0(?:[,\]}]|\Z)")
_DIGITS = frozenset(b"0123456789")
# the lead bytes of U+E000 and up (0xee-0xf4) become 0xff, which UTF-8 never holds: one pass
# and a byte search, several times faster than a regex's character class
_MARK_PRIVATE_UP = bytes.maketrans(bytes(range(0xEE, 0xF5)), b"\xff" * 7)


def _after_digit(pattern: re.Pattern[bytes], data: bytes) -> bool:
    """Whether ``pattern`` occurs in ``data`` right after a digit."""
    return any(m.start() and data[m.start() - 1] in _DIGITS for m in pattern.finditer(data))


SIGNS_LOOKED_AT = 256  # at about 0.3 us each, what the regex takes for a 100 kB record


def _has_exponent(data: bytes) -> bool:
    """Whether ``data`` holds an exponent as orjson writes it: digit, "e", sign, digit. Signs are
    rare in records, so each is found by a byte search rather than each "e" by a regex (3x the
    time on bench records); past SIGNS_LOOKED_AT of them the regex is the cheaper."""
    for sign in b"-+":
        at = data.find(sign)
        for _ in range(SIGNS_LOOKED_AT):
            if at < 0:
                break
            if 1 < at < len(data) - 1 and data[at - 1] == 101 and data[at - 2] in _DIGITS and data[at + 1] in _DIGITS:
                return True  # 101: "e"
            at = data.find(sign, at + 1)
        else:
            return _after_digit(_EXPONENT, data)
    return False


def _orjson_is_rfc8785(data: bytes) -> bool:
    """Whether bytes known to be orjson's sorted output (integers within 2**53) are RFC 8785's too."""
    return not (_has_exponent(data) or _after_digit(_INTEGRAL_FLOAT, data)
                or (not data.isascii() and b"\xff" in data.translate(_MARK_PRIVATE_UP)))


def check_canonical(data: bytes, record: Any, where: str) -> None:
    """Raise NonCanonicalRecordError unless ``data`` is the RFC 8785 form of ``record`` (parsed
    from it): a record has one byte form, so its id is stable, and bytes that are not that
    form (pretty-printed, keys out of order, a key given twice) were not written by ikreport."""
    import orjson

    # Fast path: rfc8785 is pure Python, 10x slower than parsing (300 bench records, 28 MB:
    # 2.5 s); orjson's sorted output, checked for the few places the two forms can differ,
    # costs about as much as the parse.
    try:
        ours = orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:  # an integer past 2**53: rfc8785 refuses it below
        ours = None
    if ours == data and _orjson_is_rfc8785(data):
        return
    try:
        if rfc8785.dumps(record) == data:
            return
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        pass
    duplicate = _duplicate_key(data)
    what = f"the key {duplicate!r} appears twice in one object" if duplicate else \
        "not in canonical form (RFC 8785: sorted keys, no spaces, shortest numbers)"
    raise NonCanonicalRecordError(
        f"{where}: {what}; ikreport never writes records so, it was edited or made by another tool: "
        "restore it from a good copy of the archive"
    )


def _duplicate_key(data: bytes) -> str | None:
    """The first key given twice in one object, if any (orjson keeps the last silently)."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


def new_record(
    kind: str,
    title: str,
    *,
    collected_at: str | None,
    subject: dict[str, str | None],
    method: dict[str, Any],
    data: dict[str, Any],
    limitations: list[str],
    environment: str | None = None,
    sources: list[dict[str, Any]] | None = None,
    cites: list[str] | None = None,
    supersedes: list[dict[str, str]] | None = None,
) -> Record:
    """A new record of this kind, checked against the schema (raises RecordError when it fails)."""
    record: Record = {
        "schema": SCHEMA,
        "kind": kind,
        "title": title,
        "collected_at": collected_at,
        "subject": {k: subject.get(k) for k in ("gpu", "engine", "model", "workload")},
        "method": method,
        "environment": environment,
        "sources": sources or [],
        "cites": sorted(set(cites or [])),
        "supersedes": supersedes or [],
        "data": data,
        "limitations": _dedupe(limitations),
    }
    validate(record)
    return record


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        text = " ".join(item.split())
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out
