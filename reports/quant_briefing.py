"""The Quant Briefing: how the model has done out of sample, the market's breadth, the top
signals by Score, the AI portfolio with its equity curve, and the day's Score distribution.
Built from `inputs.briefing_inputs`; every missing piece is said, never an error."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from reportlab.platypus import Flowable, Spacer

from analysis.writers import breadth_lead
from market.contract import description
from market.plain import JsonValue
from models.decisions import BOOK_NAMES, HORIZON
from models.scoring import ServedPrediction
from portfolio.market import halt_said
from portfolio.nulls import FEW_BOOKS, percentile_words
from portfolio.rails import HIGH_SPREAD
from portfolio.track_record import CostsPaid
from reports import charts
from reports.format import (
    DASH,
    NULL_FAMILY_LABELS,
    backend_line,
    by_type,
    counted,
    fixed,
    fraction,
    in_currency,
    market_day_line,
    metric_rows,
    money,
    money_in,
    null_books_summary,
    number,
    pct,
    ratio,
    record_caption,
    signed_pct,
    stale_warning,
    statistic_pct,
)
from reports.inputs import (
    AIPortfolioSection,
    BriefingInputs,
    CurveDay,
    MarketSection,
    NullBooksJson,
    SignalRow,
    Staleness,
    TrackRecordJson,
    priced_day,
)
from reports.layout import (
    SMALL,
    SUBHEADING,
    SUBTITLE,
    TITLE,
    caution,
    content_width,
    data_table,
    kept,
    key_figures,
    notice,
    section,
    text,
)
from reports.logos import powered_by
from reports.model_health import model_health
from views.breadth import Breadth
from views.market import QuotedPrediction
from views.performance import Performance, shown_record
from views.portfolio import AIPosition
from views.track_record import TrackSeries

TITLE_TEXT = "Quant Briefing"
# What the Score is, as REST's schema and GraphQL's type describe it (written once, models/scoring.py).
SCORE_MEANS = description(ServedPrediction, "score")


def story(inputs: BriefingInputs, generated: str, page_size: str, stale: Staleness | None = None) -> list[Flowable]:
    """The Briefing; `stale` (reports.inputs.staleness): its prices are old, boxed under its heading."""
    width = content_width(page_size)
    market = inputs["market"]
    return [
        text(TITLE_TEXT, TITLE),
        text(market_day_line(priced_day(inputs), generated), SUBTITLE),
        *([caution(stale_warning(stale)), Spacer(0, 6)] if stale else []),
        *_performance(inputs["performance"]),
        *_sentiment(market),
        *_signals(inputs),
        *_portfolio(inputs["ai_portfolio"], inputs.get("track_record") or {}, inputs["currency"]),
        *_track_record(inputs.get("track_record") or {"days": 0}, inputs.get("cost_model", ""), inputs["currency"]),
        *_against_benchmarks(inputs.get("track_series") or {}, width),
        *_against_nulls((inputs.get("track_record") or {}).get("nulls"), inputs.get("track_series") or {}, width),
        *_charts(inputs, width, closing=section("Powered by", powered_by(width, inputs["performance"]))),
    ]


def _performance(perf: Performance) -> list[Flowable]:
    record = shown_record(perf)
    rows = metric_rows(record, ("binary_accuracy", "movers_accuracy", "rank_ic", "tercile_spread"))
    blocks: list[Flowable] = [
        text(record_caption(perf, record), SMALL),
        data_table(["Out-of-sample metric", "Value", "Base rate", "Sample"], rows)
        if rows
        else notice(record["reason"] or "no metrics"),
        Spacer(0, 4),
        key_figures(
            [
                ("Training rows", number(perf["training_rows"])),
                ("Model", perf["model_id"] or "none yet"),
                ("Evaluated through", record["evaluated_through"] or "no realised outcome yet"),
                ("Layer 1", backend_line(perf)),
            ]
        ),
        Spacer(0, 6),
        text("Model health", SUBHEADING),
        *model_health(perf),
    ]
    return section("System performance", *blocks)


def _sentiment(market: MarketSection) -> list[Flowable]:
    breadth = market["breadth"]
    if breadth is None:
        return section("Market sentiment", notice(market["unavailable"]))
    first = first_trades(breadth)
    figures = key_figures(
        [
            ("Index change", signed_pct(breadth["index_change_pct"])),
            ("Advancers", str(breadth["advancers"])),
            ("Decliners", str(breadth["decliners"])),
            ("Unchanged (traded firm)", str(breadth["unchanged"])),
            *([("First trade (no previous close)", str(first))] if first else []),
            ("Did not trade", str(breadth["not_traded"])),
        ]
    )
    explain = text(f"{breadth_said(breadth)} {_index_said(breadth)}", SMALL)
    return section("Market sentiment", figures, explain)


def first_trades(breadth: Breadth) -> int:
    """The names that traded on the day for the first time: no previous close, so neither
    up, down nor unchanged (views/breadth.py), yet counted among those that traded."""
    return breadth["traded"] - breadth["advancers"] - breadth["decliners"] - breadth["unchanged"]


def breadth_said(breadth: Breadth) -> str:
    """The day's breadth in a sentence whose counts add up to the stocks that traded (a first
    trade counted apart), or that none traded: never "level: 0 up, 0 down ... of 0 stocks"."""
    day, listed = breadth["trading_date"], counted(breadth["instruments"], "listed instrument")
    if not breadth["traded"]:
        return f"No stock traded on {day}: none of the {listed} had a trade, so none advanced or declined."
    first = first_trades(breadth)
    new = f", {first} trading for the first time (no previous close to compare with)" if first else ""
    return (
        f"{breadth_lead(breadth)}: {breadth['advancers']} up, {breadth['decliners']} down, {breadth['unchanged']} "
        f"unchanged{new} of {counted(breadth['traded'], 'stock')} that traded on {day}."
    )


def _index_said(breadth: Breadth) -> str:
    """Which index the index change is: the service's capitalisation-weighted one of its
    constituents, or none where no instrument has its shares outstanding stored (never
    "an index of 0 instruments")."""
    if not breadth["index_constituents"]:
        return (
            "No index: the service's capitalisation-weighted index weighs instruments by their shares outstanding, "
            "and none has them stored."
        )
    constituents = counted(breadth["index_constituents"], "instrument")
    return f"Index: the service's capitalisation-weighted index of {constituents}, not the exchange's official index."


def _signals(inputs: BriefingInputs) -> list[Flowable]:
    signals = inputs["signals"]
    if not signals:
        reason = inputs["market"]["unavailable"] or "the latest market day is not scored yet (t1_predict has not run)"
        return section("Top AI signals", notice(reason))
    rows = [
        [
            i + 1,
            f"{s['symbol']} (halted)" if s["halted_since"] else s["symbol"],
            money(s["close"]),
            day_return(s, priced_day(inputs)),
            number(s["rsi_14"], 1),
            number(s["score"], 1),
            s["action"],
            s["tercile"],
            edge_against_cost(s),
        ]
        for i, s in enumerate(signals)
    ]
    table = data_table(
        [
            "#",
            "Symbol",
            in_currency("Price", inputs["currency"]),
            "Return",
            "RSI",
            "Score",
            "Action",
            "Tercile",
            "Edge / cost",
        ],
        rows,
        numeric_from=2,
    )
    note = text(
        f"Top {len(signals)} of {inputs['scored_instruments']} scored instruments by Score. Score: {SCORE_MEANS} "
        'Return: the day\'s change, "no trade" where the name did not trade that day (its price is then its last '
        "close). Edge / cost: the name's expected excess over the universe across the "
        f"{HORIZON} sessions from the next close against its round-trip cost (spread and two fees). LONG is a "
        f"rank, not a Score line: the {BOOK_NAMES} liquid ordinary shares with the largest expected excess, so "
        f"a higher Score can be HOLD (it fails the entry gates, or is not an ordinary share).{_halts(signals)}",
        SMALL,
    )
    return section("Top AI signals", *_record_said(signals), note, table)


def day_return(signal: SignalRow, day: str | None) -> str:
    """The signal's change on market `day`, or "no trade" where it did not trade that day (no
    volume, or a last bar of an earlier day), so that a price that did not move for want
    of a trade never reads as a firm "+0.00%" (Market sentiment counts it as not traded)."""
    if not signal["volume"] or str(signal["trading_date"]) != day:
        return "no trade"
    return signed_pct(signal["change_pct"])


def _record_said(signals: list[SignalRow]) -> list[Flowable]:
    """A box saying the Scores are the validation record's, where they are (a day before the
    first live day: views/market.py `day_scores`, never a mix), in the words each quote's
    `reason` says it with over REST; nothing for live Scores, whose `reason` is null."""
    reason = signals[0].get("reason")
    return [caution(f"Not live signals. Scores from the {reason}."), Spacer(0, 4)] if reason else []


def _halts(signals: list[SignalRow]) -> str:
    """What a signal marked "(halted)" means, name by name (its quote's `halted_since`), as
    a trade of it is refused; nothing when none is halted."""
    said = [halt_said(s["symbol"], date.fromisoformat(str(s["halted_since"]))) for s in signals if s["halted_since"]]
    return "".join(f" {line}." for line in said)


def edge_against_cost(signal: QuotedPrediction) -> str:
    """ "+0.16% / 4.47%": the held edge against the round-trip cost, "-" without an edge."""
    edge, cost = signal.get("held_edge"), signal.get("round_trip_cost")
    if edge is None or cost is None:
        return "-"
    return f"{fraction(edge, 2, signed=True)} / {fraction(cost, 2)}"


def _portfolio(ai: AIPortfolioSection, record: TrackRecordJson | dict, currency: str) -> list[Flowable]:
    """The AI portfolio's figures and positions, money in `currency`; its total return is
    since the track `record`'s first executed day, said beside the figure, and valued at
    `as_of`: where that close is after the record's last executed day (T0 delivered, T1 not
    yet run) a row says so, since the track record's total return runs only to that day."""
    opened, last = record.get("first"), record.get("last")
    if not ai["started"]:
        return section("AI portfolio", notice("the AI portfolio has not executed a day yet (T1 step 6, t1_trade)"))
    figures = key_figures(
        [
            ("Open positions", str(ai["positions_count"])),
            ("Entered as", entered_as(ai["positions"])),
            (in_currency("Portfolio value", currency), by_type(ai, AIPortfolioSection, "equity")),
            (in_currency("Cash", currency), by_type(ai, AIPortfolioSection, "cash")),
            (in_currency("Liquid equity", currency), by_type(ai, AIPortfolioSection, "liquid_equity")),
            (
                f"Total return since opening on {opened}" if opened else "Total return",
                signed_pct(ai["total_return_pct"]),
            ),
            ("Valued at close of", ai["as_of"]),
            *_executed_before(last, str(ai["as_of"])),
        ]
    )
    weights = {a["symbol"]: a["weight"] for a in ai["allocation"]}
    rows = [
        [
            p["symbol"],
            number(p["quantity"]),
            *(by_type(p, AIPosition, name) for name in ("average_cost", "price", "market_value")),
            pct(weights.get(p["symbol"], 0.0) * 100),
            by_type(p, AIPosition, "unrealized_pnl"),
            ", ".join(p["flags"]) or "-",
        ]
        for p in ai["positions"]
    ]
    cash = by_type(ai, AIPortfolioSection, "cash")
    rows.append(["CASH", "", "", "", cash, pct(weights.get("CASH", 0.0) * 100), "", ""])
    money_headings = (in_currency(h, currency) for h in ("Avg cost", "Price", "Value"))
    headings = ["Symbol", "Quantity", *money_headings, "Weight", in_currency("Unrealised PnL", currency), "Flags"]
    table = data_table(headings, rows, numeric_to=7)  # the flags are words: text, not a figure
    return section("AI portfolio", figures, Spacer(0, 6), table)


