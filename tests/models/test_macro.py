"""Currency normalisation with hand-computed conversions, and the macro model's parameters
on hand-set releases (including what a Monday may and may not see)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine

from market.errors import InvalidInputError
from market.settings import Settings
from models import macro_model
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from views.macro import indicators

UNITS = {
    "USDJMD": ("fx", "JMD per USD", None),
    "GBPJMD": ("fx", "JMD per GBP", None),
    "NIR": ("reserves", "USD millions", "USD"),
    "M2": ("money", "JMD millions", "JMD"),
    "GDP": ("output", "JMD millions", "JMD"),
    "POLICY_RATE": ("rates", "percent", None),
    "CPI_YOY": ("prices", "percent", None),
    "UNEMPLOYMENT": ("labour", "percent", None),
    "GDP_GROWTH_EST": ("output", "percent", None),
    "GROWTH_OUTLOOK": ("outlook", "percent", None),
}
SOURCE = {
    "GDP": "STATIN",
    "CPI_YOY": "STATIN",
    "UNEMPLOYMENT": "STATIN",
    "GDP_GROWTH_EST": "PIOJ",
    "GROWTH_OUTLOOK": "PIOJ",
}


def _store(engine: Engine, releases: list[tuple[str, str, float, date]], recorded_at: datetime | None = None) -> None:
    rows = []
    for code, period, value, released in releases:
        category, unit, currency = UNITS[code]
        rows.append(
            {
                "source": SOURCE.get(code, "BOJ"),
                "category": category,
                "indicator_code": code,
                "period": period,
                "frequency": "Q" if "Q" in period else "M",
                "value": value,
                "unit": unit,
                "currency": currency,
                "release_date": released,
            }
        )
    with engine.begin() as conn:
        append_history(conn, tables.macro_observations, rows, recorded_at=recorded_at)


@pytest.fixture
def engine(settings: Settings) -> Engine:
    engine = service_engine(settings)
    _store(
        engine,
        [
            ("USDJMD", "2026-07", 150.0, date(2026, 8, 3)),
            ("USDJMD", "2026-08", 152.0, date(2026, 9, 3)),
            ("USDJMD", "2026-09", 154.0, date(2026, 10, 5)),
            ("GBPJMD", "2026-09", 200.0, date(2026, 10, 5)),
            ("GDP", "2026-Q3", 300_000.0, date(2026, 12, 1)),
            ("NIR", "2026-09", 5_000.0, date(2026, 10, 8)),
            ("M2", "2026-10", 1_000_000.0, date(2026, 12, 15)),
            ("POLICY_RATE", "2026-09", 7.0, date(2026, 10, 5)),
        ],
    )
    return engine


def _by_code(engine: Engine, **filters) -> dict[str, dict]:
    with engine.connect() as conn:
        return {i["indicator_code"]: i for i in indicators(conn, **filters)["indicators"]}


def test_conversions_by_hand(engine: Engine) -> None:
    usd = _by_code(engine, currency="usd")
    # GDP 2026-Q3 in JMD / mean(150, 152, 154) JMD per USD
    assert usd["GDP"]["value"] == pytest.approx(300_000 / 152, abs=1e-6) and usd["GDP"]["currency"] == "USD"
    assert usd["GDP"]["unit"] == "USD millions" and usd["GDP"]["original"] == {
        "value": 300_000.0,
        "currency": "JMD",
        "unit": "JMD millions",
    }
    assert [(f["pair"], f["periods"], f["rate"]) for f in usd["GDP"]["fx"]] == [
        ("USDJMD", ["2026-07", "2026-08", "2026-09"], 152.0)
    ]
    assert usd["NIR"]["value"] == 5_000.0 and usd["NIR"]["fx"] == []  # already in USD
    assert usd["POLICY_RATE"]["value"] == 7.0 and usd["POLICY_RATE"]["currency"] is None  # a rate is never converted

    jmd = _by_code(engine, currency="JMD")
    assert jmd["NIR"]["value"] == pytest.approx(5_000 * 154) and jmd["NIR"]["unit"] == "JMD millions"
    gbp = _by_code(engine, currency="GBP")
    assert gbp["NIR"]["value"] == pytest.approx(5_000 * 154 / 200)  # USD -> JMD -> GBP, both rates of 2026-09
    assert [f["pair"] for f in gbp["NIR"]["fx"]] == ["USDJMD", "GBPJMD"]
    # M2 for 2026-10: no October rate yet, so September's is used and named
    assert gbp["M2"]["value"] == pytest.approx(1_000_000 / 200)
    assert gbp["M2"]["fx"][0]["note"] == "the 2026-10 rate is not published yet; the 2026-09 rate is used"


def test_point_in_time_applies_to_the_rates_too(engine: Engine) -> None:
    _store(engine, [("GDP", "2026-Q2", 290_000.0, date(2026, 9, 8)), ("USDJMD", "2026-05", 149.0, date(2026, 6, 3))])
    # As of 2026-09-10 the Q2 GDP is the latest, and of its months only May has a rate.
    early = _by_code(engine, currency="USD", as_of=date(2026, 9, 10))
    assert early["GDP"]["period"] == "2026-Q2" and "GBPJMD" not in early and "NIR" not in early
    assert early["GDP"]["value"] == pytest.approx(290_000 / 149)
    assert early["GDP"]["fx"][0]["note"] == "only 2026-05 of 2026-Q2 are published; their mean is used"
    # As of 2026-06-01 not even May's rate is out: no rate at or before Q2, so no conversion, and it says so.
    none = _by_code(engine, currency="USD", as_of=date(2026, 6, 1))
    assert "GDP" not in none and none == {}
    _store(engine, [("GDP", "2026-Q1", 280_000.0, date(2026, 5, 29))])
    unconverted = _by_code(engine, currency="USD", as_of=date(2026, 6, 1))["GDP"]
    assert (unconverted["value"], unconverted["currency"]) == (280_000.0, "JMD")
    assert unconverted["note"] == "no USDJMD rate is published for 2026-Q1 or earlier; not converted"


def test_unknown_or_malformed_currency_is_refused(engine: Engine) -> None:
    for code, message in (
        ("XYZ", "unknown currency code 'XYZ'; FX rates exist for GBP, JMD, USD"),
        ("CHF", "unknown currency code 'CHF'"),
        ("usdollar", "not a three-letter ISO 4217 code"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            _by_code(engine, currency=code)
    with pytest.raises(InvalidInputError, match="unknown source 'IMF'"):
        _by_code(engine, source="IMF")
    with pytest.raises(InvalidInputError, match="unknown category 'weather'"):
        _by_code(engine, category="weather")


def _monthly(code: str, values: list[float], first_month: int = 1, release_day: int = 5) -> list[tuple]:
    return [
        (code, f"2026-{first_month + i:02d}", v, date(2026, first_month + i + 1, release_day))
        for i, v in enumerate(values)
    ]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_parameters_by_hand_and_only_from_releases_before_the_monday(settings: Settings) -> None:
    engine = service_engine(settings)
    # policy rate: 6.0 in Jan-Mar, then 7.0; broad money flat for a year (0% growth); the JMD 2% weaker over three
    # months; reserves 10% lower; inflation 8%, growth -1%, outlook 0%, unemployment up 1 pp in four quarters.
    _store(
        engine,
        _monthly("POLICY_RATE", [6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0])
        + [("M2", f"2025-{m:02d}", 1_000.0, date(2025, m, 20) if m < 12 else date(2025, 12, 20)) for m in range(1, 13)]
        + _monthly("M2", [1_000.0] * 10, release_day=20)
        + _monthly("USDJMD", [150.0] * 7 + [151.0, 152.0, 153.0])
        + _monthly("NIR", [5_000.0] * 7 + [4_800.0, 4_700.0, 4_500.0])
        + [
            ("CPI_YOY", "2026-10", 8.0, date(2026, 11, 13)),
            ("GDP_GROWTH_EST", "2026-Q3", -1.0, date(2026, 10, 20)),
            ("GROWTH_OUTLOOK", "2026-Q4", 0.0, date(2026, 10, 20)),
        ]
        + [
            ("UNEMPLOYMENT", f"{y}-Q{q}", u, date(y, 3 * q, 28) if q < 4 else date(y, 12, 28))
            for (y, q), u in zip([(2025, 3), (2025, 4), (2026, 1), (2026, 2), (2026, 3)], [5.0, 5.2, 5.5, 5.8, 6.0])
        ],
    )
    with engine.connect() as conn:
        everything = macro_model.observations(current_rows(conn, tables.macro_observations))
    rows, missing = macro_model.parameters(everything, date(2026, 11, 16))
    values = {r.parameter: r for r in rows}
    assert missing == {}
    # rates: policy 7.0 vs 6.0 six months before (+1 pp -> 1), M2 growth 0% -> (8 - 0) / 8 = 1
    assert values["rates_regime"].value == 1.0 and values["rates_regime"].reading.startswith("TIGHTENING")
    # fx: (153/150 - 1) x 400 = 8% a year -> 0.8; reserves 4500/5000 - 1 = -10% -> clip(2) = 1
    assert values["fx_pressure"].value == pytest.approx(0.6 * 0.8 + 0.4 * 1.0, abs=1e-4)
    assert values["fx_pressure"].inputs["usdjmd"] == {
        "value": 153.0,
        "source": "BOJ",
        "indicator_code": "USDJMD",
        "period": "2026-10",
        "release_date": "2026-11-05",
    }
    # risk: 40 + 8 x 2 (8% is 2 pp above 6%) - 5 x (-1) - 3 x 0 + 6 x (6.0 - 5.0) = 67 -> HIGH
    assert values["macro_risk"].value == 67.0 and values["macro_risk"].reading.startswith("HIGH")

    # A week that starts on the day of the October releases has not seen them yet.
    early, early_missing = macro_model.parameters(everything, date(2026, 11, 2))
    early_values = {r.parameter: r.value for r in early}
    assert early_values["fx_pressure"] == pytest.approx(0.6 * ((152 / 150 - 1) * 400 / 10) + 0.4 * 1.0, abs=1e-4)
    assert early_missing == {"macro_risk": ["inflation"]}  # CPI for October comes on 2026-11-13


def test_a_release_corrected_in_place_leaves_what_a_past_date_read_served(settings: Settings) -> None:
    """The source re-publishes a release (same period, same release date) with another value:
    a read as of a day before the store recorded the correction still serves the value known
    then, however late the store loaded the release; from the day the correction is recorded
    (the exchange's day, Kingston), and without `as_of`, the correction is served."""
    engine = service_engine(settings)
    release = [("NIR", "2026-09", 5409.7, date(2026, 10, 8))]
    _store(engine, release, recorded_at=datetime(2026, 11, 20, 14, tzinfo=UTC))  # loaded after its release date
    corrected = [("NIR", "2026-09", 5909.7, date(2026, 10, 8))]
    _store(engine, corrected, recorded_at=datetime(2026, 11, 26, 3, tzinfo=UTC))  # 22:00 on the 25th in Kingston

    def served(as_of: date | None) -> float:
        with engine.connect() as conn:
            (item,) = indicators(conn, category="reserves", as_of=as_of, today=date(2026, 11, 30))["indicators"]
        return item["value"]

    assert served(date(2026, 10, 8)) == 5409.7  # known from its release date, though loaded in November
    assert served(date(2026, 11, 24)) == 5409.7  # the correction was not known yet
    assert served(date(2026, 11, 25)) == 5909.7  # known by the end of that day in Kingston
    assert served(None) == 5909.7


def _released(code: str, source: str, values: dict[str, float]) -> list[macro_model.Observation]:
    return [
        macro_model.Observation(i, source, code, period, value, date(2026, 10, 1))
        for i, (period, value) in enumerate(values.items())
    ]


def test_a_change_over_six_months_or_a_year_reads_those_periods_not_the_sixth_one_listed() -> None:
    """A month the source never published (a survey skipped, a series with a gap) shifted
    every earlier period by one: "the policy rate moved +1.00 pp in six months" read the rate
    of seven months before, and "broad money grew 8.0% in a year" thirteen months. The
    input is the period that many months (quarters) before the latest; where that period
    is not published the parameter is not stored and its missing input is named."""
    months = [f"2025-{m:02d}" for m in range(1, 13)] + [f"2026-{m:02d}" for m in range(1, 10)]
    rate = {p: 7.0 + 0.25 * i for i, p in enumerate(months) if p != "2026-05"}  # 2026-05 never published
    m2 = {p: 1000.0 + 10 * i for i, p in enumerate(months)}
    observations = _released("POLICY_RATE", "BOJ", rate) + _released("M2", "BOJ", m2)
    rows, missing = macro_model.parameters(observations, date(2026, 11, 2))
    (regime,) = [r for r in rows if r.parameter == "rates_regime"]
    assert regime.inputs["policy_rate"]["period"] == "2026-09"
    assert regime.inputs["policy_rate_6m_before"]["period"] == "2026-03"
    assert regime.inputs["m2_12m_before"]["period"] == "2025-09"
    assert "moved +1.50 pp in six months" in regime.reading
    gap = {p: v for p, v in rate.items() if p != "2026-03"}  # the month six before the latest is not out
    rows, missing = macro_model.parameters(
        _released("POLICY_RATE", "BOJ", gap) + _released("M2", "BOJ", m2), date(2026, 11, 2)
    )
    assert "rates_regime" not in {r.parameter for r in rows}
    assert missing["rates_regime"] == ["policy_rate_6m_before"]


def test_a_rate_published_at_0_or_below_converts_nothing_and_says_so(engine: Engine) -> None:
    """A GBPJMD rate of 0 for a month (a placeholder, a typo) answered every `currency=GBP`
    read with a 500 (0 to the power -1), and a USDJMD rate of 0 showed reserves of JMD 0 as
    if converted; a negative one, negative reserves. Such a value is not a rate: nothing is
    converted with it, and the note says which rate of which month it was."""
    _store(engine, [("GBPJMD", "2026-09", 0.0, date(2026, 12, 1)), ("USDJMD", "2026-09", -154.0, date(2026, 12, 1))])
    for currency, code, shown, pair, rate in (
        ("GBP", "GDP", (300_000.0, "JMD"), "GBPJMD", 0.0),
        ("JMD", "NIR", (5_000.0, "USD"), "USDJMD", -154.0),
    ):
        item = _by_code(engine, currency=currency)[code]
        assert ((item["value"], item["currency"]), item["original"], item["fx"]) == (shown, None, [])
        assert item["note"] == f"the {pair} rate published for 2026-09 is {rate}, not a rate; not converted"
    assert _by_code(engine, currency="GBP", as_of=date(2026, 11, 30))["NIR"]["value"] == pytest.approx(
        5_000 * 154 / 200
    )
