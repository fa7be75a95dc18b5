"""Bodies of the portfolio, AI portfolio and suggestion endpoints. Money is decimal text
with the currency's 2 places in every answer (`Money`); quantities are whole shares."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pydantic import ConfigDict, Field

from api.contract import ApiModel, JsonOf
from api.schemas.common import (
    CursorPage,
    Fraction,
    Money,
    MoneyIn,
    Price,
    QuantityIn,
    document,
    example,
    example_of,
    page_example,
)
from api.schemas.derived import derived
from desk import domain  # the domain's shapes (a track record, a position, a trade, a suggestion), through the desk
from market.contract import description
from market.money import MAX_CASH_MOVEMENT, MAX_ORDER_SHARES

# The JSON documents the bodies carry, each printed by its declared type (api/schemas/common.py `document`)
RationaleDocument = document(domain.Rationale)  # the AI book's order (portfolio/executor.py)
TradeRationaleDocument = document(domain.TradeRationale)  # any trade's (views/portfolio.py)
DaySummaryDocument = document(JsonOf[domain.ExecutedDay])  # an executed day's stored record
ChangesDocument = document(list[domain.Change], list[dict[str, Any]])  # a statement sync's


@derived(domain.PositionValue)
class Position(ApiModel):
    model_config = example(
        {
            "symbol": "NCBFG",
            "quantity": 1000,
            "cost_basis": "101500.00",
            "average_cost": "101.50",
            "purchase_date": "2026-11-18",
            "price": "103.20",
            "market_value": "103200.00",
            "unrealized_pnl": "1700.00",
            "realized_pnl": "0.00",
            "flags": [],
            "pending_quantity": 0,
            "pending_until": None,
            "stopped": None,
        }
    )


class AIPosition(Position):
    model_config = example(
        {
            **example_of(Position),
            "direction": "LONG",
            "entered_as": "slot",
            "rationale": {"reason": "LONG in the TOP tercile", "score": 71.5},
            "timestamp": "2026-11-18T16:00:00",
        }
    )

    direction: Literal["LONG"]
    entered_as: Literal["slot", "reserve"] | None = Field(
        description="What the opening buy entered as: one of the mandate's slots, or its reserve (capacity held "
        "the slots below their size, so the next-ranked eligible name took what was uninvested); null for a "
        "position opened before this was recorded."
    )
    rationale: RationaleDocument = Field(
        description="Why the executor bought: score, gates, flags, limits, bound_by, model."
    )
    timestamp: str = Field(
        description="Exchange time of the opening trade, ISO 8601 without offset.", examples=["2026-11-20T16:00:00"]
    )


class PortfolioPositions(ApiModel):
    model_config = example(
        {
            "portfolio_id": "client:c-1a2b3c4d5e6f",
            "as_of": "2026-11-20",
            "cash": "96800.00",
            "equity": "200000.00",
            "positions": [example_of(Position)],
        }
    )

    portfolio_id: str
    as_of: date
    cash: Money
    equity: Money
    positions: list[Position]


class Allocation(ApiModel):
    symbol: str = Field(description="A ticker, or CASH.")
    market_value: Money
    weight: Fraction = Field(description="Share of equity.")


class PortfolioSummary(ApiModel):
    model_config = example(
        {
            "portfolio_id": "client:c-1a2b3c4d5e6f",
            "as_of": "2026-11-20",
            "cash": "96800.00",
            "market_value": "103200.00",
            "equity": "200000.00",
            "liquid_equity": "199500.00",
            "illiquid_discounts": {"NCBFG": 500.0},
            "unrealized_pnl": "1700.00",
            "realized_pnl": "0.00",
            "positions_count": 1,
            "allocation": [
                {"symbol": "NCBFG", "market_value": "103200.00", "weight": 0.516},
                {"symbol": "CASH", "market_value": "96800.00", "weight": 0.484},
            ],
            "flags": {},
            "dividends_receivable": "0.00",
        }
    )

    portfolio_id: str
    as_of: date
    cash: Money
    market_value: Money
    equity: Money = Field(description="Cash plus positions at the latest close.")
    liquid_equity: Money = Field(description="Equity less the discounts of positions that cannot be sold at the close.")
    illiquid_discounts: dict[str, Money] = Field(description=domain.ILLIQUID_DISCOUNTS)
    unrealized_pnl: Money
    realized_pnl: Money
    positions_count: int
    allocation: list[Allocation]
    flags: dict[str, list[str]] = Field(description="Positions with exit flags, by ticker.")
    dividends_receivable: Money = Field(
        description="The part of cash credited for dividends whose payment date is still to come (from the ex-date "
        "the dividend is the holder's and counts in equity, and can buy): a withdrawal may not take it before "
        "the payment date."
    )


class AISummary(PortfolioSummary):
    model_config = example(
        {
            **example_of(PortfolioSummary),
            "portfolio_id": "AI",
            "started": True,
            "starting_cash": "10000000.00",
            "total_return_pct": 1.25,
        }
    )

    started: bool = Field(description="False until the AI portfolio's first executed day.")
    starting_cash: Money
    total_return_pct: float | None


class Trade(ApiModel):
    model_config = example(
        {
            "trade_id": "T-5f0c",
            "trading_date": "2026-11-20",
            "timestamp": "2026-11-20T10:31:05",
            "symbol": "NCBFG",
            "side": "BUY",
            "quantity": 100,
            "price": "101.50",
            "fees": "0.00",
            "value": "10150.00",
            "origin": "MANUAL",
            "rationale": {},
        }
    )

    trade_id: str
    trading_date: date
    timestamp: str = Field(description="Exchange time, ISO 8601 without offset.")
    symbol: str
    side: Literal["BUY", "SELL"]
    quantity: int
    price: Price
    fees: Money
    value: Money
    origin: str = Field(description="MANUAL, AI, SUGGESTION or STATEMENT_SYNC.")
    rationale: TradeRationaleDocument


class CashEntry(ApiModel):
    model_config = example(
        {
            "entry_id": "DIV:client:c-1a2b:NCBFG:2026-11-23",
            "timestamp": "2026-11-23T16:00:00",
            "kind": "DIVIDEND",
            "amount": "250.00",
            "balance": "12750.00",
            "trade_id": None,
            "note": "dividend 0.5 per share on 500 NCBFG, ex-date 2026-11-23",
        }
    )

    entry_id: str
    timestamp: str = Field(description="Exchange time, ISO 8601 without offset (a dividend: the ex-date's close).")
    kind: Literal["DEPOSIT", "WITHDRAWAL", "TRADE", "FEE", "DIVIDEND", "RECONCILIATION"]
    amount: Money = Field(description="Positive into the portfolio, negative out of it.")
    balance: Money = Field(description="The cash balance after this movement, in timestamp order.")
    trade_id: str | None = Field(None, description="The trade a TRADE or FEE movement belongs to.")
    note: str | None = None


class TradePage(CursorPage):
    model_config = page_example(Trade)

    items: list[Trade] = Field(description="Trades in the order the book recorded them.")


class CashPage(CursorPage):
    model_config = page_example(CashEntry)

    items: list[CashEntry] = Field(description="Cash movements in the order the book recorded them.")


class AIDay(ApiModel):
    trading_date: date
    model_id: str | None
    equity: Money
    liquid_equity: Money
    cash: Money
    summary: DaySummaryDocument = Field(description="Orders, skipped names, what the rails blocked or cut.")
    trades: list[Trade] = Field(description="The AI trades executed that day, in recording order.")


class AIHistory(CursorPage):
    model_config = example(
        {
            "items": [
                {
                    "trading_date": "2026-11-20",
                    "model_id": "risk-2026-11-20-h1-warm",
                    "equity": 10012500.0,
                    "liquid_equity": 10010000.0,
                    "cash": 8012500.0,
                    "summary": {"orders": [], "blocked_by_rails": 1},
                    "trades": [example_of(Trade)],
                }
            ],
            "next_cursor": "WyJhaURheXMiLCAiMjAyNi0xMS0yMCJd",
        }
    )

    items: list[AIDay] = Field(description="Executed days, oldest first.")


# An order's side, the one rule for the trade's body and the preview's query (REST; GraphQL's
# placeTrade is read by ManualTradeIn too): buy or sell, in lower or upper case.
TradeSide = Literal["buy", "sell", "BUY", "SELL"]


class TradePreviewIn(ApiModel):
    """GraphQL's `tradePreview` arguments, read by the rules REST's preview query and a trade's
    body read them by (the side, the symbol's length, a trade's bound on the quantity)."""

    model_config = ConfigDict(extra="forbid")

    side: TradeSide
    symbol: str = Field(min_length=1, max_length=20)
    quantity: int = Field(gt=0, le=MAX_ORDER_SHARES)


class ManualTradeIn(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"example": {"side": "buy", "symbol": "NCBFG", "quantity": 100, "price": "101.50"}},
    )

    side: TradeSide
    symbol: str = Field(min_length=1, max_length=20)
    quantity: QuantityIn = Field(gt=0, le=MAX_ORDER_SHARES)
    # MoneyIn: whole cents, at most 14 digits before the point (market.money, one rule)
    price: MoneyIn = Field(gt=0, le=Decimal("1000000000"))
    fees: MoneyIn | None = Field(
        default=None,
        ge=0,
        le=Decimal("1000000000"),
        description="What the broker charged (0: nothing). Omitted or null: the fee schedule's fees on the "
        "trade's value, as the trade preview computes them; the answer's `fees_from` says which.",
    )

    def order(self) -> domain.ManualTrade:
        """The desk's request (portfolio/trading.py `ManualTrade`), built here once for REST's
        body and GraphQL's `placeTrade`, which both are read by this model."""
        return domain.ManualTrade(self.side, self.symbol, self.quantity, self.price, self.fees)


