"""The reports print the API's notes as they are, so the notes are plain words: a short
record's (under a year of returns, nothing annualised) name no field of the track record
the API serves and say of no figure that it "is null" (portfolio/track_record.py,
portfolio/nulls.py)."""

from __future__ import annotations

import re
from dataclasses import fields
from datetime import UTC, datetime

import pytest

from market.clock import default_calendar
from market.fees import fee_schedule
from market.settings import Settings
from portfolio import track_record
from reports import generate
from store.engine import service_engine
from tests.conftest import ON_SQLITE_ONLY
from tests.portfolio.planted_store import planted_world
from tests.reports.pdf import read

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
RECORD_TYPES = (
    track_record.TrackRecord,
    track_record.BenchmarkComparison,
    track_record.CostsPaid,
    track_record.NullRecord,
    track_record.NullFamily,
    track_record.NullSpread,
)
# The API's snake_case names (the Compliance Report lists the model's features by theirs, on purpose).
FIELD_NAMES = (
    {f.name for kind in RECORD_TYPES for f in fields(kind) if "_" in f.name}
    | set(track_record.BENCHMARKS)
    | set(track_record.NULL_FAMILY_RANKINGS)
)
SNAKE_CASE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")
NULL_VALUE = re.compile(r"\bnull\b(?! (?:book|famil|band))", re.IGNORECASE)  # "null books" is the method's name


def _around(text: str, pattern: re.Pattern[str], keep=lambda word: True) -> list[str]:
    return [text[max(0, m.start() - 80) : m.end() + 40] for m in pattern.finditer(text) if keep(m.group(0))]


@ON_SQLITE_ONLY
@pytest.mark.parametrize("kind", ["quant-briefing", "compliance"])
def test_a_short_records_notes_read_as_plain_words_in_the_reports(settings: Settings, kind: str) -> None:
    planted_world(settings.database_url, 0, True, settings.ai_starting_cash, fee_schedule(settings))
    text = " ".join(read(generate(kind, service_engine(settings), settings, default_calendar(), NOW).pdf).text.split())
    assert "a return over less than a year is not annualised (GIPS)" in text, "30 days: the note is printed"
    assert _around(text, SNAKE_CASE, lambda word: word in FIELD_NAMES) == []
    assert _around(text, NULL_VALUE) == []
    assert "return over these days" in text
