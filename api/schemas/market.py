"""Bodies of the market endpoints."""

from __future__ import annotations

from dataclasses import fields
from datetime import date

from pydantic import Field

from api.contract import ApiModel
from api.schemas.common import Fraction, example, example_of
from api.schemas.derived import derived
from desk import ServedPrediction, domain


@derived(domain.TickerChange)
class TickerChange(ApiModel):
    """A ticker change of the company (a RENAME corporate action, docs/portfolio.md "A name
    whose ticker changed")."""


@derived(domain.ShareSplit)
class ShareSplit(ApiModel):
    """A split, bonus issue or consolidation of the symbol (a SPLIT corporate action)."""


SPLITS = (
    "The symbol's splits, bonus issues and consolidations stored under it, oldest first (every one, not only the "
    "page's; an ex-date after the newest bar is one announced ahead): the bars' prices and volume are as traded, so a "
    "close divided by the `factor` of each split after its date through a day is on that day's count; the returns "
    "and indicators are adjusted already. Empty: none."
)
RENAMED_TO = (
    "Set when this ticker was renamed: the ticker the company trades under from `as_of`. The bars served under this "
    "ticker are what traded under it, before `as_of`; the model and the benchmarks read them as the new ticker's "
    "history. null: not renamed."
)
RENAMED_FROM = (
    "The company's earlier tickers, oldest first, each with the day this ticker replaced it (`as_of`): their bars, "
    "served under them (GET /api/market/history/{old ticker}), are this ticker's history for the model and the "
    "benchmarks (one series through the ticker change). Empty: none."
)


class ReasonInput(ApiModel):
    input: str = Field(description="The model input, by its label (one of the 14 features, models/features.py).")
    contribution: float = Field(
        description=(
            "Its signed contribution to this prediction's raw score, in raw-score units, before calibration (a "
            "predicted daily rank of the label, -0.5 to 0.5: +0.01 is about one percentile point): positive pushes the "
            "Score up, negative down."
        )
    )


# What the reasons' figures mean, for REST's PredictionReasons and GraphQL's (api/graphql/types/reasons.py).
BASE_VALUE = "The model's expected raw score before any input is read (raw-score units)."
LISTED_INPUTS = "The three inputs with the largest absolute contribution, largest first."
RAW_SCORE = (
    "The prediction's raw score (raw-score units, before calibration): base value + the listed inputs' "
    "contributions + other inputs. Null where the prediction's raw score is not at hand."
)
OTHER_INPUTS = (
    "The contributions of the inputs not listed (the other 11 of the 14), together: raw score - base value - the "
    "listed contributions. It can outweigh a listed input, as it sums several. Null with raw score."
)

MISSING_INPUTS = (
    "The inputs the model had no value for on this day, by label, in the registry's order (a new listing's first "
    "weeks lack the windowed ones: the 60-session volatility needs 60 bars); the trees read a missing input as its "
    "missing branch, so a prediction with several missing leans on the few it had. Empty when all 14 were known; "
    "null for a prediction stored before the model recorded them."
)


class PredictionReasons(ApiModel):
    """The reasons behind one prediction: LightGBM's own per-prediction contributions of the
    risk model (pred_contrib); base_value plus the listed inputs' contributions plus
    other_inputs is raw_score."""

    base_value: float = Field(description=BASE_VALUE)
    inputs: list[ReasonInput] = Field(description=LISTED_INPUTS)
    raw_score: float | None = Field(default=None, description=RAW_SCORE)
    other_inputs: float | None = Field(default=None, description=OTHER_INPUTS)
    missing_inputs: list[str] | None = Field(default=None, description=MISSING_INPUTS)


REASONS_EXAMPLE = {
    "base_value": 0.021537,
    "inputs": [
        {"input": "Last day's return", "contribution": -0.184213},
        {"input": "Volatility, 60 days (daily)", "contribution": 0.093122},
        {"input": "Market breadth", "contribution": 0.041870},
    ],
    "raw_score": -0.040216,
    "other_inputs": -0.012532,
    "missing_inputs": [],
}


# What a prediction's fields mean, written once in the domain (models/scoring.py
# `ServedPrediction`, from which GraphQL's `Prediction` is derived), for the quotes' fields of
# REST and GraphQL (api/graphql/types/quote.py); and the RSI's, as the history names it.
PREDICTION_FIELDS = {
    **{f.name: f.metadata["description"] for f in fields(ServedPrediction) if f.metadata.get("description")},
    "rsi_14": "Wilder's 14-day RSI, 0-100 (the same name as in the history).",
}


CHANGE_PCT = (
    "Close over the previous close - 1, in percent, the previous close on the day's share count (split-adjusted: a "
    "split's ex-date reads the move net of the split; the close itself is as traded)."
)