@derived(domain.PlacedTrade)
class TradeOut(ApiModel):
    model_config = example(
        {
            "trade_id": "T-5f0c",
            "portfolio_id": "client:c-1a2b3c4d5e6f",
            "trading_date": "2026-11-20",
            "executed_at": "2026-11-20T15:31:05Z",
            "symbol": "NCBFG",
            "side": "BUY",
            "quantity": 100,
            "price": "101.50",
            "fees": "0.00",
            "fees_from": "STATED",
            "cash_after": "89850.00",
            "replayed": False,
        }
    )


class CashIn(ApiModel):
    model_config = ConfigDict(extra="forbid")

    amount: MoneyIn = Field(
        description="Positive: a deposit; negative: a withdrawal.",
        ge=-MAX_CASH_MOVEMENT,  # market.money: the one bound REST, GraphQL, the CLI and the domain apply
        le=MAX_CASH_MOVEMENT,
    )
    note: str | None = Field(default=None, max_length=500)


class CashOut(ApiModel):
    model_config = example({"portfolio_id": "client:c-1a2b3c4d5e6f", "balance": "250000.00"})

    portfolio_id: str
    balance: Money


@derived(domain.Suggestion)
class Suggestion(ApiModel):
    model_config = example(
        {
            "suggestion_id": "S-20261123-1a2b3c-NCBFG-BUY",
            "trading_date": "2026-11-23",
            "symbol": "NCBFG",
            "side": "BUY",
            "quantity": 200,
            "limit_price": "103.20",
            "fees": "361.20",
            "reason": {"reason": "LONG in the TOP tercile"},
            "expires_at": "2026-11-23T21:00:00Z",
            "state": "PENDING",
        }
    )


