"""Plain words for every term on screen: one glossary, as data (``data/glossary.csv``).

Each row names a term, the other spellings people meet (``aliases``, ``|``-separated), a
one-sentence and a two-to-three-sentence definition in English and in Simplified Chinese,
and a page that defines the term. The panels' tap-to-open terms
(:mod:`accelkit.ui.terms`), the glossary page and the docs read this one file.

    >>> define("MFU")                       # doctest: +ELLIPSIS
    "The share of a device's datasheet peak speed that a real job actually uses."
    >>> define("ttft", lang="zh")           # aliases and case do not matter
    '用户发出请求后，到看到回答的第一个字所等待的时间。'
"""

from __future__ import annotations

import functools
import html

from . import tables
from ._validate import suggest
from .paths import data_path

__all__ = ["GlossaryError", "LANGS", "SCHEMA", "ZH_FORMS", "load_glossary", "lookup", "define", "shown_name",
           "source_url",
           "terms", "glossary_html", "glossary_markdown"]

#: the languages the glossary carries, as the column suffixes name them
LANGS = ("en", "zh")

_URL = "an http(s) URL of a page that defines the term, or empty"

SCHEMA = tables.Schema(
    what="a glossary CSV",
    columns=(
        tables.Column("term", required=True, nonempty=True, expected="the term as shown on screen"),
        tables.Column("aliases", required=True, expected="other spellings, separated by |"),
        tables.Column("short_en", required=True, nonempty=True, expected="a one-sentence definition in English"),
        tables.Column("long_en", required=True, nonempty=True, expected="a longer definition in English"),
        tables.Column("short_zh", required=True, nonempty=True, expected="a one-sentence definition in Chinese"),
        tables.Column("long_zh", required=True, nonempty=True, expected="a longer definition in Chinese"),
        tables.Column("source_url", required=True, expected=_URL),
    ),
    label="term",
    unique="term",
    unique_message="term {value!r} appears twice",
)

#: how a Chinese page writes the glossary's terms (the project's term list, issue 27 point 7), so
#: that a term in a translated sentence explains itself on tap as well; keyed by the glossary's term
ZH_FORMS = {
    "tensor parallel": ("张量并行",), "pipeline parallel": ("流水线并行",), "expert parallel": ("专家并行",),
    "data parallel": ("数据并行",), "micro-batch": ("微批",), "gradient accumulation": ("梯度累积",),
    "global batch": ("全局批大小",), "headroom": ("余量",), "ridge point": ("拐点",), "roofline": ("屋顶线",),
    "arithmetic intensity": ("算术强度",), "binade": ("二进制数量级",), "KV cache": ("KV 缓存",),
    "batch size": ("批大小",), "concurrency": ("并发",), "mixed precision": ("混合精度",),
    "loss scaling": ("损失缩放",), "quantisation": ("量化",), "power envelope": ("功耗上限",),
    "tokens per second": ("每秒 token 数",), "prefill": ("预填充",), "decode": ("解码",), "dense": ("稠密",),
    "tensor cores": ("张量核心",), "memory-bound": ("显存受限",), "compute-bound": ("算力受限",),
    "memory bandwidth": ("显存带宽",), "scaling efficiency": ("扩展效率",), "optimizer state": ("优化器状态",),
    "activations": ("激活值",), "sequence length": ("序列长度",), "parameters": ("参数量",),
    "device-hours": ("卡时",), "on-demand price": ("按需价格",), "break-even": ("回本",),
    "discount rate": ("折现率",), "latency target": ("延迟目标",), "epsilon": ("机器精度",),
    "underflow": ("下溢",), "mantissa": ("尾数",), "fine-tuning": ("微调",), "right-sizing": ("规格调整",),
    "cannot verify": ("无法核实",),
}


def shown_name(term, lang=None):
    """``term`` as a page in ``lang`` names it: "ridge point" in English, "拐点（ridge point）" in Chinese
    where :data:`ZH_FORMS` has its words (default: the language now in use)."""
    row = lookup(term)
    if _lang(lang) == "zh" and row["term"] in ZH_FORMS:
        return f"{ZH_FORMS[row['term']][0]}（{row['term']}）"
    return row["term"]


#: the longest one-sentence definition (a tooltip, not a paragraph)
MAX_SHORT_CHARS = 200


class GlossaryError(tables.TableError):
    """The glossary file does not match its schema (every problem listed)."""


def _key(text):
    return " ".join(str(text).strip().lower().split())


def load_glossary(path=None):
    """The glossary as a frame, checked; an alias that is also another term's name or alias is an error.

    ``path`` defaults to the shipped ``data/glossary.csv``. Every problem is reported at once,
    each naming the file, its line and column (:mod:`accelkit.tables`).
    """
    path = data_path("glossary.csv") if path is None else path
    origin = str(path)
    raw = tables.read_rows(path, origin, GlossaryError, what="glossary terms")
    frame, problems = tables.check_rows(raw, SCHEMA, origin, GlossaryError)
    seen = {}
    for i, row in frame.iterrows():
        label = row["term"] or None
        for lang in LANGS:
            short = row[f"short_{lang}"]
            if len(short) > MAX_SHORT_CHARS:
                problems.append(tables.problem(origin, i, f"short_{lang}", f"expected one sentence of at most "
                                               f"{MAX_SHORT_CHARS} characters, got {len(short)}", label))
        url = row["source_url"]
        if url and not url.lower().startswith(("http://", "https://")):
            problems.append(tables.problem(origin, i, "source_url", f"expected {_URL}, got {url[:60]!r}", label))
        names = [row["term"]] + [a for a in row["aliases"].split("|")]
        for column, name in zip(["term"] + ["aliases"] * (len(names) - 1), names):
            key = _key(name)
            if not key:
                if column == "aliases" and row["aliases"]:
                    problems.append(tables.problem(origin, i, "aliases", "an empty alias (a stray |?)", label))
                continue
            if column == "term" and key == _key(frame.loc[seen.get(key, i), "term"]) and seen.get(key, i) != i:
                continue  # the same term twice: the schema's unique check says so already
            if key in seen and seen[key] != i:
                other = frame.loc[seen[key], "term"]
                problems.append(tables.problem(origin, i, column, f"{name!r} already names the term {other!r}",
                                               label))
            seen.setdefault(key, i)
    tables.raise_problems(origin, problems, GlossaryError)
    return frame.reset_index(drop=True)