HALTED_SINCE = (
    "The date of the exchange's HALT notice the name is under on the market day: it cannot be traded until the "
    "exchange resumes it (a trade or a suggestion's confirmation of it is refused), though the quote still shows its "
    "last close and its prediction. Null while it trades (no HALT, or a RESUME since: a RESUME is dated the session "
    "trading resumes)."
)


class LatestQuote(ApiModel):
    """One ticker's latest day and its prediction; prediction fields are null with a
    `reason` when the day is not scored for the ticker."""

    trading_date: date = Field(
        description="The market day. A ticker without a bar that day is quoted as the day's no-trade row, as the "
        "exchange states an untraded name: its last close on the day's share count, volume 0, change 0.0."
    )
    close: float
    volume: int = Field(description="Shares traded on the market day (0 when it did not trade).")
    halted_since: date | None = Field(description=HALTED_SINCE)
    change_pct: float | None = Field(description=CHANGE_PCT)
    rsi_14: float | None = Field(description=PREDICTION_FIELDS["rsi_14"])
    predicted_return: Fraction | None = Field(description=PREDICTION_FIELDS["predicted_return"])
    score: float | None = Field(description=PREDICTION_FIELDS["score"])
    action: str | None = Field(description="LONG, HOLD or AVOID.")
    weight: Fraction | None = Field(description=PREDICTION_FIELDS["weight"])
    tercile: str | None = Field(description="TOP, MIDDLE, BOTTOM or ILLIQUID.")
    model_id: str | None
    layer1_backend: str | None = Field(description=PREDICTION_FIELDS["layer1_backend"])
    held_edge: Fraction | None = Field(description=PREDICTION_FIELDS["held_edge"])
    round_trip_cost: Fraction | None = Field(description=PREDICTION_FIELDS["round_trip_cost"])
    decision_reason: str | None = Field(description=PREDICTION_FIELDS["decision_reason"])
    reasons: PredictionReasons | None = Field(description=PREDICTION_FIELDS["reasons"])
    reason: str | None = Field(
        description="Why the prediction fields are null; or, for a day covered only by the "
        'walk-forward validation record, "validation record: ..." (the scores '
        "are that record's, `model_id` its walk-forward model)."
    )


LATEST_EXAMPLE = {
    "NCBFG": {
        "trading_date": "2026-11-20",
        "close": 101.5,
        "volume": 125000,
        "halted_since": None,
        "change_pct": 1.25,
        "rsi_14": 56.3,
        "predicted_return": 0.0021,
        "score": 58.4,
        "action": "HOLD",
        "weight": 0.0,
        "tercile": "TOP",
        "model_id": "risk-2026-11-20-h5-warm",
        "layer1_backend": "fallback-empirical-v2",
        "held_edge": 0.0016,
        "round_trip_cost": 0.0273,
        "decision_reason": "expected excess +0.16% over 5 sessions (Score 58.4), rank 22 of the liquid names: the "
        "book holds the 15 best",
        "reasons": REASONS_EXAMPLE,
        "reason": None,
    }
}


class VarianceWindow(ApiModel):
    variance: float | None = Field(
        description="Sample variance of daily log returns over the window, split-adjusted (the closes on the last "
        "bar's share count), not dividend-adjusted; a day without trades is a return of 0 (its close is the last "
        "close: the trade after it carries the move since); null when the history is shorter than the window or "
        "the window holds no return of a day with trades."
    )
    annualised_volatility: float | None = Field(
        description="sqrt(variance x 250), the sessions a year every annualised figure counts."
    )
    observations: int = Field(description="Daily returns in the window, days without trades included.")
    traded_returns: int = Field(description="The window's returns that end on a day with trades (volume > 0).")


class Normalised(ApiModel):
    value: float | None = Field(description="The latest value.")
    mean: float | None = Field(description="Mean of the instrument's earlier values.")
    std: float | None
    z: float | None = Field(description="(value - mean) / std; null with fewer than 21 observations or no dispersion.")
    observations: int


class SymbolStatistics(ApiModel):
    model_config = example(
        {
            "symbol": "NCBFG",
            "as_of": "2026-11-20",
            "observations": 1250,
            "variance": {
                "20d": {"variance": 0.000144, "annualised_volatility": 0.1905, "observations": 20, "traded_returns": 17}
            },
            "normalised": {
                "volume": {"value": 125000.0, "mean": 80000.0, "std": 30000.0, "z": 1.5, "observations": 1250}
            },
        }
    )

    symbol: str
    as_of: date
    observations: int
    variance: dict[str, VarianceWindow] = Field(description="Keyed by window: 20d, 60d, 120d, 250d.")
    normalised: dict[str, Normalised] = Field(
        description="return_1d, volume, day_range_pct, spread_pct, rsi_14, volatility_20 against the instrument's own "
        "history, split-adjusted (the returns and volumes on the last bar's share count: a split is neither a return "
        "nor a jump in volume)."
    )
    prediction_date: date | None = Field(
        None, description="The trading date of the symbol's latest live prediction; null when it has none."
    )
    reasons: PredictionReasons | None = Field(
        None,
        description=(
            "The reasons behind that prediction: the three inputs with the largest contributions to its raw score "
            "and the base value; null when it has none."
        ),
    )
    renamed_to: TickerChange | None = Field(None, description=RENAMED_TO)
    renamed_from: list[TickerChange] = Field(default_factory=list, description=RENAMED_FROM)