def _executed_before(last: str | None, valued: str) -> list[tuple[str, str]]:
    """The row that says the book's last executed day is before its valuation day, if it is."""
    if not last or last >= valued:
        return []
    return [("Last executed day", f"{last} (the track record's total return runs to it)")]


def entered_as(positions: Sequence[AIPosition]) -> str:
    """ "15 slots, 15 reserve": the open positions by what their opening buy entered as
    (portfolio/book.py: the mandate's slots, then the reserve capacity leaves room for)."""
    counts = Counter(p["entered_as"] for p in positions)
    words = {"slot": ("slot", "slots"), "reserve": ("reserve", "reserve"), None: ("not recorded", "not recorded")}
    return ", ".join(f"{counts[k]} {words[k][counts[k] != 1]}" for k in words if counts[k]) or "-"


def _track_record(record: TrackRecordJson, cost_model: str, currency: str) -> list[Flowable]:
    """Return, risk, turnover and costs (in `currency`) beside the equal-weighted liquid
    universe and the index, with what the book held (average exposure, fills); a book that
    held cash says its ratios describe cash, not skill (portfolio/track_record.py: `mostly_cash`)."""
    if record.get("days", 0) < 2:
        why = record.get("reason") or "fewer than two executed days: no statistics yet"
        return section("Track record", notice(why))
    columns = _BenchmarkColumns.of(record)
    rows = [*_held_rows(record, columns), *_book_rows(record, columns, currency), *_relative_rows(columns)]
    note = _track_record_note(record, cost_model)
    table = data_table(["Statistic", "AI portfolio", "Equal-weighted liquid", "Index"], rows)
    if columns.cash:
        return section("Track record", note, caution(record.get("note") or "The book held cash."), Spacer(0, 4), table)
    if record.get("note"):  # under a year of returns: why the figures a year read "-"
        return section("Track record", note, text(record["note"], SMALL), Spacer(0, 4), table)
    return section("Track record", note, table)