class SuggestionPage(CursorPage):
    model_config = page_example(Suggestion)

    items: list[Suggestion] = Field(description="Oldest trading day first, sells before buys, then by symbol.")


class StatementResult(ApiModel):
    model_config = example(
        {
            "status": "SYNCED",
            "file_sha256": "9f2c...",
            "changes": [{"symbol": "NCBFG", "from": 0, "to": 1000}],
            "warnings": [],
        },
        extra="allow",
    )

    status: str = Field(
        description="SYNCED; PREVIEW when asked for a preview (nothing stored); ALREADY_IMPORTED for "
        "the same file again."
    )
    changes: ChangesDocument
    warnings: list[str] = Field(
        description="Lines booked as the statement states them that the client should check with the broker "
        "(a price far from any the name traded at); empty when none."
    )


class ResearchResult(ApiModel):
    model_config = example(
        {
            "id": 12,
            "sha256": "4b1d...",
            "filename": "ncb-note.pdf",
            "media_type": "application/pdf",
            "instruments": [{"symbol": "NCBFG", "matched_by": "ticker"}],
            "sentiment": {"score": 0.42, "label": "positive", "scorer": "finlex-v1"},
            "key_sentences": ["NCB reported record profit."],
            "already_stored": False,
        },
        extra="allow",
    )

    id: int
    sha256: str
    filename: str
    media_type: str
    instruments: list[dict[str, Any]]
    sentiment: dict[str, Any]
    key_sentences: list[Any]
    already_stored: bool


