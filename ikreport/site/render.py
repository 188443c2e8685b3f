"""Render pages with jinja2: ``<name>.html`` (autoescaped) and its ``<name>.md`` twin.

Templates come from ``--templates DIR`` first, then the ones shipped with the package.
"""

from __future__ import annotations

import hashlib
import pickle
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import orjson
from markupsafe import Markup

from ikreport import __version__
from ikreport import links
from ikreport.bidi import show_bidi
from ikreport.errors import BuildError
from ikreport.formatting import Markdown, md_code, md_text
from ikreport.site.model import Page, Row
from ikreport.store.cache import Cache

ENVIRONMENT_REVISION = "md-finalize-1"  # change with any option of environment() below


def default_templates_dir() -> Path:
    """The shipped templates: inside the installed package, else the source tree's."""
    packaged = Path(str(resources.files("ikreport"))) / "templates"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[2] / "templates"
    if source.is_dir():
        return source
    raise BuildError("the ikreport templates are missing from this installation; reinstall ikreport")


def _bytecode_cache(folder: Path | None) -> jinja2.BytecodeCache | None:
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # only costs time
    # Compiled code bakes in the environment (finalize, autoescape), which jinja2's cache key
    # (template name and source) does not cover: name the files after this environment, so
    # code compiled before the .md finalize existed is never loaded.
    return _BytecodeCache(str(folder), pattern=f"__jinja2_{ENVIRONMENT_REVISION}_%s.cache")


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """jinja2's cache, except that a damaged or unreadable file is a miss and a template it
    cannot save (a full disk, a read-only folder) is not an error (jinja2 raises on both)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            bucket.reset()  # compiled again from the template

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # only costs time


@jinja2.pass_context
def _finalize(context: jinja2.runtime.Context, value: object) -> object:
    """Every ``{{ … }}`` of a .md template is escaped unless md_text/md_code made it already:
    record text cannot slip into a twin as markup because a template forgot ``| md``.
    (.html templates are autoescaped by jinja2.)"""
    if context.name is None or not context.name.endswith(".md") or isinstance(value, Markdown):
        return value
    return md_text(value)


@jinja2.pass_context
def _rows(context: jinja2.runtime.Context, rows: list[Row], table: str) -> object:
    """Each of ``rows`` as a row of ``table`` (the macro of that name in _rows.html or _rows.md),
    each followed by a newline: a table's body in one call (a thousand rows through a template
    loop cost twice the time). A row's text is a pure function of its key (site/model.py Row), the
    page it is on, the templates and the code, so the build cache keeps it under a digest of them:
    a rebuild of an index of thousands of records makes only the rows it has not shown before, and
    finds the rest run by run (``Cache.get_runs``)."""
    ext = _ext(context)
    env = context.environment
    assert isinstance(env, _Environment)
    page = context["page"].path
    head = f"{ext} {table} {page}\n".encode()
    keys = [hashlib.blake2b(head + row.key.encode(), digest_size=16).hexdigest() for row in rows]
    kept = env.build_cache.get_runs(env.rows_space, keys, lambda text: isinstance(text, str))
    macro = getattr(env.get_template(f"_rows.{ext}").module, table)
    new = {key: str(macro(row.make(page))) for key, row in zip(keys, rows) if key not in kept}
    env.build_cache.put_many(env.rows_space, new.items())
    text = "".join([(new[key] if key in new else kept[key]) + "\n" for key in keys])
    return Markup(text) if ext == "html" else Markdown(text)


@jinja2.pass_context
def _mark(context: jinja2.runtime.Context, value: object, name: str) -> object:
    """``value`` as the macro ``name`` of _marks.html or _marks.md marks it (a superseded
    record's replacement). A .md template must not call such a macro itself: with autoescape
    off a macro returns a plain str, which the finalize escapes as if it were record text, so
    the mark's link read as ``[\\[b3160d81\\]](e/….md)`` on GitHub. The values inside it are
    escaped as the macro renders them."""
    ext = _ext(context)
    text = str(getattr(context.environment.get_template(f"_marks.{ext}").module, name)(value))
    return Markup(text) if ext == "html" else Markdown(text)


def _ext(context: jinja2.runtime.Context) -> str:
    return "md" if context.name is not None and context.name.endswith(".md") else "html"


_DICT_NAMES = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """jinja2's, with ``row.name`` on a dict looked up as a key first. jinja2 asks for the
    attribute first and, as a dict has none by that name, falls back to the key after an
    AttributeError: 2,700 of those a bench record page. Names a dict does have (``items``,
    ``get``) still mean the method, so every template reads the same as with jinja2's. It
    carries the build cache that keeps rendered table rows (``_rows``)."""

    build_cache: Cache = Cache(None)  # not jinja2's own 'cache', its templates'
    rows_space = "row"  # a build names it after its templates and code

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_NAMES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def environment(override: Path | None, bytecode_dir: Path | None = None) -> _Environment:
    """The templates (``override`` first). With ``bytecode_dir``, compiled templates are kept
    there (jinja2 checks each against its source), which saves most of a small build's start."""
    dirs = [str(override)] if override else []
    dirs.append(str(default_templates_dir()))
    env = _Environment(
        loader=jinja2.FileSystemLoader(dirs),
        bytecode_cache=_bytecode_cache(bytecode_dir),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=False, default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.filters["md"] = md_text
    env.filters["mdcode"] = md_code
    env.filters["rows"] = _rows
    env.filters["mark"] = _mark
    env.globals["version"] = __version__
    env.globals["chart_url"] = lambda key, page: links.url(links.chart_file(key), page.path)
    return env


def render(env: jinja2.Environment, page: Page,
           formats: tuple[str, ...] = ("html", "md")) -> tuple[str, ...]:
    """The page in each format, by default (HTML, Markdown). Every bidirectional control in it
    is shown as an escape (ikreport/bidi.py): ikreport's own words hold none, so each came from
    record or report text, where it would reorder the claim and citations around it. One pass
    over the finished page reaches all of them: template values, report HTML, inline charts,
    attributes, in both formats (``\\u202e`` is plain text to HTML and to CommonMark, whose
    backslash escapes only punctuation)."""
    out = []
    for ext in formats:
        name = f"{page.template}.{ext}"
        try:
            out.append(show_bidi(env.get_template(name).render(page=page, **page.context)))
        except jinja2.TemplateError as exc:
            raise BuildError(f"{name}: {exc}; fix the template (or drop it from --templates)") from exc
    return tuple(out)


def asset(env: jinja2.Environment, name: str) -> bytes:
    """A static file from the templates folder (assets/…)."""
    for base in env.loader.searchpath:  # type: ignore[union-attr]
        path = Path(base) / name
        if path.is_file():
            return path.read_bytes()
    raise BuildError(f"{name}: missing from the templates folders")
