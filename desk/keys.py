"""Client API keys: issued, looked up, revoked, rotated and tuned, never stored in clear.

A client key is `svc-sk-` followed by 40 hex digits (160 random bits). The store keeps
only `HMAC-SHA256(pepper, key)`, where the pepper is a server-side secret
(`MARKETINTEL_API_KEY_PEPPER`, or a random one created once in `secrets_dir`), so a copy
of the database alone cannot be used to test guesses. A request's key is hashed the same
way and looked up by that hash.

Every change is an appended `api_key_events` row with the moment it takes effect:
REVOKED (now; appended to the key and to the keys it replaced that are still in their
grace period, so a client revoking its new key has neither working), ROTATED (now, or
after an admin-chosen grace period, detail names the new key), RATE_LIMIT_SET,
MACRO_ACCESS_SET, TIER_SET (appended to the key and to the keys it replaced that are still
in their grace period, so what an operator takes from a client's key is taken from every
key the client can still use). A key is usable while no REVOKED or
ROTATED event has taken effect; the check runs on every request, so a revocation holds
from the very next request in every worker.

Clients are named; generating a key for a name that exists adds a key for that client
(all of a client's keys share one portfolio). Generating a key opens the client's
portfolio in the key's own transaction, so no key is ever stored without it.

The desk's (desk/desk.py calls these in a line each): issuing and tuning keys are use
cases, and the records and their version live in the store. Authenticating a request
(the header, the admin key's comparison, the rate limit) is the API's, in
api/security.py, which asks the desk for a key's record.
"""

from __future__ import annotations

import bisect
import contextlib
import hmac
import logging
import os
import re
import secrets
import tempfile
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, select
from sqlalchemy.exc import DBAPIError

from market.clock import utc_now
from market.errors import ConfigurationError, ConflictError, InvalidInputError, NotFoundError
from market.settings import Settings
from market.text import checked_name
from portfolio.accounts import Account
from portfolio.ledger import ensure_portfolio
from store import tables
from store.history import Rider, append_history, current_rows, newest_ids
from store.transactions import Respond, answered, write_on, write_transaction

log = logging.getLogger(__name__)

CLIENT_KEY_PATTERN = re.compile(r"^svc-sk-[0-9a-f]{32,128}$")


def is_client_key(presented: str) -> bool:
    """Whether `presented` has a client key's form (`svc-sk-` and 32 to 128 hex digits); the
    one check of the form, made by `authenticate` before any lookup."""
    return CLIENT_KEY_PATTERN.match(presented) is not None


TIERS = ("STANDARD", "PRO", "INSTITUTIONAL")
MAX_GRACE_SECONDS = 30 * 24 * 3600
PEPPER_FILE = "api-key-pepper"


@dataclass(frozen=True)
class KeyRecord:
    """A key as the API sees it on a request: who, which tier, which limits."""

    key_id: str
    client_id: str
    client_name: str | None  # None on the request path, which does not need it
    tier: str
    rate_limit: int | None
    macro_access: bool | None
    expires_at: datetime | None
    rotated_at: datetime | None = None  # when a rotation with a grace period deprecated it (then expires_at ends it)


PEPPER_MIN_CHARACTERS = 32  # 128 bits as hex, the least a random pepper gives (the generated one: 64 hex digits)


def pepper(settings: Settings) -> bytes:
    """The pepper: MARKETINTEL_API_KEY_PEPPER when set, else the generated one in
    `secrets_dir`; either shorter than PEPPER_MIN_CHARACTERS is a ConfigurationError
    (`checked_pepper`), raised at start-up (`Desk.check_serving`)."""
    configured = settings.api_key_pepper.get_secret_value() if settings.api_key_pepper is not None else ""
    if configured:
        return checked_pepper(configured, "MARKETINTEL_API_KEY_PEPPER")
    known = _PEPPERS.get(settings.secrets_dir)  # per folder, not per path: building the Path cost more than the hash
    return known if known is not None else _pepper_file(settings.secrets_dir)


_PEPPERS: dict[Any, bytes] = {}


