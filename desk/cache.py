"""The desk's read models kept per version, and what a transport renders of them.

A read model that changes only when rows are appended is built once per change rather than
per request: an entry is `(key, version) -> value`, where the version is read from the
database on every request (desk/versions.py: the newest ids of the append-only rows the
value depends on). So every process (`serve --workers N`, a stage kernel) keeps its own
copy, and each sees a write from any process or stage on its next read: the version it
reads has moved, the entry is rebuilt once and replaces the old one.

A desk read that may be kept answers a `Versioned`: which read (`key`), the version it
was read at, and how to build it (`build`, which takes it from this cache where the desk
keeps the model itself: a valuation, the latest quotes, a book's track record). A
transport keeps what it renders of it here too (`ReadCache.rendered`: a REST body, per
form and version), so a read whose version has not moved costs the version read and a
dict lookup.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, Generic, TypeVar

from market.errors import RateLimitedError

T = TypeVar("T")
CACHE_ENTRIES = 4096  # entries kept per process; the oldest key goes first past it ...
CACHE_BYTES = 64 * 1024 * 1024  # ... or past this many bytes of bodies and read models (`kept_bytes`)
SAMPLED = 8  # a container's items `kept_bytes` walks; a longer one is counted at their mean
NESTED = 8  # how deep `kept_bytes` walks ...
VISITS = 20_000  # ... and how many values it sizes at most
PER_OWNER_HEAVY = 1  # expensive reads one client may have running at once (ReadCache.owned)


@dataclass(frozen=True, slots=True)
class Versioned(Generic[T]):
    """A read model as of the version the desk read for it: `key` names the read (its name
    and arguments), `version` what it is built from, `build()` builds it (or takes it kept);
    with `owner`, building it is that owner's expensive read (`ReadCache.owned`)."""

    key: tuple
    version: Hashable
    build: Callable[[], T]
    owner: str | None = None

    def value(self) -> T:
        """The read model itself."""
        return self.build()


def kept_bytes(value: Any) -> int:
    """About the memory `value` holds, what it counts against CACHE_BYTES: a body its
    length; a read model (dicts, lists, dataclasses) its containers walked, each counted
    from its first SAMPLED items, at most VISITS of them in all, so a batch of 49 histories
    of 2,000 bars is sized in a few thousand calls, not one per bar. Read models were
    counted as nothing while their keys are a client's arguments: a GraphQL
    `history(end: ...)` over 49 instruments kept ~90 MB a request and counted 0, so a client
    changing an argument per request grew the process without bound."""
    if isinstance(value, bytes):
        return len(value)
    return _estimated(value, 0, [VISITS])


def _estimated(value: Any, depth: int, left: list[int]) -> int:
    left[0] -= 1
    size = sys.getsizeof(value)
    if depth >= NESTED or left[0] <= 0 or isinstance(value, (str, bytes, int, float)):
        return size
    if isinstance(value, dict):  # its values: keys are names shared by every row, or small
        parts: Any = value.values()
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = value
    else:  # an object: its fields (a dataclass's, with or without slots)
        slots = getattr(type(value), "__slots__", ())
        fields = getattr(value, "__dict__", None) or {n: getattr(value, n, None) for n in slots}
        parts = fields.values() if isinstance(fields, dict) else ()
    sample = list(islice(parts, SAMPLED))
    if not sample:
        return size
    sampled = sum(_estimated(item, depth + 1, left) for item in sample)
    return size + sampled * len(parts) // len(sample)


