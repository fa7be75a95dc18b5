"""T3: the weekly macro panel and the "national speculation parameters".

A week starts on Monday; its view of the economy is what had been released before that
Monday (T3 runs at 09:00, before the day's releases), read point in time from the stored
vintages, so recomputing an old week gives exactly what was computed then.

The model (`macro-v1`) is three transparent scores, each with its inputs (value, source,
period, release date) and a plain-language reading:

- `rates_regime` in [-1, 1], positive = tightening: 0.6 x clip(change of the policy rate
  over 6 months / 1 pp) + 0.4 x clip((8% - M2 growth over 12 months) / 8 pp). TIGHTENING
  above 0.25, EASING below -0.25, else NEUTRAL. Tight money drains a thin equity market.
- `fx_pressure` in [-1, 1], positive = pressure on the JMD: 0.6 x clip(annualised 3-month
  depreciation against the USD / 10%) + 0.4 x clip(-(3-month change of reserves) / 5%).
  HIGH above 0.33, LOW below -0.33, else MODERATE.
- `macro_risk` in [0, 100]: 40 + 8 x (pp of 12-month CPI inflation outside the central
  bank's 4-6% target band) - 5 x (PIOJ's latest growth estimate, %) - 3 x (its outlook
  for the next quarter, %) + 6 x (change of unemployment over 4 quarters, pp). LOW below
  35, HIGH above 60, else ELEVATED.

A parameter whose inputs are not all published yet is not stored; the stage says which
input is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pandas as pd
from sqlalchemy import Connection

from market.errors import NotReadyError
from market.macro_catalogue import GENERATION, SOURCES, vintage
from store import tables
from store.history import current_rows

MODEL_VERSION = "macro-v1"
INSIGHTS_REFUSAL = (
    "macro insights need a PRO or INSTITUTIONAL key, or macro access switched on for this key "
    "(the operator sets it: PUT /api/keys/{key_id}/macro-access)"
)
INFLATION_TARGET = (4.0, 6.0)
PANEL_CODES = (
    "POLICY_RATE",
    "USDJMD",
    "NIR",
    "M2",
    "CPI_YOY",
    "GDP",
    "UNEMPLOYMENT",
    "GDP_GROWTH_EST",
    "GROWTH_OUTLOOK",
)


def week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _clip(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


class Series:
    """One indicator as known before a week: periods oldest first with their rows."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        self.periods = sorted(rows)
        self.rows = rows

    def back(self, steps: int) -> dict[str, Any] | None:
        """The row `steps` periods before the latest (0: the latest)."""
        return self.rows[self.periods[-1 - steps]] if len(self.periods) > steps else None


def known_before(all_rows: list[dict[str, Any]], week: date) -> dict[str, Series]:
    seen = vintage(r for r in all_rows if r["release_date"] < week)
    by_code: dict[str, dict[str, dict]] = {}
    for (_, code, period), row in seen.items():
        by_code.setdefault(code, {})[period] = row
    return {code: Series(rows) for code, rows in by_code.items()}


def all_observations(conn: Connection) -> list[dict[str, Any]]:
    return current_rows(conn, tables.macro_observations)


def panel(all_rows: list[dict[str, Any]], weeks: list[date]) -> pd.DataFrame:
    """Week x indicator: each indicator's latest value as known before the week's Monday."""
    records = []
    for week in weeks:
        known = known_before(all_rows, week)
        records.append(
            {
                "week_start": week,
                **{code: (known[code].back(0) or {}).get("value") if code in known else None for code in PANEL_CODES},
            }
        )
    return pd.DataFrame.from_records(records).set_index("week_start")


def _input(series: dict[str, Series], code: str, steps: int = 0) -> dict[str, Any] | None:
    row = series[code].back(steps) if code in series else None
    if row is None:
        return None
    return {
        "value": row["value"],
        "source": row["source"],
        "indicator_code": code,
        "period": row["period"],
        "release_date": row["release_date"].isoformat(),
    }


def _rates_regime(s: dict[str, Series]) -> tuple[dict[str, Any], Callable[[dict], tuple[float, str]]]:
    inputs = {
        "policy_rate": _input(s, "POLICY_RATE"),
        "policy_rate_6m_before": _input(s, "POLICY_RATE", 6),
        "m2": _input(s, "M2"),
        "m2_12m_before": _input(s, "M2", 12),
    }

    def score(i: dict) -> tuple[float, str]:
        change = i["policy_rate"]["value"] - i["policy_rate_6m_before"]["value"]
        growth = (i["m2"]["value"] / i["m2_12m_before"]["value"] - 1) * 100
        value = round(0.6 * _clip(change / 1.0) + 0.4 * _clip((8 - growth) / 8), 4)
        regime = "TIGHTENING" if value > 0.25 else "EASING" if value < -0.25 else "NEUTRAL"
        return value, (
            f"{regime}: the policy rate moved {change:+.2f} pp in six months to {i['policy_rate']['value']:.2f}%, "
            f"and broad money grew {growth:.1f}% in a year"
        )

    return inputs, score