def _ratio(value: float | None) -> str:
    """A ratio to two decimals, "-" without one."""
    return "-" if value is None else fixed(value, 2)


def _times(value: float | None) -> str:
    """A multiple ("0.37x"), "-" without one (under a year of returns: not annualised)."""
    return "-" if value is None else f"{fixed(value, 2)}x"


@dataclass(frozen=True)
class _BenchmarkColumns:
    """The track record's two benchmark columns: the equal-weighted liquid universe's and
    the index's statistics (empty without an index), and whether the book held mostly cash."""

    liquid: dict[str, JsonValue]
    index: dict[str, JsonValue]
    cash: bool

    @classmethod
    def of(cls, record: TrackRecordJson) -> _BenchmarkColumns:
        """The columns of a track record (`TrackRecord.as_dict()`)."""
        liquid, index = (record["benchmarks"].get(name, {}) for name in ("equal_weight_liquid", "index"))
        return cls(liquid, index, bool(record.get("mostly_cash")))

    def against(self, key: str, shown: Callable[[float | None], str] | None = None) -> list[str]:
        """Both benchmarks' `key` as `shown` (default: the statistic's percentage,
        `statistic_pct`); "-" in the index's column without an index."""
        shown = shown or (lambda value: statistic_pct(key, value))
        return [shown(self.liquid.get(key)), shown(self.index.get(key)) if self.index else "-"]

    def skill(self, value: float | None) -> str:
        """A ratio; an all-cash book's ratio is not skill: the cell says so."""
        return f"{_ratio(value)} (cash)" if self.cash and value is not None else _ratio(value)


