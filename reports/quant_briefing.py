"""The Quant Briefing: how the model has done out of sample, the market's breadth, the top
signals by Score, the AI portfolio with its equity curve, and the day's Score distribution.
Built from `inputs.briefing_inputs`; every missing piece is said, never an error."""
from __future__ import annotations

from datetime import date
from typing import Any

from reportlab.platypus import Flowable, Spacer

from models.decisions import AVOID_SCORE, LONG_SCORE
from reports import charts
from views.performance import shown_record
from reports.format import backend_line, metric_rows, money, number, pct, record_caption, signed_pct
from reports.layout import SMALL, SUBTITLE, TITLE, content_width, data_table, key_figures, kept, notice, section, text
from reports.logos import powered_by

TITLE_TEXT = "Quant Briefing"


def story(inputs: dict[str, Any], generated: str, page_size: str) -> list[Flowable]:
    width = content_width(page_size)
    market = inputs["market"]
    day = market["breadth"]["trading_date"] if market["breadth"] else None
    return [
        text(TITLE_TEXT, TITLE),
        text(f"Market day {day or 'not delivered yet'}  |  generated {generated}", SUBTITLE),
        *_performance(inputs["performance"]),
        *_sentiment(market),
        *_signals(inputs),
        *_portfolio(inputs["ai_portfolio"]),
        *_charts(inputs, width, closing=section("Powered by", powered_by(width))),
    ]


def _performance(perf: dict[str, Any]) -> list[Flowable]:
    record = shown_record(perf)
    rows = metric_rows(record, ("binary_accuracy", "movers_accuracy", "tercile_spread"))
    blocks: list[Flowable] = [
        text(record_caption(perf, record), SMALL),
        data_table(["Out-of-sample metric", "Value", "Base rate", "Sample"], rows) if rows else notice(record["reason"] or "no metrics"),
        Spacer(0, 4),
        key_figures([("Training rows", number(perf["training_rows"])), ("Model", perf["model_id"] or "none yet"),
                     ("Evaluated through", record["evaluated_through"] or "no realised outcome yet"),
                     ("Layer 1", backend_line(perf))]),
    ]
    return section("System performance", *blocks)


def _sentiment(market: dict[str, Any]) -> list[Flowable]:
    breadth = market["breadth"]
    if breadth is None:
        return section("Market sentiment", notice(market["unavailable"]))
    mood = ("Advancers led" if breadth["advancers"] > breadth["decliners"] else
            "Decliners led" if breadth["decliners"] > breadth["advancers"] else "Advancers and decliners were level")
    figures = key_figures([
        ("Index change", signed_pct(breadth["index_change_pct"])),
        ("Advancers", str(breadth["advancers"])), ("Decliners", str(breadth["decliners"])),
        ("Unchanged (traded firm)", str(breadth["unchanged"])), ("Did not trade", str(breadth["not_traded"])),
    ])
    explain = text(f"{mood}: {breadth['advancers']} up, {breadth['decliners']} down, {breadth['unchanged']} unchanged "
                   f"of {breadth['traded']} stocks that traded on {breadth['trading_date']}. Index: the service's "
                   f"capitalisation-weighted index of {breadth['index_constituents']} instruments, not the exchange's "
                   "official index.", SMALL)
    return section("Market sentiment", figures, explain)


def _signals(inputs: dict[str, Any]) -> list[Flowable]:
    signals = inputs["signals"]
    if not signals:
        reason = inputs["market"]["unavailable"] or "the latest market day is not scored yet (t1_predict has not run)"
        return section("Top AI signals", notice(reason))
    rows = [[i + 1, s["symbol"], money(s["close"]), signed_pct(s["change_pct"]), number(s["rsi"], 1),
             signed_pct(s["predicted_return"] * 100 if s["predicted_return"] is not None else None, 2),
             number(s["score"], 1), s["action"], s["tercile"]] for i, s in enumerate(signals)]
    table = data_table(["#", "Symbol", "Price", "Return", "RSI", "AI pred. return", "Score", "Action", "Tercile"], rows,
                       numeric_from=2)
    note = text(f"Top {len(signals)} of {inputs['scored_instruments']} scored instruments by Score (0-100 conviction "
                f"that the close rises over the horizon; calibrated). Return: the day's change.", SMALL)
    return section("Top AI signals", note, table)


def _portfolio(ai: dict[str, Any]) -> list[Flowable]:
    if not ai["started"]:
        return section("AI portfolio", notice("the AI portfolio has not executed a day yet (T1 step 6, t1_trade)"))
    figures = key_figures([
        ("Open positions", str(ai["positions_count"])), ("Portfolio value", money(ai["equity"])),
        ("Cash", money(ai["cash"])), ("Liquid equity", money(ai["liquid_equity"])),
        ("Total return", signed_pct(ai["total_return_pct"])), ("Valued at close of", ai["as_of"]),
    ])
    weights = {a["symbol"]: a["weight"] for a in ai["allocation"]}
    rows = [[p["symbol"], number(p["quantity"]), money(p["average_cost"]), money(p["price"]), money(p["market_value"]),
             pct(weights.get(p["symbol"], 0.0) * 100), money(p["unrealized_pnl"]), ", ".join(p["flags"]) or "-"]
            for p in ai["positions"]]
    rows.append(["CASH", "", "", "", money(ai["cash"]), pct(weights.get("CASH", 0.0) * 100), "", ""])
    table = data_table(["Symbol", "Quantity", "Avg cost", "Price", "Value", "Weight", "Unrealised PnL", "Flags"], rows)
    return section("AI portfolio", figures, Spacer(0, 6), table)


def _charts(inputs: dict[str, Any], width: float, closing: list[Flowable]) -> list[Flowable]:
    """Both charts; the last one kept on one page with `closing` (the logos), which never
    stand alone on the last page."""
    curve = inputs["equity_curve"]
    equity: Flowable = (charts.equity_curve([date.fromisoformat(d["trading_date"]) for d in curve],
                                            [d["equity"] for d in curve], [d["liquid_equity"] for d in curve],
                                            float(inputs["ai_portfolio"]["starting_cash"]), width, inputs["currency"])
                        if curve else notice("no executed day yet, so no equity curve"))
    scores = inputs["scores"]
    distribution: Flowable = (charts.score_distribution(scores, LONG_SCORE, AVOID_SCORE, width) if scores
                              else notice("no scored instruments on the latest market day"))
    return [*section("Equity curve", equity), *kept(*section("Score distribution", distribution), *closing)]