def _pepper_file(folder: Any) -> bytes:
    """Read the generated pepper, creating it exactly once (`_publish_once`: two workers
    starting together agree on one pepper, and neither reads it half-written). It never
    changes once written, so each process reads it once per secrets folder (every
    authenticated request hashes with it)."""
    path = Path(folder) / PEPPER_FILE
    if not path.exists():
        _publish_once(path)
    _PEPPERS[folder] = checked_pepper(path.read_text().strip(), str(path))
    return _PEPPERS[folder]


def checked_pepper(value: str, origin: str) -> bytes:
    """`value` as the pepper's bytes, or a ConfigurationError naming `origin` (the setting or
    the file) when it is shorter than PEPPER_MIN_CHARACTERS: a short pepper is one a copy of
    the store could be tested against by guessing it."""
    if len(value) < PEPPER_MIN_CHARACTERS:
        raise ConfigurationError(
            f"the API key pepper in {origin} is shorter than {PEPPER_MIN_CHARACTERS} characters; "
            "use a random one of at least that length (`openssl rand -hex 32`)"
        )
    return value.encode()


def _publish_once(path: Path) -> None:
    """A new secret at `path` unless one is there: written whole to a file of its own in the
    same folder (mode 0600, `mkstemp`), then linked into place, which fails when `path`
    exists, so the first worker's secret is kept and the others read that one. A worker
    never sees the file before its secret is in it: created empty, then written, it was
    read empty by a second worker starting at the same moment (its request a 500)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
            handle.flush()
            os.fsync(handle.fileno())  # on disk before it is the pepper: never an empty one after a crash
        with contextlib.suppress(FileExistsError):  # another worker's came first: that one holds
            os.link(partial, path)
    finally:
        os.unlink(partial)


def key_hash(settings: Settings, key: str) -> str:
    """The key's HMAC-SHA256 under the pepper, as hex (`hmac.digest`: the one-shot form, the
    same value as `hmac.new(...).hexdigest()` without building an HMAC object: 2.3 against
    2.8 us a call, measured with timeit)."""
    return hmac.digest(pepper(settings), key.encode(), "sha256").hex()


PEPPER_FINGERPRINT_LABEL = b"marketintel api-key pepper fingerprint"


def pepper_fingerprint(settings: Settings) -> str:
    """The pepper's keyed fingerprint, HMAC-SHA256(pepper, a fixed label) as hex: kept with
    each key issued (`_insert_key`), so a server can tell that it holds another pepper than
    the keys were hashed under without the pepper being in the store."""
    return hmac.digest(pepper(settings), PEPPER_FINGERPRINT_LABEL, "sha256").hex()


def check_pepper(engine: Engine, settings: Settings, now: datetime) -> None:
    """ConfigurationError when the store holds keys that still work at `now`, of a known
    pepper, and none of this process's pepper: every one would be answered 401 ("unknown,
    revoked or rotated out") with nothing to say why. A key's pepper is known when it was
    issued (migration 0024) or, for a key issued before, once it has been presented and
    found under a serving process's pepper (`confirm_pepper`, migration 0025); keys of no
    known pepper, revoked or rotated out are not counted, and a store without keys passes.
    Working keys of this pepper and of another (API machines that did not share one pepper)
    start, with an error logged naming the keys every request refuses (`_mixed_peppers`)."""
    with engine.connect() as conn:
        working = _working_fingerprints(conn, now)
    mine = working.pop(pepper_fingerprint(settings), [])
    if not working:
        return
    if mine:
        log.error(_mixed_peppers(settings, mine, working))
        return
    raise ConfigurationError(
        f"the API key pepper ({_pepper_origin(settings)}) is not the one the store's "
        f"{sum(map(len, working.values()))} working client keys were issued under, so every one would be refused "
        "(401); start with the pepper they were issued under (MARKETINTEL_API_KEY_PEPPER, the same on every API "
        "machine), or, to change it, revoke those keys under the old pepper first"
    )


def _pepper_origin(settings: Settings) -> str:
    """Where this process's pepper comes from, as a start-up message names it."""
    return "MARKETINTEL_API_KEY_PEPPER" if settings.api_key_pepper else str(settings.secrets_dir / PEPPER_FILE)


