"""GraphQL `instruments` lists the names listed on the latest closed day: a delisted one was
listed for good (ten months on in the demo), with no field saying so. It is read by its
symbol, with `delistedOn`; the REST latest day and breadth leave it out likewise
(tests/views/test_delisted_latest.py)."""

from __future__ import annotations

from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import DAY

LISTING = "{ instruments(first: 200) { nodes { symbol delistedOn } } }"


def test_a_delisted_name_leaves_the_listing_and_says_when(api: Api) -> None:
    key = api.world.acme_key
    listed = {n["symbol"]: n["delistedOn"] for n in data(api, LISTING, key)["instruments"]["nodes"]}
    gone = sorted(listed)[0]
    assert set(listed.values()) == {None}
    engine = service_engine(api.world.settings)
    with engine.begin() as conn:
        (row,) = current_rows(conn, tables.instruments, where=[tables.instruments.c.symbol == gone])
        kept = {k: v for k, v in row.items() if k not in ("id", "recorded_at")}
        append_history(conn, tables.instruments, [kept | {"delisted_on": DAY}])
    after = {n["symbol"] for n in data(api, LISTING, key)["instruments"]["nodes"]}
    assert after == set(listed) - {gone}
    one = data(api, f'{{ instrument(symbol: "{gone}") {{ symbol delistedOn }} }}', key)["instrument"]
    assert one == {"symbol": gone, "delistedOn": DAY.isoformat()}
