"""The translations: every marked string has a Simplified Chinese translation that keeps its placeholders."""

import re
import string
import sys
from pathlib import Path

import pytest

from accelkit import i18n

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import i18n as i18n_tool  # noqa: E402  (tools/i18n.py, the extractor)

_FIELDS = string.Formatter()


def _placeholders(text):
    try:
        return sorted(name for _lit, name, _spec, _conv in _FIELDS.parse(text) if name is not None)
    except ValueError:
        return None


def test_every_marked_string_has_a_chinese_translation():
    missing = i18n_tool.missing("zh_CN")
    listed = "\n".join(f"  {where}:{line}  {message[:80]!r}" for where, line, message in missing[:40])
    assert not missing, (f"{len(missing)} user-facing string(s) have no zh_CN translation; add them with "
                         f"`python tools/i18n.py add accelkit/locale/zh_CN/LC_MESSAGES/<part>.po` and translate:\n"
                         f"{listed}")


def test_translations_keep_every_placeholder_of_the_english():
    broken = []
    for message in i18n.catalogue("zh_CN"):
        if not message.id or not isinstance(message.id, str) or "{" not in message.id:
            continue
        if _placeholders(message.id) != _placeholders(message.string):
            broken.append(f"{message.id[:60]!r} -> {message.string[:60]!r}")
    assert not broken, "translations that drop or rename a {placeholder}:\n  " + "\n  ".join(broken[:30])


def test_no_catalogue_entry_is_translated_twice_differently():
    seen, clashes = {}, []
    for path in sorted((i18n.locale_dir() / "zh_CN" / "LC_MESSAGES").glob("*.po")):
        from babel.messages.pofile import read_po

        with open(path, "rb") as handle:
            for message in read_po(handle):
                if message.id and message.string:
                    if message.id in seen and seen[message.id][1] != message.string:
                        clashes.append(f"{message.id[:50]!r} in {seen[message.id][0]} and {path.name}")
                    seen.setdefault(message.id, (path.name, message.string))
    assert not clashes, "one English string, two translations:\n  " + "\n  ".join(clashes)


def test_the_language_follows_set_language_and_falls_back_to_english():
    with i18n.using("zh_CN"):
        assert i18n.language() == "zh_CN"
        assert i18n._("a string nobody translated") == "a string nobody translated"
        assert i18n.format_date("2026-12-05") == "2026年12月5日"
    assert i18n.language() == "en"
    assert i18n.format_date("2026-12-05") == "December 5, 2026"


@pytest.mark.parametrize("header, expected", [
    ("zh-CN,zh;q=0.9,en;q=0.8", "zh_CN"), ("en-US,en;q=0.9", "en"), ("de-DE,zh;q=0.5", "zh_CN"),
    ("fr-FR", "en"), ("", "en"), ("en;q=0.4,zh-Hans;q=0.9", "zh_CN"),
])
def test_the_browsers_language_picks_the_first_language_spoken(header, expected):
    assert i18n.from_accept_language(header) == expected


def test_an_unknown_language_is_refused_with_the_field_and_the_choices():
    with pytest.raises(ValueError, match=r"lang: unknown language 'zh_TW'.*en, zh_CN"):
        i18n.normalize_language("zh_TW")