def _held_rows(record: TrackRecordJson, columns: _BenchmarkColumns) -> list[list[str]]:
    """What the book held: its average exposure (the benchmarks are fully invested) and fills."""
    exposure = record.get("average_exposure")
    invested = "fully invested"
    return [
        [
            "Average exposure (market value / equity)",
            "-" if exposure is None else pct(exposure * 100),
            invested,
            invested if columns.index else "-",
        ],
        ["Fills", number(record.get("fill_count", record.get("trades"))), "", ""],
    ]


def _book_rows(record: TrackRecordJson, columns: _BenchmarkColumns, currency: str) -> list[list[str]]:
    """The book's return (beside the benchmarks'), risk, turnover and costs paid (in `currency`)."""
    costs = record.get("costs") or {}
    return [
        [
            f"Total return to {record['last']}" if record.get("last") else "Total return",
            statistic_pct("total_return", record["total_return"]),
            *columns.against("total_return"),
        ],
        ["Annual return", statistic_pct("annual_return", record["annual_return"]), *columns.against("annual_return")],
        ["Annual volatility", statistic_pct("annual_volatility", record["annual_volatility"]), "", ""],
        ["Sharpe / Sortino", f"{_ratio(record['sharpe'])} / {_ratio(record['sortino'])}", "", ""],
        [
            "Maximum drawdown / Calmar",
            f"{statistic_pct('max_drawdown', record['max_drawdown'])} / {_ratio(record['calmar'])}",
            "",
            "",
        ],
        ["Annual turnover", _times(record.get("annual_turnover")), "", ""],
        [
            f"{in_currency('Costs paid', currency)}: fees / spread / impact",
            " / ".join(by_type(costs, CostsPaid, part) for part in ("fees", "spread", "impact")),
            "",
            "",
        ],
    ]


