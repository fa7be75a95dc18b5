"""The simulated exchange website: routes, publication rules and injectable faults.

One `SimulatorSite` answers requests; it is served over real HTTP by `asgi_app()` (what
`marketintel exchange serve` runs) or in-process by `transport()` (an httpx transport for
fast backfills), so both paths return the same bytes.

Faults are set per site (`site.faults`, or POST /_sim/faults with the same fields as
JSON). Counted faults apply to that many upcoming requests and then clear, which is how a
transient failure looks; a count of 1,000,000 makes one permanent.
"""

from __future__ import annotations

import asyncio
import bisect
import io
import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from urllib.parse import parse_qs

import httpx

from ingest.simulator import pages
from ingest.simulator.macro import SERIES, MacroEconomy
from ingest.simulator.market import NewsEvent, SimulatedMarket
from market.clock import exchange_now, latest_closed_trading_day
from market.settings import HOME_CURRENCY

NEWS_WINDOW_DAYS = 10  # trading days of news the RSS feed carries
SIMULATED_LABEL = "simulated"  # how a replay's simulated sources say what they are


@dataclass
class Faults:
    slow_seconds: float = 0.0  # delay added to each of the next `slow_requests` responses
    slow_requests: int = 0
    server_errors: int = 0  # the next N requests answer `server_error_status`
    server_error_status: int = 503
    truncated: int = 0  # the next N trade-quote pages are cut off half-way
    missing_board: str | None = None  # this board is left out of trade-quote pages while set
    malformed: dict | None = None  # {"symbol": "KCB", "column": "close"}: that cell is garbled while set
    late: int = 0  # the next N trade-quote requests say the day is not published yet
    stale: int = 0  # the next N trade-quote pages are the previous session's, under the asked date
    # the next N trade-quote pages list the previous session's notices again, before the day's
    repeated_notices: int = 0
    # rows (their eight cells as printed) added to the fundamentals page while set
    fundamentals_rows: list[list[str]] | None = None

    def take(self, name: str) -> bool:
        left = getattr(self, name)
        if left > 0:
            setattr(self, name, left - 1)
            return True
        return False


