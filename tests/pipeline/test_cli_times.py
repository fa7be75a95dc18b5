"""Times the CLI prints follow the output contract (market/contract.py, docs/api.md "One
contract for every response"): exchange time (UTC-5 all year), ISO 8601 without offset,
to the second, in a line of text as in JSON (issue 64: `db status` printed `+00:00`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from cli.output import contract_json, shown
from store.engine import build_engine
from store.migrations import status
from tests.pipeline.test_cli import cli

EXCHANGE = timedelta(hours=-5)  # America/Jamaica: no daylight saving


def _exchange_time(moment: datetime) -> str:
    utc = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (utc.astimezone(UTC) + EXCHANGE).strftime("%Y-%m-%dT%H:%M:%S")


def test_db_status_prints_when_each_migration_was_applied_in_exchange_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", url)
    assert cli("db", "upgrade").returncode == 0
    printed = cli("db", "status")
    assert printed.returncode == 0, printed.stderr
    times = re.findall(r"^\d{4}\s+\S+\s+applied\s+(\S+)$", printed.stdout, re.M)
    engine = build_engine(url)
    stored = [state.applied_at for state in status(engine)]
    engine.dispose()
    assert times and len(times) == len(stored)
    assert times == [_exchange_time(moment) for moment in stored]
    assert "+00:00" not in printed.stdout


def test_a_moment_prints_in_exchange_time_in_text_and_json_whatever_its_name() -> None:
    moment = datetime(2026, 11, 20, 21, 5, 30, 123456, tzinfo=UTC)
    assert shown(moment) == "2026-11-20T16:05:30" == shown(moment.replace(tzinfo=None))  # stored UTC, naive
    assert (shown(date(2026, 11, 20)), shown(None)) == ("2026-11-20", "-")
    assert json.loads(contract_json({"generated": moment, "day": date(2026, 11, 20)})) == {
        "generated": "2026-11-20T16:05:30",
        "day": "2026-11-20",
    }