def _relative_rows(columns: _BenchmarkColumns) -> list[list[str]]:
    """The book against each benchmark: excess return, tracking error and the ratios."""
    return [
        ["Excess annual return (book - benchmark)", "", *columns.against("excess_annual_return")],
        ["Tracking error", "", *columns.against("tracking_error")],
        ["Information ratio", "", *columns.against("information_ratio", columns.skill)],
        ["Beta", "", *columns.against("beta", columns.skill)],
    ]


def _track_record_note(record: TrackRecordJson, cost_model: str) -> Flowable:
    """The span, the fills, the cost model and what the benchmarks and statistics are."""
    fills = record.get("fill_count", record.get("trades", 0))
    return text(
        f"{record['days']} executed days from {record['first']} to {record['last']}{record_split(record)}, "
        f"{counted(fills, 'fill')}. {cost_model} "
        f"Benchmarks (fully invested, no costs): the names that passed the entry gates at each month's start, "
        f"held equally; {index_label(record)}. Statistics: empyrical-reloaded, 250 trading days a year, no "
        "risk-free rate.",
        SMALL,
    )


RECORD_WORDS = {
    "validation": "replayed on the validation record's out-of-sample predictions before the first live day",
    "live": "live",
}


def record_split(record: TrackRecordJson) -> str:
    """ ": 60 replayed on the validation record's ... (2026-09-03 to 2026-11-26), 1 live
    (2026-11-27)": which of the executed days were a replay, so that a replay is never read
    as live results; "" when the record is one kind of day or says nothing of its parts."""
    parts = record.get("records") or {}
    if len(parts) < 2:
        only = next(iter(parts), None)
        return f", all {RECORD_WORDS[only]}" if only in RECORD_WORDS else ""
    spans = [
        f"{part['days']} {RECORD_WORDS.get(name, name)}{_span(part)}"
        for name, part in parts.items()
        if part and part.get("days")
    ]
    return ": " + ", ".join(spans)


def _span(part: dict) -> str:
    """ " (2026-09-03 to 2026-11-26)"; "" where the part has no dates (a day alone has no statistics)."""
    first, last = part.get("first"), part.get("last")
    if not first:
        return ""
    return f" ({first})" if first == last else f" ({first} to {last})"


