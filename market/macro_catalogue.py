"""The macro catalogue: the three national sources, their indicators and categories, the
data generation label every macro answer carries, and the point-in-time rule (`vintage`)
that every reader of `macro_observations` applies. Ingest adapters (ingest/macro_sources.py),
the macro model (models/macro_model.py) and the read view (views/macro.py) all read it here,
so none of them imports another for a constant."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

GENERATION = "v7"  # the macro data generation label every response carries


@dataclass(frozen=True)
class Source:
    code: str
    name: str
    role: str
    path: str


SOURCES = {
    "BOJ": Source("BOJ", "Bank of Jamaica", "central bank: policy rate, FX rates, reserves, money supply", "/boj"),
    "STATIN": Source(
        "STATIN",
        "Statistical Institute of Jamaica",
        "statistics institute: CPI, GDP, unemployment",
        "/statin/indicators.html",
    ),
    "PIOJ": Source(
        "PIOJ",
        "Planning Institute of Jamaica",
        "planning institute: growth estimates and outlook",
        "/pioj/economic-update.pdf",
    ),
}
BOJ_SERIES = {  # code: (category, currency of the values)
    "POLICY_RATE": ("rates", None),
    "USDJMD": ("fx", None),
    "GBPJMD": ("fx", None),
    "EURJMD": ("fx", None),
    "CADJMD": ("fx", None),
    "NIR": ("reserves", "USD"),
    "M2": ("money", "JMD"),
}
STATIN_CATEGORIES = {"CPI": "prices", "CPI_YOY": "prices", "GDP": "output", "UNEMPLOYMENT": "labour"}
PIOJ_CATEGORIES = {"GDP_GROWTH_EST": "output", "GROWTH_OUTLOOK": "outlook"}
CATEGORIES = {**{c: v[0] for c, v in BOJ_SERIES.items()}, **STATIN_CATEGORIES, **PIOJ_CATEGORIES}


def vintage(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(source, code, period) -> the row of its latest release among `rows`."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["source"], row["indicator_code"], row["period"])
        held = latest.get(key)
        if held is None or (row["release_date"], row["id"]) > (held["release_date"], held["id"]):
            latest[key] = row
    return latest