def _mixed_peppers(settings: Settings, mine: list[str], others: dict[str, list[str]]) -> str:
    """The start-up's line for a store whose working keys were issued under this pepper and
    under others: those others are refused (401) on every request to this process."""
    refused = sorted(k for ids in others.values() for k in ids)
    named = ", ".join(refused[:10]) + (f" and {len(refused) - 10} more" if len(refused) > 10 else "")
    return (
        f"the store's working client keys were issued under {len(others) + 1} API key peppers: {len(mine)} under "
        f"this one ({_pepper_origin(settings)}), {len(refused)} under {'another' if len(others) == 1 else 'others'} "
        f"({named}), which this process "
        "refuses (401) on every request; give every API machine the same MARKETINTEL_API_KEY_PEPPER, then revoke "
        "those keys (POST /api/keys/{key_id}/revoke) and issue their clients new ones (POST /api/keys/generate)"
    )


def _working_fingerprints(conn: Connection, now: datetime) -> dict[str, list[str]]:
    """The ids of the keys that still work at `now`, by the pepper they were issued under:
    as recorded at issue (0024), else as confirmed (`confirm_pepper`, 0025); keys of no
    known pepper are left out."""
    confirmed = {r["key_id"]: r["pepper_fingerprint"] for r in current_rows(conn, tables.api_key_peppers)}
    events = _events_by_key(conn)
    found: dict[str, list[str]] = {}
    for key in current_rows(conn, tables.api_keys):
        fingerprint = key["pepper_fingerprint"] or confirmed.get(key["key_id"])
        ended = _state(events.get(key["key_id"], []), now)["ended_at"]
        if fingerprint is not None and (ended is None or now < ended):
            found.setdefault(fingerprint, []).append(key["key_id"])
    return found


def confirm_pepper(conn: Connection, settings: Settings, timeline: KeyTimeline, now: datetime) -> None:
    """Record the pepper of a key issued before 0024, found by its hash under this process's
    pepper (`authenticate`): an HMAC found under a pepper was made under it, so the start-up
    check counts the key from then on (`check_pepper`). Written on the request's connection
    once a process and key (`KeyTimeline.pepper_known`); a write that fails (the store
    busy past its timeout) is logged and the request goes on: the next process to read the
    key records it."""
    timeline.pepper_known = True
    row = {"key_id": timeline.rows[0].key_id, "pepper_fingerprint": pepper_fingerprint(settings)}
    try:
        with write_on(conn, "api-keys"):
            append_history(conn, tables.api_key_peppers, [row], recorded_at=now)
    except DBAPIError as failure:
        log.warning("could not record the pepper of API key %s: %s", row["key_id"], failure.orig)


def _new_secret() -> str:
    return f"svc-sk-{secrets.token_hex(20)}"


def _checked_tier(tier: str) -> str:
    if tier not in TIERS:
        raise InvalidInputError(f"tier must be one of {', '.join(TIERS)}, not '{tier}'")
    return tier


def generate(
    engine: Engine,
    settings: Settings,
    client_name: str,
    tier: str,
    now: datetime | None = None,
    respond: Respond = None,
) -> dict[str, Any]:
    """A new key for `client_name` (created if new, with its portfolio, in the same
    transaction); the secret is in the result only. `respond` renders the answer before the
    commit (store.transactions `answered`): a key whose secret could not be shown is never
    stored."""
    name = client_display_name(client_name)
    _checked_tier(tier)
    moment = now or utc_now()
    secret = _new_secret()
    with write_transaction(engine, "api-keys") as conn:
        client_id = _client(conn, name, tier, moment)
        key_id = _insert_key(conn, settings, client_id, tier, secret, moment)
        account = Account.of_client(client_id)
        ensure_portfolio(conn, account.portfolio_id, account.kind, account.client_id)
        issued = {
            "api_key": secret,
            "key_id": key_id,
            "client_id": client_id,
            "client_name": name,
            "tier": tier,
            "created_at": moment,
        }
        return answered(issued, respond)


def ensure_client(engine: Engine, client_name: str, tier: str, now: datetime | None = None) -> str:
    """The client id of `client_name` (created with `tier` if new, no key issued): what a
    later `generate` for the same name issues a key for (the desk then opens its portfolio:
    `Desk.client`)."""
    name = client_display_name(client_name)
    _checked_tier(tier)
    with write_transaction(engine, "api-keys") as conn:
        return _client(conn, name, tier, now or utc_now())


