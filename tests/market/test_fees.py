"""The exchange's fee schedule (issue 55, item 3): statutory levies plus a stated brokerage
rate per side, the retail rate beside the default, chosen by settings."""

from __future__ import annotations

from decimal import Decimal

import pytest

from market.costs import Session, affordable, fill
from market.errors import ConfigurationError
from market.fees import (
    JSE,
    NSE,
    NSE_FEES,
    NSE_LEVIES,
    NSE_RETAIL_FEES,
    SCHEDULES,
    FeeSchedule,
    Levy,
    fee_schedule,
    market_fees,
)
from market.settings import Settings


def test_the_nse_levies_sum_to_the_documented_033_percent_a_side() -> None:
    assert {levy.name: levy.rate for levy in NSE_LEVIES} == {
        "NSE transaction levy": Decimal("0.0012"),
        "CMA levy": Decimal("0.0012"),
        "CDSC levy": Decimal("0.0008"),
        "Investor Compensation Fund": Decimal("0.0001"),
    }
    assert NSE.levy_rate == NSE_FEES.levy_rate == Decimal("0.0033")
    assert JSE.levy_rate == Decimal("0.0035")  # JSE cess 0.32% + JCSD 0.03%
    # the professional default and the retail rate beside it, as docs/portfolio.md states them
    assert (NSE_FEES.brokerage, NSE_FEES.rate) == (Decimal("0.005"), Decimal("0.0083"))
    assert (NSE_RETAIL_FEES.brokerage, NSE_RETAIL_FEES.rate) == (Decimal("0.014"), Decimal("0.0173"))
    assert NSE_RETAIL_FEES.levies == NSE_FEES.levies and set(SCHEDULES) == {"jse", "nse"}


def test_the_fee_is_each_levy_plus_brokerage_in_cents() -> None:
    parts = NSE_FEES.breakdown(Decimal("1000000"))
    assert dict(parts.levies) == {
        "NSE transaction levy": Decimal("1200.00"),
        "CMA levy": Decimal("1200.00"),
        "CDSC levy": Decimal("800.00"),
        "Investor Compensation Fund": Decimal("100.00"),
    }
    assert (parts.levy_total, parts.brokerage) == (Decimal("3300.00"), Decimal("5000.00"))
    assert NSE_FEES.fee(Decimal("1000000")) == parts.total == Decimal("8300.00")
    assert parts.as_dict()["total"] == "8300.00" and parts.as_dict()["levy_total"] == "3300.00"


def test_the_brokerage_minimum_binds_on_a_small_fill_and_the_levies_stay_proportional() -> None:
    fees = NSE.schedule(brokerage_minimum=Decimal("100"))
    small = fees.breakdown(Decimal("1000"))  # 0.5% would be 5.00
    assert (small.levy_total, small.brokerage, small.total) == (Decimal("3.30"), Decimal("100.00"), Decimal("103.30"))
    assert fees.fee(Decimal("1000")) == Decimal("103.30")
    assert fees.fee(Decimal("100000")) == Decimal("330.00") + Decimal("500.00")  # above the minimum: the rate


def test_the_floor_on_the_whole_charge_tops_up_the_brokerage_line() -> None:
    fees = FeeSchedule(Decimal("0.005"), Decimal("25"), (Levy("levy", Decimal("0.001")),))
    parts = fees.breakdown(Decimal("1000"))
    assert (dict(parts.levies)["levy"], parts.brokerage, parts.total) == (
        Decimal("1.00"),
        Decimal("24.00"),
        Decimal("25.00"),
    )


def test_the_old_two_argument_schedule_still_means_a_flat_rate_and_floor() -> None:
    flat = FeeSchedule(Decimal("0.01"), Decimal("2"))
    assert flat.rate == Decimal("0.01") and float(flat.rate) == 0.01 and flat.levies == ()
    assert flat.fee(Decimal("1000")) == Decimal("10.00") and flat.fee(Decimal("10")) == Decimal("2.00")
    assert FeeSchedule().rate == Decimal("0.005")