@dataclass
class Reply:
    status: int
    content_type: str
    body: bytes
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class SimulatorSite:
    def __init__(
        self,
        market: SimulatedMarket,
        *,
        base_url: str = "http://127.0.0.1:8765",
        published_through: Callable[[], date] | date | None = None,
        economy: MacroEconomy | None = None,
    ) -> None:
        self.market = market
        # A replay (ingest/replay.py) serves real prices in its files' currency beside the
        # simulator's text and macro sources, which it labels simulated; the simulated
        # market trades in the home currency and is all simulated, so it labels nothing.
        self.currency = getattr(market, "currency", HOME_CURRENCY)
        self.replayed = getattr(market, "replayed", False)
        self.economy = economy or MacroEconomy(market.seed, label=SIMULATED_LABEL if self.replayed else "")
        self.base_url = base_url.rstrip("/")
        self.faults = Faults()
        self._published_through = published_through
        self._lock = threading.Lock()
        self.requests: list[str] = []

    def published_through(self) -> date:
        value = self._published_through
        if value is None:
            return latest_closed_trading_day(exchange_now(), self.market.calendar)
        return value() if callable(value) else value

    # ---- request handling ---------------------------------------------------------
    def handle(self, method: str, path: str, query: str = "", body: bytes = b"", base_url: str | None = None) -> Reply:
        """Answer one request; `base_url` is where the request was addressed (links in the
        feed point there), defaulting to the configured one."""
        with self._lock:
            self._request_base = (base_url or self.base_url).rstrip("/")
            self.requests.append(f"{method} {path}?{query}")
            if path == "/_sim/faults":
                return self._fault_control(method, body)
            delay = self.faults.slow_seconds if self.faults.take("slow_requests") else 0.0
            if self.faults.take("server_errors"):
                return Reply(self.faults.server_error_status, "text/plain", b"exchange website unavailable", delay)
            reply = self._route(path, parse_qs(query))
            reply.delay = delay
            return reply

    def _route(self, path: str, params: dict[str, list[str]]) -> Reply:
        routes = {
            "/market/trade-quotes": self._quotes,
            "/market/fundamentals": lambda d: _html(
                pages.fundamentals_page(self.market.day(d), self.currency, self.faults.fundamentals_rows or [])
            ),
            "/market/securities": lambda d: _html(pages.securities_page(self.market.day(d))),
            "/news/rss": self._rss,
        }
        if path in routes:
            day = self._requested_day(params)
            if isinstance(day, Reply):
                return day
            return routes[path](day)
        if path.startswith(("/boj/", "/statin/", "/pioj/")):
            return self._macro(path, params)
        if path.startswith("/news/"):
            return self._article(path.removeprefix("/news/"))
        if path.startswith("/disclosures/") and path.endswith(".pdf"):
            return self._disclosure(path.removeprefix("/disclosures/").removesuffix(".pdf"))
        return Reply(404, "text/plain", b"no such page")

    def _requested_day(self, params: dict[str, list[str]]) -> date | Reply:
        raw = params.get("date", [None])[0]
        try:
            day = date.fromisoformat(raw) if raw else self.published_through()
        except ValueError:
            return Reply(400, "text/plain", b"date must be YYYY-MM-DD")
        if day > self.published_through() or day > self.market.days[-1]:
            return Reply(404, "text/html", pages.not_published_page(day).encode())
        if not self.market.is_simulated(day):  # a past day it will never publish
            return Reply(404, "text/html", pages.no_session_page(day, self.market.days[0]).encode())
        return day

    def _macro(self, path: str, params: dict[str, list[str]]) -> Reply:
        """The three national sources: what each had published by `date` (default: today)."""
        raw = params.get("date", [None])[0]
        try:
            through = min(date.fromisoformat(raw), self.published_through()) if raw else self.published_through()
        except ValueError:
            return Reply(400, "text/plain", b"date must be YYYY-MM-DD")
        if path.startswith("/boj/series/") and path.endswith(".csv"):
            code = path.removeprefix("/boj/series/").removesuffix(".csv")
            if SERIES.get(code, ("",))[0] != "BOJ":
                return Reply(404, "text/plain", b"no such series")
            return Reply(200, "text/csv", self.economy.boj_csv(code, through).encode())
        if path == "/statin/indicators.html":
            return _html(self.economy.statin_html(through))
        if path == "/pioj/economic-update.pdf":
            return Reply(200, "application/pdf", self.economy.pioj_pdf(through))
        return Reply(404, "text/plain", b"no such page")

    def _quotes(self, day: date) -> Reply:
        if self.faults.take("late"):
            return Reply(404, "text/html", pages.not_published_page(day).encode())
        simulated = self.market.day(day)
        if self.faults.take("stale"):  # the site serves the last page it built again, dated today
            index = bisect.bisect_left(self.market.days, day)
            if index > 0:
                simulated = replace(self.market.day(self.market.days[index - 1]), day=day)
        if self.faults.take("repeated_notices"):  # a page that shows the recent notices, not only the day's
            index = bisect.bisect_left(self.market.days, day)
            if index > 0:
                simulated = replace(
                    simulated, notices=[*self.market.day(self.market.days[index - 1]).notices, *simulated.notices]
                )
        boards = [b for b in pages.BOARDS if b != self.faults.missing_board]
        html = pages.trade_quotes_page(simulated, boards, self.currency)
        if self.faults.malformed:
            html = _garble(html, simulated, **self.faults.malformed)
        if self.faults.take("truncated"):
            html = html[: len(html) // 2]
        return _html(html)

    def _rss(self, day: date) -> Reply:
        index = bisect.bisect_left(self.market.days, day)  # days are sorted; list.index scanned thousands
        events: list[NewsEvent] = []
        for i in range(max(0, index - NEWS_WINDOW_DAYS + 1), index + 1):
            events.extend(self.market.day(self.market.days[i]).events)
        title = f"Exchange News ({SIMULATED_LABEL})" if self.replayed else "Exchange News"
        return Reply(200, "application/rss+xml", pages.news_feed(events, self._request_base, title).encode())

    def _find_event(self, event_id: str) -> NewsEvent | None:
        try:
            day = date(int(event_id[:4]), int(event_id[4:6]), int(event_id[6:8]))
        except ValueError:
            return None
        if not self.market.is_simulated(day) or day > self.published_through():
            return None
        return next((e for e in self.market.day(day).events if e.event_id == event_id), None)

    def _article(self, event_id: str) -> Reply:
        event = self._find_event(event_id)
        if event is None:
            return Reply(404, "text/plain", b"no such article")
        return _html(pages.html_page(event.title, f"<p>{event.body}</p>"))

    def _disclosure(self, event_id: str) -> Reply:
        event = self._find_event(event_id)
        if event is None or event.kind == "NEWS":
            return Reply(404, "text/plain", b"no such disclosure")
        return Reply(200, "application/pdf", disclosure_pdf(event))

    def _fault_control(self, method: str, body: bytes) -> Reply:
        if method == "POST":
            try:
                self.faults = Faults(**json.loads(body or b"{}"))
            except (TypeError, ValueError) as exc:
                return Reply(422, "text/plain", f"bad fault plan: {exc}".encode())
        return Reply(200, "application/json", json.dumps(asdict(self.faults)).encode())

    # ---- adapters -----------------------------------------------------------------
    def transport(self) -> httpx.MockTransport:
        """An in-process httpx transport: the same answers without a socket (no delays)."""

        def respond(request: httpx.Request) -> httpx.Response:
            base = f"{request.url.scheme}://{request.url.netloc.decode()}"
            reply = self.handle(request.method, request.url.path, request.url.query.decode(), request.content, base)
            return httpx.Response(reply.status, content=reply.body, headers={"content-type": reply.content_type})

        return httpx.MockTransport(respond)

    def asgi_app(self):  # noqa: ANN201 - a plain ASGI callable
        site = self

        async def app(scope, receive, send) -> None:  # noqa: ANN001 - the ASGI (scope, receive, send) triple
            if scope["type"] == "lifespan":
                while True:
                    message = await receive()
                    if message["type"] == "lifespan.startup":
                        await send({"type": "lifespan.startup.complete"})
                    elif message["type"] == "lifespan.shutdown":
                        await send({"type": "lifespan.shutdown.complete"})
                        return
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            host = dict(scope["headers"]).get(b"host", b"").decode()
            base = f"{scope.get('scheme', 'http')}://{host}" if host else None
            reply = site.handle(scope["method"], scope["path"], scope["query_string"].decode(), body, base)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            await send(
                {
                    "type": "http.response.start",
                    "status": reply.status,
                    "headers": [(b"content-type", reply.content_type.encode())],
                }
            )
            await send({"type": "http.response.body", "body": reply.body})

        return app


def _html(text: str) -> Reply:
    return Reply(200, "text/html; charset=utf-8", text.encode())


def _garble(html: str, day, symbol: str, column: str) -> str:  # noqa: ANN001
    bar = next((b for b in day.bars if b["symbol"] == symbol), None)
    if bar is None:
        return html
    good = pages.money(bar[column]) if column != "volume" else pages.count(bar[column])
    row_start = html.index(f"<tr><td>{symbol}</td>")
    row_end = html.index("</tr>", row_start)
    row = html[row_start:row_end].replace(f"<td>{good}</td>", f"<td>{good.replace('.', ',', 1)}O</td>", 1)
    return html[:row_start] + row + html[row_end:]


def disclosure_pdf(event: NewsEvent) -> bytes:
    """A one-page corporate disclosure, the way listed companies file them."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    doc = SimpleDocTemplate(buffer, pagesize=A4, title=event.title, author=event.symbol, invariant=1)
    doc.build(
        [
            Paragraph(event.kind.replace("_", " ").title() + " Disclosure", styles["Title"]),
            Paragraph(f"{event.symbol} - {event.day.isoformat()}", styles["Heading2"]),
            Spacer(1, 12),
            Paragraph(event.title, styles["Heading3"]),
            Paragraph(event.body, styles["BodyText"]),
        ]
    )
    return buffer.getvalue()
