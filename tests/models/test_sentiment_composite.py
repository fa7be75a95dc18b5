"""The composite's arithmetic, its point-in-time rule, and the acceptance check that it
carries the simulator's planted signal (and nothing when the signal is switched off)."""

from datetime import date, timedelta
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from ingest.simulator.market import SimulatedMarket
from market.clock import session_close_utc
from market.settings import Settings
from models.sentiment.composite import (
    HALF_LIFE_DAYS,
    MARKET,
    PRIOR_WEIGHT,
    SOURCE_WEIGHTS,
    ScoredText,
    composite_rows,
)
from pipeline.backfill import backfill
from pipeline.sentiment import build_composite
from store import tables
from store.engine import build_engine, service_engine
from store.history import append_history, current_rows
from store.migrations import upgrade

DAY = date(2026, 11, 20)
CLOSE = session_close_utc(DAY)


def _text(kind: str, doc_id: int, hours_before_close: float, score: float, *symbols: str) -> ScoredText:
    return ScoredText(kind, doc_id, CLOSE - timedelta(hours=hours_before_close), score, frozenset(symbols))


def test_weights_decay_by_age_and_shrink_toward_neutral() -> None:
    texts = [_text("NEWS", 1, 0, 0.8, "KCB"), _text("DISCLOSURE", 2, 36, -0.4, "KCB")]
    rows = {r["symbol"]: r for r in composite_rows(DAY, texts, ["KCB", "ISB"])}
    w1, w2 = SOURCE_WEIGHTS["NEWS"], SOURCE_WEIGHTS["DISCLOSURE"] * 0.5 ** (1.5 / HALF_LIFE_DAYS)
    assert rows["KCB"]["score"] == pytest.approx((0.8 * w1 - 0.4 * w2) / (w1 + w2 + PRIOR_WEIGHT), abs=1e-6)
    assert rows["KCB"]["item_count"] == 2
    assert [(i["kind"], i["id"]) for i in rows["KCB"]["inputs"]] == [("DISCLOSURE", 2), ("NEWS", 1)]
    assert rows["ISB"] == {
        "symbol": "ISB",
        "trading_date": DAY,
        "method": "decay-v1",
        "score": 0.0,
        "item_count": 0,
        "inputs": [],
    }
    assert rows[MARKET]["item_count"] == 2


def test_market_composite_uses_texts_that_name_no_instrument() -> None:
    rows = {r["symbol"]: r for r in composite_rows(DAY, [_text("NEWS", 1, 1, -0.6)], ["KCB"])}
    assert rows["KCB"]["item_count"] == 0 and rows[MARKET]["score"] < 0


def test_texts_after_the_close_wait_for_the_next_day(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [{"symbol": "KCB", "name": "Kingston Commercial Bank", "board": "MAIN", "source": "t"}],
        )
        append_history(
            conn,
            tables.news_items,
            [
                {
                    "content_hash": "a",
                    "title": "KCB profit surges",
                    "feed_url": "f",
                    "published_at": CLOSE - timedelta(minutes=1),
                },
                {
                    "content_hash": "b",
                    "title": "KCB faces fraud probe",
                    "feed_url": "f",
                    "published_at": CLOSE + timedelta(minutes=1),
                },
            ],
        )
        for news in current_rows(conn, tables.news_items):
            append_history(
                conn,
                tables.document_mentions,
                [{"doc_kind": "NEWS", "doc_id": news["id"], "symbol": "KCB", "matched_by": "symbol"}],
            )
        today = {r["symbol"]: r for r in build_composite(conn, DAY)}
        tomorrow = {r["symbol"]: r for r in build_composite(conn, date(2026, 11, 23))}
        again = build_composite(conn, DAY)
        stored = current_rows(
            conn, tables.sentiment_composites, where=[tables.sentiment_composites.c.trading_date == DAY]
        )
    assert today["KCB"]["item_count"] == 1 and today["KCB"]["score"] > 0
    assert tomorrow["KCB"]["item_count"] == 2 and tomorrow["KCB"]["score"] < today["KCB"]["score"]
    assert again == list(today.values()) and len(stored) == 2  # KCB and ^MARKET, stored once


def _rank_correlation_with_next_day_returns(tmp_path: Path, news_signal: float) -> tuple[float, float, int]:
    settings = Settings(
        _env_file=None, database_url=f"sqlite:///{tmp_path / f'signal{news_signal}.db'}", data_dir=tmp_path / "data"
    )
    engine = build_engine(settings.database_url)
    upgrade(engine)
    backfill(engine, settings, 120, DAY, SimulatedMarket(seed=7, size=60, news_signal=news_signal))
    with engine.connect() as conn:
        composites = [
            r for r in current_rows(conn, tables.sentiment_composites) if r["item_count"] and r["symbol"] != MARKET
        ]
        prices = {(r["symbol"], r["trading_date"]): r for r in current_rows(conn, tables.eod_prices)}
    engine.dispose()
    days = sorted({d for _, d in prices})
    following = dict(zip(days, days[1:]))
    pairs = []
    for row in composites:
        bar = prices.get((row["symbol"], following.get(row["trading_date"])))
        if bar and bar["volume"] > 0:
            pairs.append((row["score"], bar["close"] / bar["prev_close"] - 1))
    result = spearmanr([p[0] for p in pairs], [p[1] for p in pairs])
    return float(result.statistic), float(result.pvalue), len(pairs)


@pytest.mark.slow
def test_composite_carries_the_planted_signal_and_nothing_without_it(tmp_path: Path) -> None:
    with_signal, p_with, n = _rank_correlation_with_next_day_returns(tmp_path, 1.0)
    without, p_without, _ = _rank_correlation_with_next_day_returns(tmp_path, 0.0)
    assert n > 1000
    assert with_signal > 0.05 and p_with < 0.01, (with_signal, p_with)
    assert p_without > 0.01, (without, p_without)  # no significant information
    assert with_signal - without > 0.05