def client_display_name(client_name: str) -> str:
    """A client's name as stored and matched: its whitespace runs one space, 1 to 200
    characters, no control and no invisible format character (`market.text.checked_name`:
    "Look\u200b Alike" made a second client that displays as "Look Alike"), in Unicode's
    composed form (NFC: "Cafe\u0301" and "Caf\u00e9" are one client, as they display)."""
    name = unicodedata.normalize("NFC", " ".join(client_name.split()))  # "e" + U+0301 is "é"
    if not name:
        raise InvalidInputError("client_name must be 1 to 200 characters of text")
    return checked_name(name, "client_name", 200)


def _client(conn: Connection, name: str, tier: str, moment: datetime) -> str:
    # a name stored before names were composed (NFC) is the same client: read composed too,
    # the earliest first (two that collide only composed were made apart before; the first is kept)
    existing = sorted(
        (c for c in current_rows(conn, tables.clients) if unicodedata.normalize("NFC", c["name"]) == name),
        key=lambda c: c["id"],
    )
    client_id = existing[0]["client_id"] if existing else f"c-{secrets.token_hex(6)}"
    append_history(conn, tables.clients, [{"client_id": client_id, "name": name, "tier": tier}], recorded_at=moment)
    return client_id


def _insert_key(conn: Connection, settings: Settings, client_id: str, tier: str, secret: str, moment: datetime) -> str:
    key_id = f"k-{secrets.token_hex(8)}"
    append_history(
        conn,
        tables.api_keys,
        [
            {
                "key_id": key_id,
                "client_id": client_id,
                "key_hash": key_hash(settings, secret),
                "tier": tier,
                "pepper_fingerprint": pepper_fingerprint(settings),
            }
        ],
        recorded_at=moment,
    )
    return key_id


class KeyCache:
    """A process's copy of the keys it has seen, each with its rows (the key joined with its
    events) and the keys' version they were read at: the newest `api_keys` and
    `api_key_events` ids, which move with every issued key and every event (both are
    append-only and written under one lock, so their ids commit in order). A request reads
    that version (two index lookups) and reuses the rows while it has not moved; the record
    is still the one at the request's moment (`KeyTimeline`), so a rotation's grace period
    ends on time.
    So the check stays exact in every worker, and the costly part of the lookup (a join
    whose timestamps SQLite returns as text to parse) runs once per change, not per request.
    Unknown keys are never kept: a flood of guesses cannot fill it.

    A key already kept can also be answered from memory alone (`kept`), its version left
    to be confirmed later: api/security.py puts that check on the request's connection (`KeyCheck`), read in the
    request's next data-version statement."""

    KEYS = (tables.api_keys, tables.api_key_events)  # the keys' version: their newest ids

    ENTRIES = 10_000

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple, KeyTimeline]] = {}
        self._lock = threading.Lock()

    def kept(self, hashed: str) -> tuple[tuple, KeyTimeline] | None:
        """The keys' version and the rows kept for a key, as last read; None for a key not kept."""
        with self._lock:
            return self._rows.get(hashed)

    def timeline(self, conn: Connection, hashed: str) -> KeyTimeline:
        """The key's rows at the keys' version read now on `conn`: those kept while it has
        not moved, else read afresh (and kept, unless there are none)."""
        version = newest_ids(conn, *self.KEYS)
        with self._lock:
            hit = self._rows.get(hashed)
        if hit is not None and hit[0] == version:
            return hit[1]
        timeline = KeyTimeline(conn.execute(_KEY_WITH_EVENTS, {"key_hash": hashed}).all())
        if timeline.rows:
            with self._lock:
                if len(self._rows) >= self.ENTRIES:
                    self._rows.pop(next(iter(self._rows)))
                self._rows[hashed] = (version, timeline)
        return timeline


