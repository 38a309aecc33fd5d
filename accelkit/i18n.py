"""Languages of the workbook: English (the source strings) and Simplified Chinese (``zh_CN``).

Every user-facing string is written in English in the code and marked for translation:

    from accelkit.i18n import _, N_
    _("{n} devices cannot be verified").format(n=3)       # translated now, placeholders after
    TITLE = N_("Decision")                                 # marked at import, translated where shown: _(TITLE)

The translations are gettext catalogues in Babel's ``.po`` format,
``accelkit/locale/<language>/LC_MESSAGES/*.po`` (one file per part of the workbook, merged
at load). They are compiled in memory on first use, so no binary ``.mo`` file is kept in the
repository. ``tools/i18n.py extract`` lists every marked string (Python sources and the
notebooks' Markdown cells); ``tests/test_i18n.py`` fails on any marked string that a catalogue
lacks, or whose translation drops a ``{placeholder}``.

The language is one per process: a Voilà visitor has a kernel of their own, a report
renders its chapters in kernels started with ``ACCELKIT_LANG`` set, and the CLI sets it from
``--lang``. Numbers and dates follow the language through Babel (CLDR data).

Reference: GNU gettext manual, "The Programmer's View"; Babel, "Working with Message Catalogs"
(https://babel.pocoo.org/en/latest/messages.html).
"""

from __future__ import annotations

import difflib
import functools
import gettext
import io
import os
from contextlib import contextmanager
from pathlib import Path

__all__ = ["LANGUAGES", "LANGUAGE_NAMES", "DEFAULT_LANGUAGE", "LANG_ENV", "_", "N_", "ngettext", "language",
           "set_language", "using", "normalize_language", "from_accept_language", "catalogue", "locale_dir",
           "format_decimal", "format_date", "html_lang"]

#: the languages the workbook speaks; the first is the language of the source strings
LANGUAGES = ("en", "zh_CN")
LANGUAGE_NAMES = {"en": "English", "zh_CN": "简体中文"}
DEFAULT_LANGUAGE = "en"
#: the environment variable a process (a report's chapter kernel, the app's kernels) takes its language from
LANG_ENV = "ACCELKIT_LANG"

_ALIASES = {"en": "en", "en_us": "en", "en_gb": "en", "english": "en",
            "zh": "zh_CN", "zh_cn": "zh_CN", "zh_hans": "zh_CN", "zh_hans_cn": "zh_CN", "zh_sg": "zh_CN",
            "cn": "zh_CN", "chinese": "zh_CN", "简体中文": "zh_CN", "中文": "zh_CN"}


def locale_dir():
    """The folder of the catalogues: ``accelkit/locale``."""
    return Path(__file__).resolve().parent / "locale"


def normalize_language(lang, field="lang"):
    """``lang`` as one of :data:`LANGUAGES` (``"zh-CN"``, ``"zh_Hans"``, ``"zh"`` -> ``"zh_CN"``).

    Raises ``ValueError`` naming ``field``, the value and the languages offered (with the close
    matches first) for anything else.
    """
    key = str(lang).strip().replace("-", "_").lower()
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(_ALIASES[c]) for c in close)}?" if close else ""
    raise ValueError(f"{field}: unknown language {lang!r}, expected one of {', '.join(LANGUAGES)}{hint}")


def from_accept_language(header, default=DEFAULT_LANGUAGE):
    """The first language of an HTTP ``Accept-Language`` header the workbook speaks (RFC 9110 §12.5.4).

    ``"zh-CN,zh;q=0.9,en;q=0.8" -> "zh_CN"``; weights order the choices; none spoken -> ``default``.
    """
    choices = []
    for position, part in enumerate(str(header or "").split(",")):
        tag, _sep, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _eq, value = param.strip().partition("=")
            if name == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if tag and weight > 0:
            choices.append((-weight, position, tag))
    for _w, _p, tag in sorted(choices):
        try:
            return normalize_language(tag)
        except ValueError:
            base = tag.split("-")[0]
            if base.lower() in _ALIASES:
                return _ALIASES[base.lower()]
    return default


_current = None


def language():
    """The language now in use (``ACCELKIT_LANG`` of the process until :func:`set_language` is called)."""
    global _current
    if _current is None:
        env = os.environ.get(LANG_ENV, "")
        try:
            _current = normalize_language(env, field=LANG_ENV) if env else DEFAULT_LANGUAGE
        except ValueError:
            _current = DEFAULT_LANGUAGE
    return _current


def set_language(lang):
    """Speak ``lang`` from now on in this process; returns the normalised name."""
    global _current
    _current = normalize_language(lang)
    return _current


@contextmanager
def using(lang):
    """Speak ``lang`` inside the ``with`` block, the previous language after it."""
    before = language()
    set_language(lang)
    try:
        yield _current
    finally:
        set_language(before)


@functools.lru_cache(maxsize=None)
def catalogue(lang):
    """The merged Babel catalogue of ``lang`` (every ``.po`` file of its folder), or None for English."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    if lang == DEFAULT_LANGUAGE:
        return None
    merged = Catalog(locale=lang, domain="accelkit")
    for path in sorted((locale_dir() / lang / "LC_MESSAGES").glob("*.po")):
        with open(path, "rb") as handle:
            part = read_po(handle, locale=lang)
        for message in part:
            if message.id and message.string and not message.fuzzy:
                merged.add(message.id, message.string, context=message.context)
    return merged


@functools.lru_cache(maxsize=None)
def _translations(lang):
    from babel.messages.mofile import write_mo

    merged = catalogue(lang)
    if merged is None:
        return gettext.NullTranslations()
    buffer = io.BytesIO()
    write_mo(buffer, merged)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def _(message):
    """``message`` in the language now in use (itself where no translation exists)."""
    if not message:
        return message
    lang = language()
    if lang == DEFAULT_LANGUAGE:
        return message
    return _translations(lang).gettext(message)


def N_(message):
    """Mark ``message`` for translation without translating it (a constant made at import)."""
    return message


def ngettext(singular, plural, n):
    """``singular`` or ``plural`` by ``n``, translated (Chinese has one form)."""
    lang = language()
    if lang == DEFAULT_LANGUAGE:
        return singular if n == 1 else plural
    return _translations(lang).ngettext(singular, plural, n)


def _babel_locale():
    return "zh_Hans_CN" if language() == "zh_CN" else "en_US"


def format_decimal(value, digits=3):
    """``value`` with the locale's separators, to ``digits`` decimals at most (Babel, CLDR)."""
    from babel.numbers import format_decimal as babel_decimal

    return babel_decimal(value, format=f"#,##0.{'#' * digits}" if digits else "#,##0", locale=_babel_locale())


def format_date(value, length="long"):
    """A date (``datetime.date`` or ISO text) as the locale writes it: "December 5, 2026", "2026年12月5日"."""
    import datetime

    from babel.dates import format_date as babel_date

    if isinstance(value, str):
        value = datetime.date.fromisoformat(value[:10])
    return babel_date(value, format=length, locale=_babel_locale())


def html_lang():
    """The ``lang`` attribute of a page in the language now in use (``en``, ``zh-CN``)."""
    return language().replace("_", "-")