def _fx_pressure(s: dict[str, Series]) -> tuple[dict[str, Any], Callable[[dict], tuple[float, str]]]:
    inputs = {
        "usdjmd": _input(s, "USDJMD"),
        "usdjmd_3m_before": _input(s, "USDJMD", 3),
        "reserves": _input(s, "NIR"),
        "reserves_3m_before": _input(s, "NIR", 3),
    }

    def score(i: dict) -> tuple[float, str]:
        depreciation = (i["usdjmd"]["value"] / i["usdjmd_3m_before"]["value"] - 1) * 400
        reserves = (i["reserves"]["value"] / i["reserves_3m_before"]["value"] - 1) * 100
        value = round(0.6 * _clip(depreciation / 10) + 0.4 * _clip(-reserves / 5), 4)
        level = "HIGH" if value > 0.33 else "LOW" if value < -0.33 else "MODERATE"
        return value, (
            f"{level}: the JMD lost {depreciation:.1f}% a year against the USD over three months "
            f"(to {i['usdjmd']['value']:.2f}), and reserves changed {reserves:+.1f}% to "
            f"USD {i['reserves']['value']:,.0f} million"
        )

    return inputs, score


def _macro_risk(s: dict[str, Series]) -> tuple[dict[str, Any], Callable[[dict], tuple[float, str]]]:
    inputs = {
        "inflation": _input(s, "CPI_YOY"),
        "growth_estimate": _input(s, "GDP_GROWTH_EST"),
        "growth_outlook": _input(s, "GROWTH_OUTLOOK"),
        "unemployment": _input(s, "UNEMPLOYMENT"),
        "unemployment_4q_before": _input(s, "UNEMPLOYMENT", 4),
    }

    def score(i: dict) -> tuple[float, str]:
        inflation = i["inflation"]["value"]
        gap = max(0.0, inflation - INFLATION_TARGET[1]) + max(0.0, INFLATION_TARGET[0] - inflation)
        growth, outlook = i["growth_estimate"]["value"], i["growth_outlook"]["value"]
        jobs = i["unemployment"]["value"] - i["unemployment_4q_before"]["value"]
        value = round(_clip(40 + 8 * gap - 5 * growth - 3 * outlook + 6 * jobs, 0, 100), 2)
        level = "HIGH" if value > 60 else "LOW" if value < 35 else "ELEVATED"
        return value, (
            f"{level}: inflation {inflation:.1f}% ({gap:.1f} pp outside the 4-6% target), growth "
            f"estimated at {growth:+.1f}% with {outlook:+.1f}% projected, unemployment {jobs:+.1f} pp in a year"
        )

    return inputs, score


PARAMETERS = {"rates_regime": _rates_regime, "fx_pressure": _fx_pressure, "macro_risk": _macro_risk}


def parameters(all_rows: list[dict[str, Any]], week: date) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The week's parameter rows, and for each parameter left out, its missing inputs."""
    series = known_before(all_rows, week)
    rows, missing = [], {}
    for name, build in PARAMETERS.items():
        inputs, score = build(series)
        absent = [k for k, v in inputs.items() if v is None]
        if absent:
            missing[name] = absent
            continue
        value, reading = score(inputs)
        rows.append(
            {
                "week_start": week,
                "parameter": name,
                "value": value,
                "reading": reading,
                "inputs": inputs,
                "model_version": MODEL_VERSION,
            }
        )
    return rows, missing


def stored_parameters(conn: Connection, week: date | None = None) -> list[dict[str, Any]]:
    """The parameters of `week`, or of the latest week that has any."""
    rows = current_rows(conn, tables.macro_parameters)
    if not rows:
        return []
    chosen = week or max(r["week_start"] for r in rows)
    return sorted((r for r in rows if r["week_start"] == chosen), key=lambda r: list(PARAMETERS).index(r["parameter"]))


def insights(conn: Connection) -> dict[str, Any]:
    """The latest week's macro parameters with the three sources they draw on."""
    rows = stored_parameters(conn)
    if not rows:
        raise NotReadyError("no macro parameters yet: T3 (`marketintel stage t3_macro`, Mondays 09:00) has not run")
    latest: dict[str, date] = {}
    for row in rows:
        for used in row["inputs"].values():
            day = date.fromisoformat(used["release_date"])
            latest[used["source"]] = max(latest.get(used["source"], day), day)
    return {
        "generation": GENERATION,
        "week_start": rows[0]["week_start"],
        "model_version": rows[0]["model_version"],
        "parameters": [{k: r[k] for k in ("parameter", "value", "reading", "inputs")} for r in rows],
        "sources": [
            {"code": s.code, "name": s.name, "role": s.role, "latest_release": latest.get(s.code)}
            for s in SOURCES.values()
        ],
    }
