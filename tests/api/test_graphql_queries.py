"""The DataLoaders keep a list of N instruments at a fixed number of SQL statements: the
acceptance case is 60 instruments, each with its latest prediction and last 20 bars."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, event

from api.app import create_app
from market.settings import Settings
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import event_loop_reader, server_reader
from store.history import append_history
from tests.api.conftest import Api, Clock
from tests.api.graph import data
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import DAY, days_up_to, seed_predictions
from views.bars import refresh_bars

INSTRUMENTS = 60
QUERY = """query($n: Int) { instruments(first: $n) { nodes { symbol
    latestPrediction { score action tercile }
    recentBars(first: 20) { nodes { tradingDate close rsi14 volumeRatio20 } } } } }"""


def _seed(engine: Engine) -> None:
    symbols = [f"S{i:02d}" for i in range(INSTRUMENTS)]
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [{"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"} for s in symbols],
        )
        append_history(
            conn,
            tables.eod_prices,
            [
                {
                    "symbol": s,
                    "trading_date": d,
                    "close": round(10 + i + math.sin(k / 4), 2),
                    "volume": 1000 * (i + 1),
                    "source": "test",
                }
                for i, s in enumerate(symbols)
                for k, d in enumerate(days_up_to(DAY, 40))
            ],
        )
        refresh_bars(conn)  # as the stage runner does after T0 appends prices
    seed_predictions(
        engine, DAY, {s: {"score": 40 + i % 50, "action": "HOLD", "tercile": "MIDDLE"} for i, s in enumerate(symbols)}
    )


class StatementCounter:
    """The statements the database is sent, counted at the driver (SQLite's trace callback,
    a counting psycopg cursor class), so that reads made on the driver's own cursor
    (store/history.py `newest_ids`) count as well as SQLAlchemy's; on a SQLite file those
    on the event-loop reader's own connection too (store/engine.py `EventLoopReader`:
    closed here, so its next read connects where the counter sees it), and on a server
    those on its server reader's (`ServerReader`, closed here likewise)."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        counter = self

        class Counting(psycopg.Cursor):
            def execute(self, query, params=None, **kwargs):
                counter._seen(str(query))
                return super().execute(query, params, **kwargs)

        class CountingAsync(psycopg.AsyncCursor):
            async def execute(self, query, params=None, **kwargs):
                counter._seen(str(query))
                return await super().execute(query, params, **kwargs)

        self._cursor, self._async_cursor = Counting, CountingAsync
        event.listen(engine, "checkout", self._watch)
        reader = event_loop_reader(engine)
        if reader is not None:
            reader.close()
            event.listen(reader.engine, "checkout", self._watch)
        server = server_reader(engine)
        if server is not None:
            server.close()
            event.listen(server.engine.sync_engine, "checkout", self._watch)

    def _watch(self, dbapi_connection, *_: object) -> None:
        if isinstance(dbapi_connection, sqlite3.Connection):
            dbapi_connection.set_trace_callback(self._seen)
        elif isinstance(dbapi_connection, psycopg.Connection):
            dbapi_connection.cursor_factory = self._cursor
        else:  # the server reader's, as SQLAlchemy's asyncio extension adapts it
            dbapi_connection.driver_connection.cursor_factory = self._async_cursor

    def _seen(self, statement: str) -> None:
        # Transaction control (SQLite's BEGIN per connection, ROLLBACK on return), not a query.
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")):
            self.count += 1

    def during(self, action) -> int:
        before = self.count
        action()
        return self.count - before


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Api, StatementCounter]]:
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)})
    app = create_app(settings, now=Clock())
    _seed(app.state.services.engine)
    counter = StatementCounter(app.state.services.engine)
    with serve_in_thread(app) as base:
        api = Api(base, None, Clock())  # type: ignore[arg-type]
        yield api, counter
        api.http.close()


def test_sixty_instruments_with_prediction_and_bars_take_a_fixed_number_of_queries(served) -> None:
    api, counter = served
    answers: dict[int, dict] = {}

    def fetch(n: int) -> None:
        answers[n] = data(api, QUERY, ADMIN_KEY, {"n": n})

    fetch(2)  # the document is known as a market query from here on (api/graphql/cache.py `remembered`)
    statements = {n: counter.during(lambda n=n: fetch(n)) for n in (INSTRUMENTS, 6, 1)}
    nodes = answers[INSTRUMENTS]["instruments"]["nodes"]
    assert len(nodes) == INSTRUMENTS
    assert all(len(n["recentBars"]["nodes"]) == 20 and n["latestPrediction"]["action"] == "HOLD" for n in nodes)
    assert nodes[-1]["recentBars"]["nodes"][-1]["tradingDate"] == DAY.isoformat()
    assert statements[INSTRUMENTS] == statements[6] == statements[1], statements
    # its kept answer looked up first (the market tables' version: 1, api/graphql/schema.py
    # KeptAnswerRoute), none kept for these variables, so executed: the market tables'
    # version 1 (api/graphql/cache.py), instruments 1, latest predictions 3 (their version,
    # latest scored day, its rows), last 20 bars 3 (the stored bars' version, whether they
    # were built from the newest price, then every symbol's stored bars in one statement)
    assert statements[INSTRUMENTS] == 9, statements
    # Asked again with nothing new in the store: the kept result, after its version's one statement.
    again = counter.during(lambda: fetch(INSTRUMENTS))
    assert again == 1 and answers[INSTRUMENTS]["instruments"]["nodes"] == nodes, again
