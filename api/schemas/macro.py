"""Bodies of the macro endpoints."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import Field

from api.contract import ApiModel
from api.schemas.common import example

INDICATOR_EXAMPLE = {
    "source": "STATIN",
    "category": "output",
    "indicator_code": "GDP",
    "period": "2026-Q2",
    "frequency": "Q",
    "value": 1305.56731,
    "unit": "USD millions",
    "currency": "USD",
    "release_date": "2026-09-01",
    "original": {"value": 203785.0, "currency": "JMD", "unit": "JMD millions"},
    "fx": [
        {
            "pair": "USDJMD",
            "periods": ["2026-04", "2026-05", "2026-06"],
            "rate": 156.089233,
            "release_date": "2026-07-03",
            "source": "BOJ",
            "note": None,
        }
    ],
    "note": None,
}


class FxRate(ApiModel):
    pair: str = Field(description="JMD per unit of the other currency, e.g. USDJMD.")
    periods: list[str] = Field(description="The months averaged (a quarter: its three months).")
    rate: float
    release_date: date
    source: str
    note: str | None = Field(description="Set when the period's own rate was not published yet.")


class Original(ApiModel):
    value: float
    currency: str
    unit: str


class MacroIndicator(ApiModel):
    model_config = example(INDICATOR_EXAMPLE)

    source: str = Field(description="BOJ, STATIN or PIOJ.")
    category: str
    indicator_code: str
    period: str = Field(description="YYYY-MM or YYYY-Qn.")
    frequency: str = Field(description="M or Q.")
    value: float
    unit: str
    currency: str | None = Field(description="Currency of a money value; null for rates, indices and percentages.")
    release_date: date = Field(description="When the institution published this value (a revision has a later one).")
    original: Original | None = Field(description="The value as published, when it was converted.")
    fx: list[FxRate] = Field(description="The FX rates used for the conversion.")
    note: str | None


class MacroIndicators(ApiModel):
    model_config = example(
        {
            "generation": "v7",
            "as_of": "2026-11-01",
            "currency": "USD",
            "count": 1,
            "indicators": [INDICATOR_EXAMPLE],
        }
    )

    generation: str = Field(description="The macro data generation label.")
    as_of: date | None = Field(
        description="Values as known at the end of this day: releases dated on or before it, each as recorded by "
        "then. Null: as known today (releases dated up to today, each in its latest version)."
    )
    currency: str | None
    count: int
    indicators: list[MacroIndicator]


class MacroParameter(ApiModel):
    parameter: str = Field(description="rates_regime, fx_pressure or macro_risk.")
    value: float
    reading: str = Field(description="The level and a plain-language reading of the inputs.")
    inputs: dict[str, Any] = Field(description="Each input's value, source, indicator, period and release date.")


class MacroSource(ApiModel):
    code: str
    name: str
    role: str
    latest_release: date | None = Field(description="Its latest release the parameters use.")


class MacroInsights(ApiModel):
    model_config = example(
        {
            "generation": "v7",
            "week_start": "2026-11-16",
            "model_version": "macro-v1",
            "parameters": [
                {
                    "parameter": "fx_pressure",
                    "value": -0.04,
                    "reading": "MODERATE: ...",
                    "inputs": {
                        "usdjmd": {
                            "value": 156.48,
                            "source": "BOJ",
                            "indicator_code": "USDJMD",
                            "period": "2026-10",
                            "release_date": "2026-11-03",
                        }
                    },
                }
            ],
            "sources": [
                {
                    "code": "BOJ",
                    "name": "Bank of Jamaica",
                    "role": "central bank",
                    "latest_release": "2026-11-09",
                }
            ],
        }
    )

    generation: str
    week_start: date
    model_version: str
    parameters: list[MacroParameter]
    sources: list[MacroSource]