class KeyTimeline:
    """A key's rows (the key joined with its events) and the record they give at a moment
    (`record_of`, the one definition). The record can only change at one of the events'
    effective times (a setting takes effect, a revocation or a rotation's grace period
    ends), so the last one worked out is kept with the span between the two effective
    times around its moment: a request in that span reuses it instead of folding the
    events again. A moment outside it (later, or earlier on a test's or a replay's clock)
    folds them afresh."""

    __slots__ = ("rows", "pepper_known", "_moments", "_last")

    def __init__(self, rows: list) -> None:
        self.rows = rows
        self.pepper_known = not rows or rows[0].pepper_fingerprint is not None  # else `confirm_pepper`
        self._moments = sorted({r.effective_at for r in rows if r.event is not None and r.effective_at is not None})
        self._last: tuple[datetime | None, datetime | None, KeyRecord | None] | None = None

    def at(self, now: datetime) -> KeyRecord | None:
        last = self._last
        if last is not None and (last[0] is None or last[0] <= now) and (last[1] is None or now < last[1]):
            return last[2]
        record = record_of(self.rows, now)
        moments = self._moments
        passed = bisect.bisect_right(moments, now)  # effective times at or before `now`
        self._last = (
            moments[passed - 1] if passed else None,
            moments[passed] if passed < len(moments) else None,
            record,
        )
        return record


class KeyCheck(Rider):
    """A key check answered from a process's memory (`KeyCache.kept`), left to ride on the
    request's connection: the keys' version read in the request's next version read
    (store.history `newest_ids`; `settle` reads it alone when none came), raising
    `VersionMoved` when the keys moved meanwhile; then `admit(conn)`, where the caller
    counts the request on that connection (api/security.py)."""

    __slots__ = ("admit", "conn")

    def __init__(self, expected: tuple, admit: Callable[[Connection], None] | None) -> None:
        super().__init__(KeyCache.KEYS, expected)
        self.admit: Callable[[Connection], None] | None = admit
        self.conn: Connection | None = None

    def settle(self, values: tuple) -> None:
        super().settle(values)
        if self.admit is not None:
            self.admit(self.conn)  # type: ignore[arg-type]


def authenticate(
    conn: Connection, settings: Settings, presented: str, now: datetime, cache: KeyCache | None = None
) -> KeyRecord | None:
    """The key's record when `presented` is a well-formed, known, usable client key: one
    indexed query (the key by its hash, joined with its events), run on every request, or,
    with a `cache`, the keys' version read on every request and that query when it moved.
    A working key whose pepper the store does not know yet has it recorded (`confirm_pepper`)."""
    if not is_client_key(presented):
        return None
    hashed = key_hash(settings, presented)
    if cache is not None:
        timeline = cache.timeline(conn, hashed)
    else:
        timeline = KeyTimeline(conn.execute(_KEY_WITH_EVENTS, {"key_hash": hashed}).all())
    record = timeline.at(now)
    if record is not None and not timeline.pepper_known:
        confirm_pepper(conn, settings, timeline, now)
    return record


def record_of(rows: list, now: datetime) -> KeyRecord | None:
    """The record a key's rows (the key joined with its events) give at `now`: None for no
    rows, or a key revoked or rotated out by then."""
    if not rows:
        return None
    events = sorted(
        (
            {
                "id": r.id,
                "event": r.event,
                "detail": r.detail,
                "effective_at": r.effective_at,
                "recorded_at": r.recorded_at,
            }
            for r in rows
            if r.event is not None
        ),
        key=lambda ev: (ev["recorded_at"], ev["id"]),
    )
    state = _state(events, now)
    if state["ended_at"] is not None and state["ended_at"] <= now:
        return None
    first = rows[0]
    return KeyRecord(
        first.key_id,
        first.client_id,
        None,
        state["tier"] or first.tier,
        state["rate_limit"],
        state["macro_access"],
        state["ended_at"],
        state["rotated_at"],
    )


_CONFIRMED_PEPPER = (  # a key of before 0024 whose pepper a serving process confirmed (`confirm_pepper`)
    select(tables.api_key_peppers.c.pepper_fingerprint)
    .where(tables.api_key_peppers.c.key_id == tables.api_keys.c.key_id)
    .limit(1)
    .scalar_subquery()
)

_KEY_WITH_EVENTS = (  # built once: it runs on every keyed request
    select(
        tables.api_keys.c.key_id,
        tables.api_keys.c.client_id,
        tables.api_keys.c.tier,
        func.coalesce(tables.api_keys.c.pepper_fingerprint, _CONFIRMED_PEPPER).label("pepper_fingerprint"),
        tables.api_key_events.c.id,
        tables.api_key_events.c.event,
        tables.api_key_events.c.detail,
        tables.api_key_events.c.effective_at,
        tables.api_key_events.c.recorded_at,
    )
    .select_from(
        tables.api_keys.outerjoin(tables.api_key_events, tables.api_key_events.c.key_id == tables.api_keys.c.key_id)
    )
    .where(tables.api_keys.c.key_hash == bindparam("key_hash"))
)


