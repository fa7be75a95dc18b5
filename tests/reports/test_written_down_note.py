"""The Briefing's note under the equity curve says a holding left out of liquid equity is
left out "until it trades again, while equity keeps it at its last close". A delisted
holding will not trade again, and equity keeps it at the delisting rule's value: where one
is left out, the note names it as delisted and says what that means."""

from __future__ import annotations

from reports.layout import render
from reports.quant_briefing import _written_down_note
from tests.reports.pdf import read


def _day(trading_date: str, written_down: dict[str, float], delisted: list[str]) -> dict:
    summary = {"delisted": [{"symbol": s, "valued_at": "last close"} for s in delisted]}
    return {"trading_date": trading_date, "summary": summary, "untraded_written_down": written_down}


def _note(curve: list[dict]) -> str:
    story = _written_down_note(curve, "JMD")
    return " ".join(read(render(story, company="Co", title="Note", page_size="A4", subject="test").pdf).text.split())


def test_a_delisted_holding_left_out_is_named_delisted_not_until_it_trades_again() -> None:
    curve = [_day("2026-11-19", {"THN": 500.0}, []), _day("2026-11-20", {"GONE": 1000.0, "THN": 500.0}, ["GONE"])]
    note = _note(curve)
    assert "2026-11-20 (delisted GONE, THN:" in note and "2026-11-19 (THN:" in note, note
    assert "a delisted holding (named so) will not trade again" in note, note
    assert "what the delisting rule values it at" in note, note


def test_without_a_delisted_holding_the_note_says_nothing_of_delisting() -> None:
    note = _note([_day("2026-11-20", {"THN": 500.0}, [])])
    assert "until it trades again" in note and "delist" not in note, note


def test_the_api_says_a_delisted_holding_is_left_out_for_good(tmp_path) -> None:
    """REST's and GraphQL's illiquid discounts said TRAPPED (whole value) and HIGH_SPREAD
    only: a delisted holding's discount is all of the delisting rule's value, for good."""
    from pydantic import SecretStr

    from api.app import create_app
    from api.graphql.schema import build_schema
    from market.settings import Settings
    from tests.conftest import ADMIN_KEY

    settings = Settings(_env_file=None, database_url=f"sqlite:///{tmp_path / 's.db'}", admin_key=SecretStr(ADMIN_KEY))
    rest = create_app(settings).openapi()["components"]["schemas"]["PortfolioSummary"]["properties"]
    graphql = build_schema(settings).as_str()
    said = "DELISTED: all of what the delisting rule values it at (it will not trade again"
    assert said in rest["illiquid_discounts"]["description"], rest["illiquid_discounts"]
    assert graphql.count(said) == 2, "Portfolio and AIPortfolio's illiquidDiscounts"
