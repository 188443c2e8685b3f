"""Evidence records: build, check against the shipped JSON Schema, encode canonically.

A record's bytes are its RFC 8785 canonical JSON (sorted keys, no spaces, fixed number
form), so one record has one byte form and its sha256 is a stable id. ``canonical`` makes
those bytes; a record read back is canonical when they are the bytes it was read from.
"""

from __future__ import annotations

import json
import math
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
        try:
            error = min(validator.iter_errors(record), key=lambda e: [str(p) for p in e.instance_path])
        except ValueError:  # jsonschema-rs cannot describe a value nested a few hundred deep
            raise RecordError(f"{where}: a value nested deeper than any record's; this is not an ikreport record") from None
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
    where = _non_finite(record)
    if where is not None:  # the schema leaves some values free; canonical() would write null
        raise RecordError(f"record: {where}: NaN or an infinity, which JSON has no form for")
    try:
        return canonical(record)
    except (TypeError, ValueError) as exc:  # orjson's errors are TypeErrors
        raise RecordError(f"record: cannot be written as canonical JSON ({exc})") from exc


def decode(data: bytes, where: str, known_valid: bool = False) -> Record:
    """Parse and validate a record's bytes (``known_valid``: these exact bytes passed validation before, so parse only)."""
    import orjson  # parses records several times faster than json: a build reads them all

    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{where}: not valid JSON ({exc}); the file is truncated or damaged") from exc
    if not known_valid:
        validate(record, where)
        check_canonical(data, record, where)
    return record


# -- canonical bytes -------------------------------------------------------------------------
# One function, canonical(), gives a record's bytes, for writing it and for checking a read one.
# orjson's sorted, compact output is RFC 8785's but for three things, each found by a byte search
# on that output (a hit inside a string only costs the slower path): a float with an exponent
# (orjson always signs it: "1e+16", "1e-6"; RFC 8785 writes "10000000000000000", "0.000001"), an
# integral float ("100.0", "-0.0"; RFC 8785: "100", "0"), and key order when a key holds a
# character from U+E000 up (RFC 8785 sorts by UTF-16 units, orjson by code point). Where one may
# occur, the rfc8785 package writes the bytes: pure Python, many times slower than orjson, and
# rarely needed, as few records hold any of the three. Integers past 2**53, which RFC 8785 has
# no form for, both refuse.

_EXPONENT = re.compile(rb"e[-+][0-9]")  # orjson signs every exponent (from 3.11.7: pyproject.toml)
_INTEGRAL_FLOAT = re.compile(rb"\.0(?:[,\]}]|\Z)")  # "100.0" where the number ends
_DIGITS = frozenset(b"0123456789")
_PRIVATE_UP_LEADS = [bytes([lead]) for lead in range(0xEE, 0xF5)]  # UTF-8 lead bytes of U+E000 and up


def _may_differ(data: bytes) -> bool:
    """Whether orjson's sorted output ``data`` may differ from RFC 8785's: never False when it does.
    An exponent counts only after a digit (text such as "time-1" is not one)."""
    return (any(data[m.start() - 1] in _DIGITS for m in _EXPONENT.finditer(data))
            or _INTEGRAL_FLOAT.search(data) is not None
            or (not data.isascii() and any(lead in data for lead in _PRIVATE_UP_LEADS)))


def canonical(value: Any) -> bytes:
    """The RFC 8785 bytes of a JSON value of finite numbers (orjson writes NaN and infinities
    as null: encode refuses them first). TypeError or ValueError for an integer past 2**53 or
    what JSON cannot hold."""
    import orjson

    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    return rfc8785.dumps(value) if _may_differ(data) else data


def _non_finite(value: Any, path: str = "") -> str | None:
    """The JSON path of the first NaN or infinity in ``value``, if any."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        found = _non_finite(item, f"{path}/{key}" if path else str(key))
        if found is not None:
            return found
    return None


def check_canonical(data: bytes, record: Any, where: str) -> None:
    """Raise NonCanonicalRecordError unless ``data`` is ``canonical(record)`` (``record`` parsed
    from it): a record has one byte form, so its id is stable, and bytes that are not that
    form (pretty-printed, keys out of order, a key given twice) were not written by ikreport."""
    try:
        if canonical(record) == data:
            return
    except (TypeError, ValueError):  # an integer past 2**53: no canonical form
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
        # a file name that is not UTF-8 (os keeps its bytes as surrogates) with each such byte as U+FFFD
        "sources": [{**s, "name": s["name"].encode("utf-8", "surrogateescape").decode("utf-8", "replace")} for s in sources or []],
        "cites": sorted(set(cites or [])),
        "supersedes": supersedes or [],
        "data": data,
        "limitations": list(dict.fromkeys(text for text in (" ".join(item.split()) for item in limitations) if text)),
    }
    validate(record)
    return record