class Metric(ApiModel):
    value: float | None
    base_rate: float | None = Field(
        description="The no-skill rate: the more common direction or class, the error of "
        "predicting 0, or 0 for the IC and the tercile spread."
    )
    sample_size: int | None
    baselines: dict[str, float] = Field(
        default_factory=dict,
        description="Simple rules on the same rows: the majority "
        "class, the sign of the last move, predicting a zero return.",
    )


_METRIC_EXAMPLE = {
    "value": 0.603,
    "base_rate": 0.511,
    "sample_size": 3923,
    "baselines": {"majority": 0.511, "last_move_sign": 0.402},
}


PERIOD_END = (
    "Last trading day of the record: the validation record's last predicted day, the live record's last day "
    "its metrics were computed on."
)
EVALUATED_THROUGH = (
    "The metrics cover the predictions through this day: the last predicted day whose outcome is known (its "
    "label's horizon has passed). The validation record's last horizon_days + 1 predicted days have no outcome "
    "yet, nor the live record's latest."
)


class Record(ApiModel):
    record: str = Field(description="`validation` (walk-forward over the history before the first live day) or `live`.")
    label: str = Field(description="What the record is, in words, for display.")
    period_start: str | None = Field(description="First predicted trading day (ISO date).")
    period_end: str | None = Field(description=PERIOD_END)
    evaluated_through: str | None = Field(description=EVALUATED_THROUGH)
    predictions: int = Field(description="Predictions with a realised outcome (the 3-class sample).")
    models: int | None = Field(description="Models that made the record's predictions (walk-forward retrains).")
    layer1_backend: str | None
    metrics: dict[str, Metric | None] = Field(
        description="On the model's label (the excess return over horizon_days): binary_accuracy, "
        "three_class_accuracy, movers_accuracy, average_error, rank_ic (mean daily Spearman correlation of the "
        "expected excess with the label; base rate 0, sample in days, baseline: the last move's) and "
        "tercile_spread (mean label of the TOP Ranking Tercile minus the BOTTOM's, a fraction of return over "
        "the horizon; base rate 0, sample in days); null until known."
    )
    reason: str | None = Field(description="Why the record is empty; null when it has metrics.")


class MonitorCheck(ApiModel):
    check: str = Field(
        description="`input:<name>` (one of the 14 inputs), `score`, `live_accuracy`, `live_brier` or "
        "`live_calibration`."
    )
    kind: str = Field(description="input_drift, score_drift, live_accuracy, live_brier or live_calibration.")
    state: str = Field(
        description="OK, WATCH or ALERT after persistence (ALERT once the breach has lasted the set "
        "number of consecutive trading days)."
    )
    level: str = Field(description="The day's own reading against the thresholds: OK, WATCH or ALERT.")
    figure: float | None = Field(
        description="The population stability index (inputs, Score), the two-sided tail share "
        "of the day's value (market-wide inputs) or the live metric; null before "
        "the check can be computed."
    )
    measure: str = Field(description="What the figure is, in words (its name first, e.g. `psi_excess: ...`).")
    watch_threshold: float | None = Field(description="The figure's WATCH threshold.")
    alert_threshold: float | None = Field(description="The figure's ALERT threshold.")
    worse_when: str | None = Field(
        description="`above` when a higher figure is worse (drift, Brier, calibration error), `below` when a lower "
        "one is (accuracy, tail share); null without thresholds."
    )
    since: date | None = Field(description="First trading day of the current breach; null when OK.")
    note: str = Field(
        description="The check in words: the figure against its thresholds and the day's level, or why the figure "
        "is missing (e.g. 'not enough live outcomes')."
    )


class ModelMonitor(ApiModel):
    state: str | None = Field(description="The worst check's state: OK, WATCH or ALERT; null before the first run.")
    trading_date: date | None = Field(description="The day the monitor last checked.")
    checks: list[MonitorCheck]
    reason: str | None = Field(description="Why there is no monitor state yet.")
    latest_predicted: date | None = Field(description="The latest trading day with stored predictions.")
    unmonitored_days: int = Field(
        description="Trading days with stored predictions after `trading_date` (every predicted day before the "
        "monitor's first run): above 0, the state is that old, and the days after it were not checked."
    )


