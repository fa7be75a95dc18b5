"""The Top signals of the day's analysis and the Quant Briefing: listed in the model's order
(equal Scores by the ranking's keys, not by symbol), the held edge formatted once from the
value as stored (views/market.py `signal_order`, `QUOTED`)."""

from __future__ import annotations

from datetime import date

from models.scoring import ServedPrediction
from reports.quant_briefing import edge_against_cost
from views.market import quoted, signal_order


def _prediction(symbol: str, score: float, held_edge: float, raw_score: float) -> ServedPrediction:
    row = {
        "symbol": symbol,
        "trading_date": date(2026, 11, 27),
        "model_id": "m",
        "score": score,
        "held_edge": held_edge,
        "round_trip_cost": 0.0273,
        "raw_score": raw_score,
        "reasons": {"base_value": 0.0, "top": []},
    }
    return ServedPrediction.from_row(row)


def test_equal_scores_follow_the_ranking_not_the_alphabet() -> None:
    quotes = [
        {"symbol": s, **quoted(_prediction(s, 51.7, edge, raw))}
        for s, edge, raw in (("AAA", 0.001, 0.2), ("BBB", 0.004, 0.1), ("CCC", 0.004, 0.3), ("DDD", 0.002, 0.0))
    ]
    quotes.append({"symbol": "ZZZ", **quoted(_prediction("ZZZ", 60.0, -0.01, -0.5))})
    assert [q["symbol"] for q in sorted(quotes, key=signal_order)] == ["ZZZ", "CCC", "BBB", "DDD", "AAA"]


def test_the_held_edge_is_rounded_once() -> None:
    quote = quoted(_prediction("HLF", 55.0, 0.00185015, 0.1))
    assert edge_against_cost(quote) == "+0.19% / 2.73%"  # the reason's +0.19%; rounded twice it read +0.18%