def test_a_fill_pays_the_schedule_and_affordable_leaves_room_for_the_minimum() -> None:
    fees = NSE.schedule(brokerage_minimum=Decimal("100"))
    session = Session(close=10.0, volume=40_000, adv_20=40_000.0, bid=9.9, ask=10.1, high=10.3, low=9.8)
    done = fill("BUY", 1_000, session, fees)
    assert done.fee == fees.fee(done.gross) == fees.breakdown(done.gross).total
    cash = Decimal("1500")
    quantity = affordable(cash, Decimal("10"), fees)
    assert (
        quantity * 10 + fees.fee(Decimal(quantity * 10))
        <= cash
        < (quantity + 1) * 10 + fees.fee(Decimal((quantity + 1) * 10))
    )


def test_settings_pick_the_schedule_and_the_overrides_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    default = fee_schedule(Settings(_env_file=None))
    assert default.levies == JSE.levies and default.rate == Decimal("0.0085") and default.name == "jse"
    assert fee_schedule(Settings(_env_file=None), retail=True).rate == Decimal("0.0175")

    monkeypatch.setenv("MARKETINTEL_FEE_SCHEDULE", "NSE")
    monkeypatch.setenv("MARKETINTEL_BROKERAGE_FEE_RATE", "0.002")
    monkeypatch.setenv("MARKETINTEL_BROKERAGE_MIN_FEE", "50")
    settings = Settings(_env_file=None)
    fees = fee_schedule(settings)
    assert settings.fee_schedule == "nse" and fees.levies == NSE_LEVIES
    assert (fees.brokerage, fees.rate, fees.brokerage_minimum) == (Decimal("0.002"), Decimal("0.0053"), Decimal("50"))
    retail = fee_schedule(settings, retail=True)
    assert (retail.brokerage, retail.brokerage_minimum) == (NSE.retail_brokerage, Decimal("50"))

    monkeypatch.setenv("MARKETINTEL_RETAIL_BROKERAGE_FEE_RATE", "0.012")
    assert fee_schedule(Settings(_env_file=None), retail=True).rate == Decimal("0.0153")


def test_the_ai_portfolio_charges_the_settings_schedule() -> None:
    from portfolio.ai import fee_schedule as ai_fee_schedule

    settings = Settings(_env_file=None, fee_schedule="nse")
    assert ai_fee_schedule(settings) == fee_schedule(settings) == NSE_FEES


def test_an_unknown_schedule_is_a_configuration_error_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARKETINTEL_FEE_SCHEDULE", "lse")
    with pytest.raises(ConfigurationError, match=r"MARKETINTEL_FEE_SCHEDULE='lse' .*expected one of: jse, nse"):
        Settings(_env_file=None)


# ---- any market's fees: a fee file (issue 66, item 3) ----------------------------------------
GHANA = """
market = "Ghana Stock Exchange"
brokerage = 0.004
retail_brokerage = 0.015
brokerage_minimum = 20
[levies]
"GSE levy" = 0.0035
"SEC levy" = 0.0015
"""