def index_label(record: TrackRecordJson) -> str:
    """What the `index` benchmark is (views/track_record.py: `index_source`)."""
    source = record.get("index_source")
    if source == "cap_weighted":
        return "the service's capitalisation-weighted index"
    return f"the exchange's published index {source}" if source else "no index (none published, no shares outstanding)"


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _against_benchmarks(series: TrackSeries, width: float) -> list[Flowable]:
    """Cumulative return against the benchmarks with the drawdown, and the monthly returns."""
    if len(series.get("days", [])) < 2:
        return section("Against the benchmarks", notice("fewer than two executed days: nothing to compare yet"))
    chart = charts.against_benchmarks(
        [date.fromisoformat(d) for d in series["days"]],
        series["book"],
        series["benchmarks"],
        series["drawdown"],
        width,
        index_name=series.get("index_source"),
    )
    by_year: dict[int, dict[int, float]] = {}
    for m in series["monthly"]:
        by_year.setdefault(m["year"], {})[m["month"]] = m["return"]
    shown = sorted({m["month"] for m in series["monthly"]})
    rows = [
        [str(year), *(signed_pct(months[k] * 100, 2) if k in months else "" for k in shown)]
        for year, months in sorted(by_year.items())
    ]
    table = data_table(["Year", *(MONTHS[k - 1] for k in shown)], rows)
    # the table's title never ends a page: it moves with the table
    return section(
        "Against the benchmarks", chart, Spacer(0, 4), *kept(text("Monthly returns of the AI portfolio", SMALL), table)
    )


def _against_nulls(nulls: NullBooksJson | None, series: TrackSeries, width: float) -> list[Flowable]:
    """The AI book's curve inside the band of its null books, what the nulls showed in
    words (reports/format.py `null_books_summary`, as the Compliance Report states it) and
    each family's figures beside the replayed model book's."""
    band = series.get("nulls") or {}
    summary = text(null_books_summary(nulls), SMALL)
    if not nulls or nulls["days"] < 2 or len(band.get("days") or []) < 2:
        return section("Against its null books", summary)
    days = [d if isinstance(d, date) else date.fromisoformat(d) for d in band["days"]]
    chart = charts.against_nulls(days, series["book"], band, width)
    rows = [
        [
            "Model's book, replayed",
            "",
            ratio(nulls["model_information_ratio"]),
            statistic_pct("excess_annual_return", nulls["model_excess_annual_return"]),
            "",
        ],
        *(_null_row(family, figures) for family, figures in nulls["families"].items()),
    ]
    table = data_table(
        ["Book", "Books", "IR vs liquid universe: mean (range)", "Excess a year, mean", "Model's percentile"], rows
    )
    caption = text(
        'Information ratio and excess a year against the equal-weighted liquid universe (the excess "-" under a year '
        "of returns: not annualised); the model's percentile: the share of the family's books whose information "
        "ratio is below the replayed model book's, ties counting half; over one book, whether it beats it; over "
        f"fewer than {FEW_BOOKS}, too few to read.",
        SMALL,
    )
    # the summary leads (kept with the heading), the chart follows where it fits: kept together, the two
    # are most of a page and left the page before them part blank
    return section("Against its null books", summary, Spacer(0, 4), chart, Spacer(0, 4), *kept(caption, table))


def _null_row(family: str, figures: dict[str, JsonValue]) -> list[str]:
    """A null family's row: its books, their information ratios, their mean excess and the model's percentile;
    one dash for the ratios where the books have none (under 20 days of returns: the summary says why)."""
    ir = figures["information_ratio"]
    if not figures["books"]:
        return [NULL_FAMILY_LABELS.get(family, family), "0", DASH, DASH, DASH]
    spread = DASH if ir["mean"] is None else f"{ratio(ir['mean'])} ({ratio(ir['lowest'])} to {ratio(ir['highest'])})"
    percentile = percentile_words(figures["model_percentile"], figures["model_beats"], figures["books"], DASH)
    excess = statistic_pct("excess_annual_return", figures["excess_annual_return"]["mean"])
    return [NULL_FAMILY_LABELS.get(family, family), str(figures["books"]), spread, excess, percentile]


WRITTEN_DOWN_LISTED = 5  # the latest days named under the chart; the rest are counted