class Bar(ApiModel):
    """Units: a field named *_pct is in percent; other ratios (momentum, volatility, %B,
    bandwidth) are fractions; the descriptions say which. The prices and the volume are as
    traded; the returns and indicators are split-adjusted: each day's read the bars before
    it on that day's share count (the splits with an ex-date on or before the day), so a
    split's ex-date reads the move net of the split."""

    model_config = example(
        {
            "trading_date": "2026-11-20",
            "open": 101.0,
            "high": 103.5,
            "low": 100.8,
            "close": 103.2,
            "volume": 125000,
            "bid": 103.0,
            "ask": 103.4,
            "rsi_14": 58.2,
            "bollinger_pct_b": 0.71,
            "bollinger_bandwidth": 0.08,
            "momentum_5": 0.021,
            "momentum_20": 0.043,
            "volatility_20": 0.012,
            "volume_ratio_20": 1.3,
            "spread_pct": 0.39,
        }
    )

    trading_date: date
    open: float | None
    high: float | None
    low: float | None
    close: float
    volume: int
    bid: float | None
    ask: float | None
    rsi_14: float | None = Field(description="Wilder's 14-day RSI, 0-100.")
    bollinger_pct_b: float | None = Field(
        description="Bollinger %B (20 days, 2 sd): where the close sits in the bands, a fraction (0 = lower band, 1 = "
        "upper)."
    )
    bollinger_bandwidth: float | None = Field(
        description="Bollinger bandwidth (20 days, 2 sd): band width over the middle band, a fraction."
    )
    momentum_5: float | None = Field(description="Return over 5 trading days, a fraction (0.021 = 2.1%).")
    momentum_20: float | None = Field(description="Return over 20 trading days, a fraction.")
    volatility_20: float | None = Field(
        description="Standard deviation (population, ddof 0) of daily log returns over 20 trading days, not "
        "annualised, a fraction (the model's input; the statistics' variance windows are sample variances)."
    )
    volume_ratio_20: float | None = Field(description="Volume over ADV_20 (the 20-day mean volume), a ratio.")
    spread_pct: float | None = Field(
        description="Closing spread in percent: (ask - bid) / mid x 100 from the quotes, else the day's range over "
        "the close on a traded day (market/liquidity.py); null on a day without trades and without quotes (its high "
        "and low repeat the last close: no spread)."
    )


class History(ApiModel):
    model_config = example(
        {
            "symbol": "NCBFG",
            "items": [example_of(Bar)],
            "next_cursor": "WyJvbGRlckhpc3RvcnkiLCAiMjAyNi0xMS0yMCIsICJOQ0JGRyJd",
        }
    )

    symbol: str
    items: list[Bar]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
    renamed_to: TickerChange | None = Field(None, description=RENAMED_TO)
    renamed_from: list[TickerChange] = Field(default_factory=list, description=RENAMED_FROM)
    splits: list[ShareSplit] = Field(default_factory=list, description=SPLITS)


UNCHANGED = (
    "Traded firm: traded and closed at the previous close (the previous close on the day's share count, so a split "
    "alone is no move)."
)


class Breadth(ApiModel):
    model_config = example(
        {
            "trading_date": "2026-11-20",
            "instruments": 60,
            "traded": 41,
            "advancers": 17,
            "decliners": 15,
            "unchanged": 9,
            "not_traded": 19,
            "index_change_pct": 0.4127,
            "index_market_cap": 1523000000000.0,
            "index_constituents": 60,
            "index_excluded": [],
        }
    )

    trading_date: date | None = Field(description="The market day; null on an empty store.")
    instruments: int = Field(description="Listed instruments served by /api/market/latest for the day.")
    traded: int = Field(description="Instruments with volume on the day.")
    advancers: int = Field(description="Traded and closed above the previous close (`change_pct` above 0).")
    decliners: int = Field(description="Traded and closed below the previous close (`change_pct` below 0).")
    unchanged: int = Field(description=UNCHANGED)
    not_traded: int
    index_change_pct: float | None = Field(
        description="Change of the service's capitalisation-weighted index in percent (not the exchange's official "
        "index)."
    )
    index_market_cap: float | None = Field(description="Total capitalisation of the index constituents at the close.")
    index_constituents: int
    index_excluded: list[str] = Field(description="Instruments left out of the index: no shares outstanding reported.")