class ReadCache:
    """One per desk (so one per process): values by key, each with the version it was
    built at, bounded by CACHE_ENTRIES and by CACHE_BYTES of what they hold (`kept_bytes`:
    rendered bodies and read models alike); a value over CACHE_BYTES by itself is not kept."""

    def __init__(self) -> None:
        self._cache: dict[Any, tuple[Any, Any, int]] = {}
        self._lock = threading.Lock()
        self._cached_bytes = 0
        self._building: dict[Any, list] = {}  # single-flight builds: key -> [lock, users]
        self._turns: dict[str, int] = {}  # expensive reads running, by owner (`owned`)
        self._held = threading.local()  # the owners whose turn this thread holds

    def cached(
        self, key: Any, version: Any, build: Callable[[], T], size: Callable[[Any], int | None] | None = None
    ) -> T:
        """`build()` once per (key, version); a new version replaces the old entry. `size`:
        the bytes a value counts against the cache's bound (default: `kept_bytes`), or None
        for a value not to keep."""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        with self._building_turn(key):  # one build per key at a time: the others take its result
            with self._lock:
                hit = self._cache.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]
            return self._built(key, version, build(), size)

    def kept(self, key: Any, version: Any) -> Any | None:
        """What is kept for `key` at `version`, or None: a lookup that never builds (a
        transport answering what is already rendered before it takes a turn for the rest)."""
        with self._lock:
            hit = self._cache.get(key)
        return hit[1] if hit is not None and hit[0] == version else None

    def owned(
        self,
        owner: str,
        key: Any,
        version: Any,
        build: Callable[[], T],
        size: Callable[[Any], int | None] | None = None,
    ) -> T:
        """`cached`, where a miss is `owner`'s expensive read (a book's track record rebuilt
        after a write): while one of an owner's expensive reads runs, another miss of theirs
        is refused at once with 429 and a Retry-After, never queued (a queued request would
        hold one of the process's database slots and a worker thread while it waits). So a
        client writing and reading in a loop takes at most one slot's and one thread's share
        of the process; a read that finds the current version kept is answered as ever. A
        build inside the owner's own turn (a body rendered from the kept record) is the same
        read, not another."""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        with self._turn(owner):
            return self.cached(key, version, build, size)

    def rendered(self, read: Versioned[Any], form: Hashable, render: Callable[[Any], bytes]) -> bytes:
        """What a transport renders of `read` in `form` (a schema, a page), rendered once per
        version of the read: `render(read.value())` on a miss, under the read's owner."""
        key = (form, read.key)
        build = lambda: render(read.build())  # noqa: E731
        if read.owner is None:
            return self.cached(key, read.version, build)
        return self.owned(read.owner, key, read.version, build)

    def kept_rendering(self, read: Versioned[Any], form: Hashable) -> bytes | None:
        """What `rendered` keeps of `read` in `form` at the read's version, or None: a lookup
        that never builds."""
        return self.kept((form, read.key), read.version)

    @contextmanager
    def _building_turn(self, key: Any) -> Iterator[None]:
        """Builders of `key` take turns (single flight: eight concurrent reads of a changed
        track record compute it once, not eight times); the lock is dropped with its last user."""
        with self._lock:
            entry = self._building.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._building[key]

    def _built(self, key: Any, version: Any, value: T, size: Callable[[Any], int | None] | None) -> T:
        counted = size(value) if size is not None else kept_bytes(value)
        if counted is None or counted > CACHE_BYTES:  # kept, it would push out every other entry
            return value
        with self._lock:
            old = self._cache.pop(key, None)
            self._cached_bytes -= old[2] if old else 0
            while self._cache and (len(self._cache) >= CACHE_ENTRIES or self._cached_bytes + counted > CACHE_BYTES):
                self._cached_bytes -= self._cache.pop(next(iter(self._cache)))[2]
            self._cache[key] = (version, value, counted)
            self._cached_bytes += counted
        return value

    @contextmanager
    def _turn(self, owner: str) -> Iterator[None]:
        held: set[str] = self._held.__dict__.setdefault("owners", set())
        if owner in held:  # this thread already runs the owner's read: the same read
            yield
            return
        with self._lock:
            if self._turns.get(owner, 0) >= PER_OWNER_HEAVY:
                raise RateLimitedError(
                    "your previous expensive read (a track record being rebuilt after a change) is still "
                    "running; retry when it has finished",
                    headers={"Retry-After": "1"},
                )
            self._turns[owner] = self._turns.get(owner, 0) + 1
        held.add(owner)
        try:
            yield
        finally:
            held.discard(owner)
            with self._lock:
                left = self._turns[owner] - 1
                if left:
                    self._turns[owner] = left
                else:
                    del self._turns[owner]