def test_a_fee_file_charges_exactly_its_schedule_in_the_backtest_the_executor_and_the_suggestions(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from decimal import ROUND_HALF_UP

    from portfolio.ai import fee_schedule as ai_fee_schedule

    path = tmp_path / "gse.toml"
    path.write_text(GHANA)
    monkeypatch.setenv("MARKETINTEL_FEE_SCHEDULE", str(path))
    settings = Settings(_env_file=None)
    charged = fee_schedule(settings)
    # the service (executor and suggestions read portfolio.ai.fee_schedule) and the backtest's
    # --fees PATH (market_fees(path).schedule()) build the same schedule from the file
    assert ai_fee_schedule(settings) == charged == market_fees(str(path)).schedule()
    cent = Decimal("0.01")
    for gross in (Decimal("1000000"), Decimal("12345.67"), Decimal("1000")):
        levies = [(gross * Decimal(r)).quantize(cent, ROUND_HALF_UP) for r in ("0.0035", "0.0015")]
        brokerage = max(Decimal("20"), (gross * Decimal("0.004")).quantize(cent, ROUND_HALF_UP))
        assert charged.fee(gross) == sum(levies) + brokerage
    assert charged.fee(Decimal("1000")) == Decimal("3.50") + Decimal("1.50") + Decimal("20.00")  # the minimum binds
    assert charged.rate == Decimal("0.009") and charged.name == "gse"
    session = Session(close=10.0, volume=40_000, adv_20=40_000.0, bid=9.9, ask=10.1, high=10.3, low=9.8)
    done = fill("BUY", 1_000, session, charged)
    assert done.fee == charged.fee(done.gross)
    retail = fee_schedule(settings, retail=True)
    assert (retail.rate, retail.brokerage_minimum) == (Decimal("0.02"), Decimal("20"))
    # the same schedule as JSON, through the same loader
    (tmp_path / "gse.json").write_text(
        '{"brokerage": 0.004, "retail_brokerage": 0.015, "brokerage_minimum": 20,'
        ' "levies": {"GSE levy": 0.0035, "SEC levy": 0.0015}}'
    )
    assert market_fees(str(tmp_path / "gse.json")).schedule() == charged


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("brokerage = 0.005\n[levies]\n'GSE levy' = 0.35\n", r"levies\.'GSE levy' = 0\.35 is not a rate"),
        ("[levies]\n'GSE levy' = 0.0035\n", r"no brokerage"),
        ("brokerage = 0.005\nbrokrage_minimum = 5\n", r"unknown keys brokrage_minimum"),
        ("brokerage = '0.5%'\n", r"brokerage = '0\.5%' is not a number"),
        ("brokerage = 0.005\nminimum = -1\n", r"minimum = -1 is negative"),
        ("brokerage = 0.005\nlevies = 0.003\n", r"levies is not a table"),
        ("brokerage = 0.005\n[levies\n", r"not valid TOML"),
        ("brokerage = 0.005\nbrokerage_minimum = 1e30\n", r"brokerage_minimum = 1e\+30 is not an amount"),
        ("brokerage = 0.005\nminimum = inf\n", r"minimum = inf is not a number"),
        (f"brokerage = 0.005\nminimum = {10**400}\n", r"minimum = 10{19}\.\.\. \(401 characters\) is not an amount"),
        (f"brokerage = {10**400}\n", r"brokerage = 10{400} is not a rate"),
    ],
)
def test_a_bad_fee_file_is_one_line_naming_the_file_and_the_field(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "fees.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=rf"^fee file .*fees\.toml: {says}") as caught:
        market_fees(str(path))
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigurationError, match=r"^MARKETINTEL_FEE_SCHEDULE=.*fees\.toml"):
        Settings(_env_file=None, fee_schedule=str(path))
    with pytest.raises(ConfigurationError, match=r"no such file"):
        Settings(_env_file=None, fee_schedule=str(tmp_path / "missing.json"))


def test_fees_no_longer_imports_the_settings() -> None:
    """market/fees.py and market/settings.py imported each other (issue 67): the fee
    schedule reads any object with the fee settings, so only settings imports fees."""
    import ast
    from pathlib import Path

    import market.fees

    tree = ast.parse(Path(market.fees.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "market.settings" not in imported


def test_a_json_fee_file_with_a_huge_minimum_is_one_line_naming_it(tmp_path) -> None:
    """JSON's integers have no bound: 10**400 raised OverflowError (a traceback from
    `marketintel db status`), not the loader's one line."""
    path = tmp_path / "huge.json"
    path.write_text(f'{{"brokerage": 0.005, "minimum": {10**400}}}')
    with pytest.raises(
        ConfigurationError, match=r"^fee file .*huge\.json: minimum = 10{19}\.\.\. \(401 characters\) is not an amount"
    ):
        market_fees(str(path))
    with pytest.raises(ConfigurationError, match=r"^MARKETINTEL_FEE_SCHEDULE=.*huge\.json"):
        Settings(_env_file=None, fee_schedule=str(path))


@pytest.mark.parametrize("minimum", ["inf", "1e30", "1000000000001"])
def test_a_brokerage_minimum_past_the_money_bound_stops_the_settings(monkeypatch: pytest.MonkeyPatch, minimum) -> None:
    """MARKETINTEL_BROKERAGE_MIN_FEE=inf loaded, then every priced request answered 500
    (to_cents of an infinite fee): the one money bound (market.money.MAX_AMOUNT) refuses it
    at load, with one line naming the setting."""
    monkeypatch.setenv("MARKETINTEL_BROKERAGE_MIN_FEE", minimum)
    with pytest.raises(ConfigurationError, match=r"^MARKETINTEL_BROKERAGE_MIN_FEE = .* is not an amount") as caught:
        Settings(_env_file=None)
    assert "\n" not in str(caught.value)
    monkeypatch.setenv("MARKETINTEL_BROKERAGE_MIN_FEE", "1000000000000")
    assert fee_schedule(Settings(_env_file=None)).fee(Decimal(1000)) == Decimal("1000000000003.50")  # the levies too