class Performance(ApiModel):
    model_config = example(
        {
            "model_id": "risk-2026-11-20-h1-full",
            "trained_through": "2026-11-20",
            "training_rows": 15230,
            "horizon_days": 5,
            "layer1_backend": "fallback-empirical-v2",
            "layer1_is_fallback": True,
            "validation": {
                "record": "validation",
                "label": "Validation record (walk-forward, out of sample, before the first live day)",
                "period_start": "2026-05-05",
                "period_end": "2026-11-19",
                "evaluated_through": "2026-11-11",
                "predictions": 8260,
                "models": 28,
                "layer1_backend": "fallback-empirical-v2",
                "metrics": {"binary_accuracy": _METRIC_EXAMPLE},
                "reason": None,
            },
            "live": {
                "record": "live",
                "label": "Live record (predictions made each trading day, from the first live day)",
                "period_start": "2026-11-20",
                "period_end": None,
                "evaluated_through": None,
                "predictions": 0,
                "models": 1,
                "layer1_backend": "fallback-empirical-v2",
                "metrics": {"binary_accuracy": None},
                "reason": "no prediction has a realised outcome yet; the record starts the trading day after "
                "the first scored day",
            },
            "monitor": {
                "state": "WATCH",
                "trading_date": "2026-11-20",
                "reason": None,
                "checks": [
                    {
                        "check": "input:layer1_p_up",
                        "kind": "input_drift",
                        "state": "WATCH",
                        "level": "ALERT",
                        "figure": 0.412,
                        "watch_threshold": 0.1,
                        "alert_threshold": 0.25,
                        "since": "2026-11-19",
                        "note": None,
                    },
                    {
                        "check": "live_brier",
                        "kind": "live_brier",
                        "state": "OK",
                        "level": "OK",
                        "figure": None,
                        "watch_threshold": None,
                        "alert_threshold": None,
                        "since": None,
                        "note": "not enough live outcomes",
                    },
                ],
                "latest_predicted": "2026-11-20",
                "unmonitored_days": 0,
            },
        }
    )

    model_id: str | None = Field(description="The model that made the latest live predictions.")
    trained_through: date | None
    training_rows: int | None
    horizon_days: int | None
    layer1_backend: str | None
    layer1_is_fallback: bool
    validation: Record = Field(description="The walk-forward record over the history before the first live day.")
    live: Record = Field(description="The record of the daily predictions from the first live day on.")
    monitor: ModelMonitor = Field(
        description="The model monitor's latest day (docs/monitoring.md): input and Score "
        "drift, the live record's accuracy and calibration against the "
        "validation record's band."
    )


@derived(domain.CostsPaid)
class CostsPaid(ApiModel):
    """Costs the book paid, in the market's currency, and their share of mean equity a year."""


@derived(domain.BenchmarkComparison)
class BenchmarkComparison(ApiModel):
    """The book beside one benchmark over the same days (fractions; 250 trading days a year)."""


@derived(domain.NullSpread)
class NullSpread(ApiModel):
    """A figure over a null family's books: the mean, the lowest and the highest."""


@derived(domain.NullFamily)
class NullFamily(ApiModel):
    """A null family beside the replayed model book (portfolio/track_record.py NullFamily, field for field)."""


@derived(domain.NullRecord)
class NullRecord(ApiModel):
    """The AI portfolio against its null books over the record's days (portfolio/track_record.py NullRecord, field
    for field)."""