@functools.lru_cache(maxsize=1)
def _shipped():
    frame = load_glossary()
    index = {}
    for i, row in frame.iterrows():
        for name in [row["term"]] + row["aliases"].split("|"):
            if _key(name):
                index.setdefault(_key(name), i)
    return frame, index


def terms():
    """The glossary's terms, in file order."""
    return list(_shipped()[0]["term"])


def lookup(term):
    """The glossary row of ``term`` (a term or an alias, any case) as a dict.

    An unknown term raises ``KeyError`` naming the closest terms.
    """
    frame, index = _shipped()
    key = _key(term)
    if key in index:
        return frame.loc[index[key]].to_dict()
    hint = suggest(key, list(index))
    names = []
    for h in hint:  # the canonical term of each close alias, once each
        name = frame.loc[index[h], "term"]
        if name not in names:
            names.append(name)
    did_you_mean = f"; did you mean {' or '.join(repr(n) for n in names)}?" if names else ""
    raise KeyError(f"{term!r} is not in the glossary (data/glossary.csv){did_you_mean}")


def _lang(lang=None):
    """The glossary's column suffix for ``lang``; ``None`` is the language now in use
    (:func:`accelkit.i18n.language`: ``zh_CN`` -> ``zh``, otherwise ``en``)."""
    if lang is None:
        from .i18n import language

        return "zh" if language().startswith("zh") else "en"
    code = str(lang).lower().replace("-", "_").split("_")[0]
    if code not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)} (or a locale such as zh_CN); got {lang!r}")
    return code


def define(term, lang=None, long=False):
    """The definition of ``term`` in ``lang`` ("en", "zh" or a locale such as "zh_CN"; default: the
    language now in use, see :func:`accelkit.i18n.language`).

    ``long=False`` gives the one-sentence definition, ``long=True`` the two-to-three-sentence one.
    """
    row = lookup(term)
    return row[f"{'long' if long else 'short'}_{_lang(lang)}"]


def source_url(term):
    """The page that defines ``term`` ("" where none was found)."""
    return lookup(term)["source_url"]


_HEAD = {"en": ("Glossary", "Source"), "zh": ("术语表", "出处")}


def glossary_html(lang=None, only=None):
    """The glossary as an HTML page fragment: one ``<dt>``/``<dd>`` per term, alphabetical.

    ``lang``: "en", "zh" (or a locale); default the language now in use.

    ``only`` limits it to some terms (for a chapter's own glossary section).
    """
    code = _lang(lang)
    frame, _ = _shipped()
    if only is not None:
        wanted = {lookup(t)["term"] for t in only}
        frame = frame[frame["term"].isin(wanted)]
    title, source = _HEAD[code]
    items = []
    for _, row in frame.sort_values("term", key=lambda s: s.str.lower()).iterrows():
        link = ""
        if row["source_url"]:
            url = html.escape(row["source_url"])
            link = f' <a href="{url}" target="_blank" rel="noopener noreferrer">{source}</a>'
        also = [a for a in row["aliases"].split("|") if a.strip()]
        aka = f' <span class="ak-note">({html.escape(", ".join(also[:4]))})</span>' if also else ""
        items.append(
            f'<dt id="term-{html.escape(_key(row["term"]).replace(" ", "-"))}"><b>{html.escape(shown_name(row["term"], code))}</b>'
            f"{aka}</dt><dd><p>{html.escape(row[f'short_{code}'])}</p>"
            f"<p>{html.escape(row[f'long_{code}'])}{link}</p></dd>"
        )
    return f'<div class="ak-glossary" lang="{code}"><h3>{title}</h3><dl>{"".join(items)}</dl></div>'


def glossary_markdown():
    """The glossary as the docs page ``docs/glossary.md`` (English, then 简体中文, per term).

    ``python -m accelkit.glossary > docs/glossary.md`` rewrites it; ``tests/test_glossary.py`` fails
    when the page and ``data/glossary.csv`` disagree.
    """
    frame, _ = _shipped()
    lines = ["# Glossary · 术语表", "",
             "Every term the workbook shows, in plain words. Generated from `data/glossary.csv` "
             "(`python -m accelkit.glossary > docs/glossary.md`); edit the CSV, not this page.", ""]
    for _, row in frame.sort_values("term", key=lambda s: s.str.lower()).iterrows():
        also = [a for a in row["aliases"].split("|") if a.strip()]
        lines.append(f"## {row['term']}")
        lines.append("")
        if also:
            lines.append(f"*Also:* {', '.join(also)}")
            lines.append("")
        lines.append(f"**{row['short_en']}** {row['long_en']}")
        lines.append("")
        lines.append(f"**{row['short_zh']}** {row['long_zh']}")
        lines.append("")
        if row["source_url"]:
            lines.append(f"Source: <{row['source_url']}>")
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the docs page's writer
    print(glossary_markdown(), end="")
