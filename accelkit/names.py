"""The names of vendors and devices as a reader of the language now in use knows them.

A Chinese reader knows Huawei's Ascend 910B as 昇腾 910B and NVIDIA as 英伟达. Those names are
data, each with the page it was read from: ``data/names_zh.csv`` (``kind, name, name_zh,
source_url``; ``kind`` is ``vendor`` or ``device``, ``name`` exactly as in the ``vendor`` /
``name`` columns of ``data/accelerators.csv``). A vendor or device without an official Chinese
name keeps its English name (AMD, H100 SXM): no name is invented.

    display_name("Ascend 910B")   # en: "Ascend 910B"; zh_CN: "昇腾 910B（Ascend 910B）"
    vendor_name("NVIDIA")         # en: "NVIDIA";      zh_CN: "英伟达（NVIDIA）"

Identifiers stay English everywhere: these functions are for text a person reads (tables,
sentences, chart labels), never for keys, file names or values passed back to the engine.
"""

from __future__ import annotations

from functools import lru_cache

from .errors import CatalogError
from .i18n import language
from .paths import data_path
from .tables import Column, Schema, read_table

__all__ = ["NAMES_ZH_SCHEMA", "load_names_zh", "chinese_name", "display_name", "vendor_name"]

KINDS = ("vendor", "device")

NAMES_ZH_SCHEMA = Schema("a Chinese names CSV", (
    Column("kind", required=True, nonempty=True, choices=KINDS),
    Column("name", required=True, nonempty=True, expected="the vendor or device name as in accelerators.csv"),
    Column("name_zh", required=True, nonempty=True, expected="the official Chinese name"),
    Column("source_url", required=True, nonempty=True, empty_message="every Chinese name needs a source"),
))


def load_names_zh(path=None):
    """The table of Chinese names (an empty frame where the file is absent)."""
    import pandas as pd

    path = data_path("names_zh.csv") if path is None else path
    if not path.exists():
        return pd.DataFrame(columns=["kind", "name", "name_zh", "source_url"])
    frame = read_table(path, NAMES_ZH_SCHEMA, "Chinese names", CatalogError)
    duplicated = frame[frame.duplicated(["kind", "name"], keep=False)]
    if not duplicated.empty:
        first = duplicated.iloc[0]
        raise CatalogError(f"{path}: {first['kind']} {first['name']!r} has more than one Chinese name")
    return frame


@lru_cache(maxsize=1)
def _table():
    frame = load_names_zh()
    return {(row.kind, row.name): row.name_zh for row in frame.itertuples()}


def chinese_name(name, kind="device"):
    """The official Chinese name of a device or vendor, or None where it has none."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    return _table().get((kind, str(name)))


def display_name(name, kind="device"):
    """``name`` as the reader knows it: in Chinese ``昇腾 910B（Ascend 910B）`` where an official
    Chinese name exists (just the Chinese name when it already contains the English one, as
    ``Atlas 300I Duo 推理卡``), else ``name`` unchanged; in English always ``name``."""
    if name is None or language() != "zh_CN":
        return name
    zh = chinese_name(name, kind)
    if not zh:
        return name
    if str(name) in zh:
        return zh
    return f"{zh}（{name}）"


def vendor_name(vendor):
    """A vendor's name as the reader knows it (``英伟达（NVIDIA）`` in Chinese, ``NVIDIA`` in English)."""
    return display_name(vendor, kind="vendor")