def _record(conn: Connection, key: dict[str, Any], now: datetime) -> KeyRecord | None:
    c = tables.api_key_events.c
    events = sorted(
        current_rows(conn, tables.api_key_events, where=[c.key_id == key["key_id"]]),
        key=lambda e: (e["recorded_at"], e["id"]),
    )
    state = _state(events, now)
    if state["ended_at"] is not None and state["ended_at"] <= now:
        return None
    client = current_rows(conn, tables.clients, where=[tables.clients.c.client_id == key["client_id"]])
    return KeyRecord(
        key["key_id"],
        key["client_id"],
        client[0]["name"] if client else key["client_id"],
        state["tier"] or key["tier"],
        state["rate_limit"],
        state["macro_access"],
        state["ended_at"],
        state["rotated_at"],
    )


def _state(events: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """Fold a key's events (oldest first) into what holds at `now`."""
    state: dict[str, Any] = {
        "tier": None,
        "rate_limit": None,
        "macro_access": None,
        "ended_at": None,
        "revoked_at": None,
        "rotated_to": None,
        "rotated_at": None,
    }
    for event in events:
        if event["event"] in ("REVOKED", "ROTATED"):
            end = event["effective_at"]
            state["ended_at"] = end if state["ended_at"] is None else min(state["ended_at"], end)
            if event["event"] == "REVOKED":
                state["revoked_at"] = end
            else:
                state["rotated_to"] = event["detail"].get("new_key_id")
                state["rotated_at"] = event["recorded_at"]
        elif event["effective_at"] <= now:
            field = {"RATE_LIMIT_SET": "rate_limit", "MACRO_ACCESS_SET": "macro_access", "TIER_SET": "tier"}[
                event["event"]
            ]
            state[field] = event["detail"]["value"]
    return state


def _key(conn: Connection, key_id: str) -> dict[str, Any]:
    rows = current_rows(conn, tables.api_keys, where=[tables.api_keys.c.key_id == key_id])
    if not rows:
        raise NotFoundError(f"no API key '{key_id}'")
    return rows[0]


def list_keys(engine: Engine, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every key with its client, tier, limits and status; never a secret or a hash."""
    with engine.connect() as conn:
        return _keys(conn, now or utc_now())


def _events_by_key(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """Every key's events, oldest first, by key id."""
    events: dict[str, list[dict[str, Any]]] = {}
    for event in sorted(current_rows(conn, tables.api_key_events), key=lambda e: (e["recorded_at"], e["id"])):
        events.setdefault(event["key_id"], []).append(event)
    return events


def _keys(conn: Connection, moment: datetime) -> list[dict[str, Any]]:
    """`list_keys` on a connection held (a write's, to answer from inside its transaction)."""
    clients = {c["client_id"]: c for c in current_rows(conn, tables.clients)}
    events = _events_by_key(conn)
    keys = sorted(current_rows(conn, tables.api_keys), key=lambda k: (k["recorded_at"], k["key_id"]))
    return [_listing(k, clients.get(k["client_id"]), events.get(k["key_id"], []), moment) for k in keys]


def _listing(
    key: dict[str, Any], client: dict[str, Any] | None, events: list[dict[str, Any]], now: datetime
) -> dict[str, Any]:
    state = _state(events, now)
    ended = state["ended_at"]
    if ended is not None and ended <= now:
        status = "REVOKED" if state["revoked_at"] is not None and state["revoked_at"] <= now else "ROTATED"
    else:
        status = "ACTIVE" if ended is None else "EXPIRING"
    return {
        "key_id": key["key_id"],
        "client_id": key["client_id"],
        "client_name": client["name"] if client else None,
        "tier": state["tier"] or key["tier"],
        "created_at": key["recorded_at"],
        "status": status,
        "expires_at": ended,
        "rate_limit": state["rate_limit"],
        "macro_access": state["macro_access"],
        "replaced_by": state["rotated_to"],
    }


def key_view(engine: Engine, key_id: str, now: datetime | None = None) -> dict[str, Any]:
    with engine.connect() as conn:
        return _view(conn, key_id, now or utc_now())


def _view(conn: Connection, key_id: str, moment: datetime) -> dict[str, Any]:
    listing = [k for k in _keys(conn, moment) if k["key_id"] == key_id]
    if not listing:
        raise NotFoundError(f"no API key '{key_id}'")
    return listing[0]


def revoke(engine: Engine, key_id: str, now: datetime | None = None, respond: Respond = None) -> dict[str, Any]:
    """Stop the key from the next request on (a second revoke changes nothing), and the keys
    it replaced that still work (their grace period, `_working_predecessors`): a client
    revoking its new key means neither to work; the old key revoked alone leaves its
    successor working. The key's view, answered from inside the transaction (`respond`:
    store.transactions `answered`)."""
    moment = now or utc_now()
    with write_transaction(engine, "api-keys") as conn:
        _key(conn, key_id)
        stopped = [] if _is_revoked(conn, key_id) else [key_id]
        stopped += [r.key_id for r in _working_predecessors(conn, key_id, moment)]
        if stopped:
            append_history(
                conn,
                tables.api_key_events,
                [{"key_id": k, "event": "REVOKED", "effective_at": moment} for k in stopped],
                recorded_at=moment,
            )
        return answered(_view(conn, key_id, moment), respond)


def rotate(
    engine: Engine,
    settings: Settings,
    key_id: str,
    grace_seconds: int = 0,
    now: datetime | None = None,
    respond: Respond = None,
) -> dict[str, Any]:
    """A new key for the same client, tier and limits; the old one stops now or after the grace period."""
    if isinstance(grace_seconds, bool) or not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
        raise InvalidInputError(f"grace_seconds must be between 0 and {MAX_GRACE_SECONDS} (30 days)")
    moment = now or utc_now()
    secret = _new_secret()
    with write_transaction(engine, "api-keys") as conn:
        old = _key(conn, key_id)
        record = _working_record(conn, old, moment, "rotated")  # a state, not an input: 409 like a second rotation
        _not_rotated(conn, key_id, "rotate")  # in its grace period: a second rotation would leave three keys working
        if grace_seconds:  # without a grace period this key stops as its successor starts: two keys still
            _no_predecessor_working(conn, key_id, moment)
        new_id = _insert_key(conn, settings, old["client_id"], record.tier, secret, moment)
        carried = [("RATE_LIMIT_SET", record.rate_limit), ("MACRO_ACCESS_SET", record.macro_access)]
        append_history(
            conn,
            tables.api_key_events,
            [
                *(
                    {"key_id": new_id, "event": e, "detail": {"value": v}, "effective_at": moment}
                    for e, v in carried
                    if v is not None
                ),
                {
                    "key_id": key_id,
                    "event": "ROTATED",
                    "detail": {"new_key_id": new_id, "grace_seconds": grace_seconds},
                    "effective_at": moment + timedelta(seconds=grace_seconds),
                },
            ],
            recorded_at=moment,
        )
        issued = {
            "api_key": secret,
            "key_id": new_id,
            "client_id": old["client_id"],
            "client_name": record.client_name,
            "tier": record.tier,
            "created_at": moment,
            "replaces": key_id,
            "old_key_expires_at": moment + timedelta(seconds=grace_seconds),
        }
        return answered(issued, respond)


def _no_predecessor_working(conn: Connection, key_id: str, moment: datetime) -> None:
    """ConflictError while a key this one replaced still works (its grace period): a
    rotation with a grace period now would leave three keys of the rotation working."""
    working = _working_predecessors(conn, key_id, moment)
    if working:
        old, until = working[0].key_id, working[0].expires_at  # a rotated key's end: never None
        raise ConflictError(
            f"API key '{key_id}' replaced '{old}', which still works until {until.isoformat() if until else '?'}; "
            f"rotate with grace_seconds 0, revoke '{old}' first, "
            "or rotate after then, so that no more than two keys of a rotation work"
        )


def _working_predecessors(conn: Connection, key_id: str, moment: datetime) -> list[KeyRecord]:
    """The records of the keys `key_id` replaced, by a rotation or a chain of them, that
    still work at `moment` (their grace period): the keys its client is moving off, which
    take every change made to `key_id` (`set_option`)."""
    c = tables.api_key_events.c
    replaced: dict[str, list[str]] = {}  # new key -> the keys rotated to it
    for event in current_rows(conn, tables.api_key_events, where=[c.event == "ROTATED"]):
        replaced.setdefault((event["detail"] or {}).get("new_key_id"), []).append(event["key_id"])
    found: list[str] = []
    to_follow = [key_id]  # the chain of rotations, followed back from `key_id`
    while to_follow:
        for old in replaced.get(to_follow.pop(), []):
            found.append(old)
            to_follow.append(old)
    records = (_record(conn, _key(conn, old), moment) for old in found)
    return [r for r in records if r is not None]


def _not_rotated(conn: Connection, key_id: str, verb: str) -> None:
    """ConflictError when the key was rotated and still works (its grace period): what an
    admin would do to it (`verb`: rotate, change) belongs to its successor."""
    c = tables.api_key_events.c
    rotated = [
        e for e in current_rows(conn, tables.api_key_events, where=[c.key_id == key_id]) if e["event"] == "ROTATED"
    ]
    if rotated:
        successor = rotated[0]["detail"].get("new_key_id")
        raise ConflictError(
            f"API key '{key_id}' was already rotated to '{successor}' and stops at "
            f"{rotated[0]['effective_at'].isoformat()}; {verb} '{successor}' instead"
        )


def _is_revoked(conn: Connection, key_id: str) -> bool:
    """Whether the key has a REVOKED event, whatever its moment: a revocation is never
    scheduled, so one recorded after this write read its clock (a revocation that took the
    lock first) holds for it too."""
    c = tables.api_key_events.c
    return bool(current_rows(conn, tables.api_key_events, where=[c.key_id == key_id, c.event == "REVOKED"]))


def _working_record(conn: Connection, key: dict[str, Any], moment: datetime, done: str) -> KeyRecord:
    """The key's record at `moment`, or ConflictError (`_ended_detail`) when it cannot be
    `done` (rotated, changed): revoked (`_is_revoked`: a rotation that read its clock
    before a concurrent revocation committed issued a working successor to the revoked
    key), or rotated out by then."""
    record = None if _is_revoked(conn, key["key_id"]) else _record(conn, key, moment)
    if record is None:
        raise ConflictError(_ended_detail(conn, key["key_id"], moment, done))
    return record


def _ended_detail(conn: Connection, key_id: str, moment: datetime, done: str) -> str:
    """Why a key that no longer works at `moment` cannot be `done` (rotated, changed):
    revoked, or rotated out."""
    view = _view(conn, key_id, moment)
    if _is_revoked(conn, key_id):
        return f"API key '{key_id}' is revoked and cannot be {done}; generate a new key for its client instead"
    verb = "rotate" if done == "rotated" else "change"
    return (
        f"API key '{key_id}' was rotated out to '{view['replaced_by']}' and no longer works; "
        f"{verb} '{view['replaced_by']}' instead"
    )


def set_option(
    engine: Engine, key_id: str, event: str, value: Any, now: datetime | None = None, respond: Respond = None
) -> dict[str, Any]:
    """RATE_LIMIT_SET (requests per minute, None: the tier's default), MACRO_ACCESS_SET
    (True/False, None: the tier's rule) or TIER_SET, on a key that works and has not been
    rotated: a revoked or rotated-out key's setting would change nothing anyone can use,
    and a rotated key's would miss the successor its client moves to (409 naming it).
    The change is appended to the keys `key_id` replaced that still work too (their grace
    period, `_working_predecessors`): access taken from the successor is taken from them."""
    if event == "TIER_SET":
        _checked_tier(value)
    moment = now or utc_now()
    with write_transaction(engine, "api-keys") as conn:
        _working_record(conn, _key(conn, key_id), moment, "changed")
        _not_rotated(conn, key_id, "change")
        changed = [key_id, *(r.key_id for r in _working_predecessors(conn, key_id, moment))]
        append_history(
            conn,
            tables.api_key_events,
            [{"key_id": k, "event": event, "detail": {"value": value}, "effective_at": moment} for k in changed],
            recorded_at=moment,
        )
        return answered(_view(conn, key_id, moment), respond)
