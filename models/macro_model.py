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
input is missing. Nor is one with a level its change is measured by as a ratio (`LEVELS`:
M2, the USD rate, reserves) published at 0 or below (a placeholder, a typo): the ratio
would divide by zero or flip its sign; the stage names that input with its value and
period, and the week's other parameters are stored.

Pure: the callers read the stored rows (T3's stage, pipeline/macro_stage.py; the desk's
insights) and pass them in (`observations`, `latest_parameters`); nothing here opens a
connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import date, timedelta
from typing import TypedDict, TypeVar

import pandas as pd

from market.errors import NotReadyError
from market.macro_catalogue import GENERATION, SOURCES

MODEL_VERSION = "macro-v1"
INSIGHTS_REFUSAL = (
    "macro insights need a PRO or INSTITUTIONAL key, or macro access switched on for this key "
    "(the operator sets it: PUT /api/keys/{key_id}/macro-access)"
)
INSIGHTS_SWITCHED_OFF = (  # a key whose tier would allow them: "need a PRO key" told a PRO key nothing
    "macro insights are switched off for this key, whatever its tier "
    "(the operator switched it: PUT /api/keys/{key_id}/macro-access)"
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


_Row = TypeVar("_Row")


def _of_row(cls: type[_Row], row: Mapping[str, object]) -> _Row:
    """A dataclass of a stored row: each field the row's column of the same name."""
    return cls(**{f.name: row[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class Observation:
    """One stored release of an indicator's value for a period (a `macro_observations` row;
    a revision is a later release of the same period)."""

    id: int  # the row's id: of two releases on one day, the later stored wins
    source: str
    indicator_code: str
    period: str
    value: float
    release_date: date

    @classmethod
    def of(cls, row: Mapping[str, object]) -> Observation:
        return _of_row(cls, row)


class ParameterInput(TypedDict):
    """One input of a parameter as the `inputs` JSON document of `macro_parameters` keeps it."""

    value: float
    source: str
    indicator_code: str
    period: str
    release_date: str  # ISO 8601


@dataclass(frozen=True)
class MacroParameter:
    """A week's parameter with its reading and inputs (a `macro_parameters` row)."""

    week_start: date
    parameter: str  # rates_regime, fx_pressure or macro_risk
    value: float
    reading: str
    inputs: dict[str, ParameterInput]
    model_version: str

    @classmethod
    def of(cls, row: Mapping[str, object]) -> MacroParameter:
        return _of_row(cls, row)


@dataclass(frozen=True)
class ParameterReading:
    """A parameter as the insights show it."""

    parameter: str
    value: float
    reading: str
    inputs: dict[str, ParameterInput]


@dataclass(frozen=True)
class SourceRelease:
    """A national source and its latest release the parameters use (None: none used)."""

    code: str
    name: str
    role: str
    latest_release: date | None


@dataclass(frozen=True)
class MacroInsights:
    """The latest week's parameters with the sources they draw on."""

    generation: str
    week_start: date
    model_version: str
    parameters: list[ParameterReading]
    sources: list[SourceRelease]


class Series:
    """One indicator as known before a week: periods oldest first with their releases."""

    def __init__(self, rows: dict[str, Observation]) -> None:
        self.periods = sorted(rows)
        self.rows = rows

    def back(self, steps: int) -> Observation | None:
        """The release of the period `steps` months (a quarterly series: quarters) before
        the latest (0: the latest), None when that period is not known. By the calendar,
        not by the periods listed: a period the source never published (a skipped survey)
        would otherwise make "six months before" the seventh, and a reading's "in six
        months" false; such a parameter is left out, naming its missing input."""
        return self.rows.get(shifted(self.periods[-1], steps)) if self.periods else None


def shifted(period: str, steps: int) -> str:
    """The period `steps` periods before `period` (`YYYY-MM`, or `YYYY-Qn`: quarters)."""
    year, part = period.split("-")
    if part.startswith("Q"):
        index = int(year) * 4 + int(part[1:]) - 1 - steps
        return f"{index // 4}-Q{index % 4 + 1}"
    index = int(year) * 12 + int(part) - 1 - steps
    return f"{index // 12}-{index % 12 + 1:02d}"


def latest_releases(observations: Iterable[Observation]) -> dict[tuple[str, str, str], Observation]:
    """(source, code, period) -> its latest release among `observations` (by release date,
    then id: market.macro_catalogue.vintage's rule, on typed observations)."""
    latest: dict[tuple[str, str, str], Observation] = {}
    for o in observations:
        key = (o.source, o.indicator_code, o.period)
        held = latest.get(key)
        if held is None or (o.release_date, o.id) > (held.release_date, held.id):
            latest[key] = o
    return latest


def known_before(observations: list[Observation], week: date) -> dict[str, Series]:
    seen = latest_releases(o for o in observations if o.release_date < week)
    by_code: dict[str, dict[str, Observation]] = {}
    for (_, code, period), row in seen.items():
        by_code.setdefault(code, {})[period] = row
    return {code: Series(rows) for code, rows in by_code.items()}


def observations(rows: Iterable[Mapping[str, object]]) -> list[Observation]:
    """The stored `macro_observations` rows as observations."""
    return [Observation.of(r) for r in rows]


def panel(weeks: Mapping[date, list[Observation]]) -> pd.DataFrame:
    """Week x indicator: each indicator's latest value as known before the week's Monday,
    among the observations given for that week (its vintage: pipeline/macro_stage.py)."""
    records = []
    for week, observations in weeks.items():
        known = known_before(observations, week)
        records.append({"week_start": week, **{code: _latest_value(known, code) for code in PANEL_CODES}})
    return pd.DataFrame.from_records(records).set_index("week_start")


def _latest_value(known: dict[str, Series], code: str) -> float | None:
    latest = known[code].back(0) if code in known else None
    return None if latest is None else latest.value


def _input(series: dict[str, Series], code: str, steps: int = 0) -> ParameterInput | None:
    row = series[code].back(steps) if code in series else None
    if row is None:
        return None
    return {
        "value": row.value,
        "source": row.source,
        "indicator_code": code,
        "period": row.period,
        "release_date": row.release_date.isoformat(),
    }


Inputs = dict[str, ParameterInput | None]
LEVELS = frozenset(  # the inputs a parameter takes a ratio of: a level at 0 or below gives no change
    {"m2", "m2_12m_before", "usdjmd", "usdjmd_3m_before", "reserves", "reserves_3m_before"}
)
Score = Callable[[dict[str, ParameterInput]], tuple[float, str]]


def _rates_regime(s: dict[str, Series]) -> tuple[Inputs, Score]:
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


def _fx_pressure(s: dict[str, Series]) -> tuple[Inputs, Score]:
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


def _macro_risk(s: dict[str, Series]) -> tuple[Inputs, Score]:
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


def parameters(observations: list[Observation], week: date) -> tuple[list[MacroParameter], dict[str, list[str]]]:
    """The week's parameters, and for each parameter left out, its missing inputs."""
    series = known_before(observations, week)
    rows: list[MacroParameter] = []
    missing: dict[str, list[str]] = {}
    for name, build in PARAMETERS.items():
        inputs, score = build(series)
        absent = [k for k, v in inputs.items() if v is None] + _unusable(inputs)
        if absent:
            missing[name] = absent
            continue
        known = {k: v for k, v in inputs.items() if v is not None}
        value, reading = score(known)
        rows.append(MacroParameter(week, name, value, reading, known, MODEL_VERSION))
    return rows, missing


def _unusable(inputs: Inputs) -> list[str]:
    """The `LEVELS` among `inputs` published at 0 or below, each named with its value and period."""
    return [
        f"{name} ({i['value']} for {i['period']}: no change is measured from a level at 0 or below)"
        for name, i in inputs.items()
        if name in LEVELS and i is not None and i["value"] <= 0
    ]


def latest_parameters(stored: Iterable[Mapping[str, object]], today: date) -> list[MacroParameter]:
    """The parameters of the latest week starting on or before `today` that has any, among
    the stored `macro_parameters` rows. A week's parameters are built on the releases dated
    before its Monday (`known_before`), so these draw only on releases known on `today`; a
    week T3 computed ahead of `today` (a replay's or a re-run's T3) is not served before it
    starts."""
    rows = [r for r in (MacroParameter.of(r) for r in stored) if r.week_start <= today]
    if not rows:
        return []
    chosen = max(r.week_start for r in rows)
    return sorted((r for r in rows if r.week_start == chosen), key=lambda r: list(PARAMETERS).index(r.parameter))


def insights(rows: list[MacroParameter]) -> MacroInsights:
    """The week's macro parameters (`latest_parameters`) with the three sources they draw on."""
    if not rows:
        raise NotReadyError(
            "no macro parameters yet for a week that has started: T3 (`marketintel stage t3_macro`, Mondays 09:00) "
            "has not run"
        )
    latest: dict[str, date] = {}
    for row in rows:
        for used in row.inputs.values():
            day = date.fromisoformat(used["release_date"])
            latest[used["source"]] = max(latest.get(used["source"], day), day)
    return MacroInsights(
        generation=GENERATION,
        week_start=rows[0].week_start,
        model_version=rows[0].model_version,
        parameters=[ParameterReading(r.parameter, r.value, r.reading, r.inputs) for r in rows],
        sources=[SourceRelease(s.code, s.name, s.role, latest.get(s.code)) for s in SOURCES.values()],
    )