@derived(domain.TrackRecord)
class TrackRecord(ApiModel):
    """Track-record statistics (portfolio/track_record.py TrackRecord, field for field):
    fractions, not percent."""

    model_config = example(
        {
            "days": 60,
            "first": "2026-08-28",
            "last": "2026-11-25",
            "total_return": 0.0123,
            "annual_return": None,
            "annual_volatility": 0.031,
            "sharpe": 1.69,
            "sortino": 2.4,
            "max_drawdown": 0.012,
            "calmar": None,
            "annual_turnover": None,
            "costs": {
                "fees": "950.00",
                "spread": "1400.00",
                "impact": "310.00",
                "total": "2660.00",
                "share_of_equity_per_year": None,
            },
            "benchmarks": {
                "equal_weight_liquid": {
                    "total_return": 0.004,
                    "annual_return": None,
                    "excess_annual_return": None,
                    "tracking_error": 0.09,
                    "information_ratio": 0.41,
                    "beta": 0.12,
                    "alpha": None,
                    "note": "60 days of returns, under a year (250): a return over less than a year is not annualised "
                    "(GIPS), so no annual return, excess annual return or alpha is given; the total return is the "
                    "benchmark's return over these days, beside the record's.",
                }
            },
            "trades": 14,
            "fill_count": 14,
            "average_exposure": 0.62,
            "mostly_cash": False,
            "note": "60 days of returns, under a year (250): a return over less than a year is not annualised (GIPS), "
            "so no annual return, Calmar, annual turnover or yearly cost share is given, nor any benchmark's annual "
            "return, excess annual return or alpha; the total return is the return over these days.",
            "reason": None,
        }
    )


class TradePreview(ApiModel):
    """The one cost model's estimate of an order (market/costs.py); nothing is stored."""

    model_config = example(
        {
            "symbol": "NCBFG",
            "side": "BUY",
            "quantity": 1000,
            "as_of": "2026-11-20",
            "close": "101.50",
            "touch": "102.00",
            "touch_source": "quotes",
            "impact": 0.0031,
            "price": "102.32",
            "band_low": "86.28",
            "band_high": "116.72",
            "price_bound": None,
            "price_note": None,
            "fillable_in_one_session": 1000,
            "lapse_reason": None,
            "fees": "511.58",
            "spread_cost": "500.00",
            "impact_cost": "316.20",
            "total_cost": "1327.78",
            "booking_total": "102831.58",
            "held": 0,
            "cash_available": "250000.00",
            "bookable": True,
            "refusal": None,
        }
    )

    symbol: str
    side: Literal["BUY", "SELL"]
    quantity: int
    as_of: date = Field(description="The session the estimate is priced on (the symbol's latest bar).")
    close: Money
    touch: Money = Field(description="The ask (buy) or bid (sell); else the close plus or minus half the day's range.")
    touch_source: str = Field(
        description="What priced the touch (market/costs.py): quotes (the closing bid and ask); else the spread "
        "estimated from the name's stored bars, by its estimator's label: abdi_ranaldo, corwin_schultz, "
        "range_window or tick (the one-tick floor); else range (half the day's high-low range); else fallback "
        "(half of a 5% spread)."
    )
    impact: Fraction | None = Field(description="Square-root impact of the whole quantity, a fraction of the touch.")
    price: Price = Field(
        description="Per share, touch and impact included, held within the day's band: where the cost model's "
        "price lies past it (`price_bound`), the band's edge, the price this order can book at."
    )
    band_low: Price = Field(description="The day's price band (15% around the reference price): its lowest price.")
    band_high: Price = Field(description="The day's price band: its highest price. A trade books within the band.")
    price_bound: Literal["BAND_LOW", "BAND_HIGH"] | None = Field(
        description="Null: `price` is the cost model's. BAND_LOW or BAND_HIGH: the model's price for the whole order "
        "lay past that edge of the band (or could not be priced at all), so `price` is the edge, and fees and costs "
        "are taken at it; `price_note` says so in words."
    )
    price_note: str | None = Field(description="Why `price` is the band's edge, not the model's; null otherwise.")
    fillable_in_one_session: int = Field(description="At most 25% of a session's volume fills; the rest would wait.")
    lapse_reason: str | None
    fees: Money = Field(
        description="The fee schedule's on price x quantity: what this order booked at `price` without fees is "
        "charged (POST /api/portfolio/trade), past what one session fills too."
    )
    spread_cost: Money
    impact_cost: Money
    total_cost: Money = Field(description="Spread, impact and fees on the whole quantity, in money.")
    # the caller's portfolio as its booking would take the order (portfolio/trading.py `standing`),
    # described once, by the domain's declaration
    booking_total: Money = Field(description=description(domain.TradePreview, "booking_total"))
    held: int = Field(description=description(domain.TradePreview, "held"))
    cash_available: Money = Field(description=description(domain.TradePreview, "cash_available"))
    bookable: bool = Field(description=description(domain.TradePreview, "bookable"))
    refusal: str | None = Field(description=description(domain.TradePreview, "refusal"))
