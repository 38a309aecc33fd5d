"""Facts that change a purchase, beyond speed and price: licence, links, memory, cooling, export.

``data/device_facts.csv`` holds one sourced fact per row (the quote that supports
it, its URL and date): the GeForce driver licence's "No Datacenter Deployment"
clause, consumer and workstation cards without NVLink or GPU peer-to-peer in the
official driver, memory without ECC, passively cooled cards that need server
airflow, export controls. A row names a catalogue device or a family
(``family:GeForce`` = every device whose name starts with "GeForce").

:func:`purchase_risks` turns them into the risks that matter for a scenario: a
licence that forbids the deployment, a missing link when the configuration spans
devices, no ECC on a long training run. The decision shows them next to each
device; they do not change the score (a person weighs a legal or operational risk,
not a formula).
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from .i18n import DEFAULT_LANGUAGE, N_, _, format_date, language
from .tables import Column, Schema

__all__ = ["FACTS", "load_facts", "market_restrictions", "purchase_risks"]

#: fact -> (words for a buyer, when it matters: "always", "multi_device", "datacenter", "long_runs", "own_hall");
#: the words are English here (marked with ``N_``) and translated where they become text: :func:`purchase_risks`,
#: :func:`market_restrictions`
FACTS = {
    "datacenter_eula": (N_("the GeForce driver licence does not allow datacenter deployment"), "datacenter"),
    "no_nvlink": (N_("no NVLink: devices talk over PCIe"), "multi_device"),
    "no_p2p": (N_("no GPU peer-to-peer in NVIDIA's official driver"), "multi_device"),
    "no_ecc": (N_("no ECC on the device memory"), "long_runs"),
    "no_mig": (N_("no MIG partitioning"), "never"),
    "passive_cooling": (N_("passively cooled: needs server airflow"), "own_hall"),
    # a matter for where the buyer is, which the scenario does not hold: listed, not raised
    "export_control": (N_("subject to US export controls"), "never"),
    "no_nvaie": (N_("not supported by NVIDIA AI Enterprise"), "datacenter"),
    "ecc": (N_("ECC memory"), "never"),
    "mig": (N_("MIG partitioning"), "never"),
    "active_cooling": (N_("actively cooled (fans)"), "never"),
    # market facts, dated, read by a market filter (not raised as purchase risks): a part
    # made for, or sold inside, the China market; a US licence requirement later eased;
    # US guidance that using a part anywhere may breach US export controls
    "china_market": (N_("made for the China market (a variant within US export rules, or a Chinese vendor's part)"),
                     "never"),
    "export_control_eased": (N_("US export licences granted again after a restriction (dated; check the current "
                                "rule)"), "never"),
    "foreign_use_restricted": (N_("US guidance: using it outside China may breach US export controls"), "never"),
}
_COLUMNS = ["device", "fact", "severity", "quote", "source_url", "source_title", "date", "notes"]

FACTS_SCHEMA = Schema("a device facts CSV", (
    Column("device", required=True, nonempty=True),
    Column("fact", required=True, choices=tuple(FACTS), nonempty=True),
    Column("severity", required=True, choices=("risk", "info"), nonempty=True),
    Column("quote", required=True, nonempty=True, empty_message="every fact needs its quote"),
    Column("source_url", required=True, nonempty=True, empty_message="every fact needs its source url"),
))


def load_facts(path=None):
    """The facts table, checked: known fact keys, a severity, a source and a quote per row.

    Raises
    ------
    accelkit.catalog.CatalogError
        Naming the file, line and column of a bad cell.
    """
    from .catalog import CatalogError, data_path
    from .tables import read_table

    origin = "device facts" if path is None else f"device facts file {path}"
    path = data_path("device_facts.csv") if path is None else path
    frame = read_table(path, FACTS_SCHEMA, origin, CatalogError)
    return frame[[c for c in _COLUMNS if c in frame.columns]].reset_index(drop=True)


@lru_cache(maxsize=1)
def _builtin_facts():
    from .catalog import data_path

    if not data_path("device_facts.csv").exists():
        return pd.DataFrame(columns=_COLUMNS)
    return load_facts()


def _applies(device_name, target):
    if target.startswith("family:"):
        return device_name.lower().startswith(target.split(":", 1)[1].strip().lower())
    return device_name.lower() == target.lower()


def purchase_risks(names, deployment="cloud", multi_device=None, training=False, facts=None):
    """The risk facts of each device that matter for a scenario.

    Parameters
    ----------
    names : sequence of str
        Catalogue device names.
    deployment : str
        ``cloud`` / ``on-prem`` (a datacenter: the licence clause applies) or ``edge``.
    multi_device : sequence of bool, optional
        Per device, whether its configuration spans more than one device (links matter).
    training : bool
        Long training runs (memory without ECC matters).

    Returns
    -------
    pandas.DataFrame
        Index as ``names``: ``purchase_risks`` (words in the language in use,
        ``"; "``-joined, empty when none) and ``purchase_risk_sources`` (the URLs,
        one per fact).
    """
    facts = _builtin_facts() if facts is None else facts
    risks = facts[facts["severity"] == "risk"]
    rows = list(zip(risks["device"], risks["fact"], risks["source_url"]))
    multi = [True] * len(names) if multi_device is None else list(multi_device)
    words, sources = [], []
    for name, spans in zip(names, multi):
        found, urls = [], []
        for target, fact, url in rows:
            if not _applies(str(name), target):
                continue
            text, when = FACTS[fact]
            text = _(text)  # in the language in use when the decision is made
            relevant = (when == "always" or (when == "datacenter" and deployment in ("cloud", "on-prem"))
                        or (when == "multi_device" and spans) or (when == "long_runs" and training)
                        or (when == "own_hall" and deployment in ("on-prem", "edge")))
            if relevant and text not in found:
                found.append(text)
                urls.append(url)
        words.append("; ".join(found))
        sources.append(" ".join(urls))
    return pd.DataFrame({"purchase_risks": words, "purchase_risk_sources": sources})


#: market -> the fact kinds that keep a device from being bought there
_MARKET_FACTS = {"china": ("export_control",)}
#: market -> the fact kinds that lift a restriction dated before them
_MARKET_EASED = {"china": ("export_control_eased",)}
#: market -> its name in a sentence (the value stays English; the name is translated where shown)
_MARKET_NAMES = {"china": N_("china"), "global": N_("global")}


def _date_words(text):
    """A fact's date as stored (ISO) in English; as the reader's locale writes a day in another language."""
    if language() == DEFAULT_LANGUAGE or len(text) != 10:
        return text
    try:
        return format_date(text)
    except ValueError:
        return text


def market_restrictions(names, market="global", facts=None):
    """Whether each device can be bought in ``market``, from the sourced, dated facts.

    ``market="china"``: a device with an ``export_control`` fact (a US licence
    requirement for exports to China, quoted with its source) is restricted, unless a
    later-dated ``export_control_eased`` fact says licences are granted again; then it
    passes with a note (the licence requirement stands and the decision can change).
    ``"global"`` restricts nothing.

    Returns
    -------
    pandas.DataFrame
        Index as ``names``: ``restricted`` (bool), ``restriction`` (words with the
        source, in the language in use; for an eased device, the note),
        ``restriction_source``.
    """
    facts = _builtin_facts() if facts is None else facts
    kinds, eased_kinds = _MARKET_FACTS.get(market, ()), _MARKET_EASED.get(market, ())
    rows = facts[facts["fact"].isin(kinds + eased_kinds)]
    where = _(_MARKET_NAMES[market]) if market in _MARKET_NAMES else market
    restricted, words, sources = [], [], []
    for name in names:
        hit = rows[[_applies(str(name), target) for target in rows["device"]]]
        control, eased = hit[hit["fact"].isin(kinds)], hit[hit["fact"].isin(eased_kinds)]
        last_control = control["date"].fillna("").astype(str).max() if not control.empty else ""
        last_eased = eased["date"].fillna("").astype(str).max() if not eased.empty else ""
        if control.empty:
            restricted.append(False)
            words.append("")
            sources.append("")
        elif last_eased and last_eased >= last_control:
            restricted.append(False)
            words.append(_("US licence required for {market}; licences granted again since {date} ({source}): check "
                           "the current status before ordering").format(
                market=where, date=_date_words(last_eased), source=eased["source_url"].iloc[-1]))
            sources.append(" ".join(dict.fromkeys(list(control["source_url"]) + list(eased["source_url"]))))
        else:
            restricted.append(True)
            words.append(_("not sold in {market}: {fact} ({source})").format(
                market=where, fact=_(FACTS[control["fact"].iloc[0]][0]), source=control["source_url"].iloc[0]))
            sources.append(" ".join(dict.fromkeys(control["source_url"])))
    return pd.DataFrame({"restricted": restricted, "restriction": words, "restriction_source": sources})