def _written_down_note(curve: list[CurveDay], currency: str) -> list[Flowable]:
    """Under the equity curve, when liquid equity left out untraded holdings on some days:
    which days, which holdings and how much (the chart marks the same days)."""
    days = [d for d in curve if d.get("untraded_written_down")]
    if not days:
        return []
    listed = [
        f"{d['trading_date']} ({', '.join(_written_down_name(s, d) for s in d['untraded_written_down'])}: "
        f"{money_in(sum(float(v) for v in d['untraded_written_down'].values()), currency)} left out)"
        for d in reversed(days[-WRITTEN_DOWN_LISTED:])
    ]
    earlier = len(days) - WRITTEN_DOWN_LISTED
    more = f"; and {earlier} earlier day{'' if earlier == 1 else 's'}" if earlier > 0 else ""
    delisted = any(_delisted_on(d) & set(d["untraded_written_down"]) for d in days)
    return [
        Spacer(0, 2),
        text(
            f"{charts.WRITTEN_DOWN_LABEL} (the triangles on the liquid-equity line): a holding that did not trade that "
            "day cannot be sold, so liquid equity leaves out its whole value (the exit rail's TRAPPED) until it trades "
            f"again, while equity keeps it at its last close{DELISTED_WRITTEN_DOWN if delisted else ''}; a holding "
            f"that traded at a spread above {HIGH_SPREAD:.0%} is discounted by its spread, unmarked. On {len(days)} of "
            f"{len(curve)} executed days, latest first: {'; '.join(listed)}{more}.",
            SMALL,
        ),
    ]


# What the note adds where a holding left out was delisted (portfolio/delisting.py): it will
# not trade again, and its value is the delisting rule's, not its last close.
DELISTED_WRITTEN_DOWN = (
    "; a delisted holding (named so) will not trade again: liquid equity leaves out all of what the delisting "
    "rule values it at (its last close, a corporate action's value per share, or nothing), which equity keeps"
)


def _delisted_on(day: CurveDay) -> set[str]:
    """The holdings delisted on an executed day, as its stored record lists them."""
    return {str(r["symbol"]) for r in (day.get("summary") or {}).get("delisted") or []}


def _written_down_name(symbol: str, day: CurveDay) -> str:
    """A holding the note names for `day`, marked where it was delisted."""
    return f"delisted {symbol}" if symbol in _delisted_on(day) else symbol


def _charts(inputs: BriefingInputs, width: float, closing: list[Flowable]) -> list[Flowable]:
    """Both charts; the last one's rule kept on one page with `closing` (the logos), which
    never stand alone on the last page."""
    curve = inputs["equity_curve"]
    equity: list[Flowable] = (
        [
            charts.equity_curve(
                [date.fromisoformat(d["trading_date"]) for d in curve],
                [d["equity"] for d in curve],
                [d["liquid_equity"] for d in curve],
                float(inputs["ai_portfolio"]["starting_cash"]),
                width,
                inputs["currency"],
                [bool(d.get("untraded_written_down")) for d in curve],
            ),
            *_written_down_note(curve, inputs["currency"]),
        ]
        if curve
        else [notice("no executed day yet, so no equity curve")]
    )
    scores = inputs["scores"]
    distribution: Flowable = (
        charts.score_distribution(scores, width) if scores else notice("no scored instruments on the latest market day")
    )
    rule = text(
        f"The Score is the calibrated chance that a name beats the equal-weighted liquid universe over the {HORIZON} "
        "sessions from the next close. LONG: one of the "
        f"{BOOK_NAMES} liquid ordinary shares with the largest expected excess (what a book starting from cash "
        "today would hold; the AI book keeps a held name until a candidate beats it by more than the pair's "
        "round trip, and fills slots capacity leaves short with reserve names); AVOID: an "
        "expected excess below minus a round trip (the spread and two fees); HOLD otherwise. "
        "GET /api/market/latest gives each name's reason.",
        SMALL,
    )
    # the chart starts under its heading where it fits; its rule and the logos follow, together
    return [*section("Equity curve", *equity), *section("Score distribution", distribution, *kept(rule, *closing))]
