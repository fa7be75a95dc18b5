"""Where a download a source names may go. A feed names the address of each disclosure PDF,
and a hostile feed could name one inside the service's network (127.0.0.1, 10.x, the cloud
metadata service at 169.254.169.254, ::1, a host name resolving to one): the service would
request it on the feed's behalf (SSRF). An address is refused, before any request, unless it
is http(s) and every address its host resolves to is a public one, or it is on the origin
(scheme, host and port) of a feed the operator configured: that address the service reads
anyway, so a PDF beside the feed on an exchange's internal mirror is fetched while one the feed
names on any other internal host is not. `allow_private` (the `allow_private_enclosures`
setting, for a demo or test serving its PDFs from 127.0.0.1) lifts the address check, never the
scheme check, and nothing is resolved: the host name is requested as it is. The addresses the
operator configured (the exchange, the feeds, the macro sources) are read as they are, by
name, and so is any redirect back to the configured host, but a redirect from one to another
host is checked the same way before it is followed (`followed`, every download's one loop).

Every other host is looked up within the download's time (a name server that does not answer
is the download's failure, the configured feeds' own origin's included), and the request goes
to the address that was looked up (`pinned_request`), a redirect's hop as the first, never to
the host name resolved again: a name that resolved to a public address for the check could
resolve to 127.0.0.1 a moment later for the request (DNS rebinding). The host name stays the
request's Host header and its TLS server name, so HTTPS verifies the certificate for that name,
through an HTTPS proxy too (its tunnel goes to the address, `_tunnel_verified_as`)."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from market.budget import Deadline
from market.errors import MarketIntelError, SourceUnavailableError
from market.text import MAX_KEY_BYTES, fits_key, masked_urls

SCHEMES = ("http", "https")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# the redirects one download follows, each to an address checked first
MAX_REDIRECTS = 5


Origin = tuple[str, str, int | None]


def origin(url: str) -> Origin:
    """The URL's scheme, host and port (the scheme's own port where none is written)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


@dataclass(frozen=True)
class Reach:
    """Where a download's hops may go. `allow_private`: anywhere http(s), every host
    requested by its name (the `allow_private_enclosures` setting); `trusted`: the origins
    resolved (within the download's time) but not checked (the configured feeds'); `home`:
    the host of an address the operator configured (the exchange's pages, a feed, a macro
    source), requested by its name, as it is, first and wherever a redirect returns to it."""

    allow_private: bool = False
    trusted: frozenset[Origin] = frozenset()
    home: str | None = None

    def configured(self, url: str) -> bool:
        """Whether `url` is on the configured host (`home`), whatever its scheme and port."""
        return self.home is not None and httpx.URL(url).host == self.home


def configured_reach(url: str, allow_private: bool) -> Reach:
    """The reach of a read of `url`, an address the operator configured."""
    return Reach(allow_private, home=httpx.URL(url).host)


def check_fetchable(
    url: str, deadline: Deadline, allow_private: bool = False, trusted: frozenset[Origin] = frozenset()
) -> Address | None:
    """The address to fetch `url` from: the first its host resolves to, every one of them
    checked (give it to `pinned_request`); on a `trusted` origin (the configured feeds') the
    first, resolved within `deadline` alike but not checked; None under `allow_private`
    (nothing resolved: the host name is requested, as a test's or a backfill's in-process
    site needs). Raise MarketIntelError saying why `url` is not fetched (nothing is
    requested): too long to store (`market.text.fits_key`), no URL (an unclosed IPv6
    bracket, a port out of range), not http(s), no host, a host that does not resolve, or
    does not within what is left of `deadline` (the download's), or one with an internal
    address."""
    if not fits_key(url):
        raise MarketIntelError(f"not fetched: the address is longer than {MAX_KEY_BYTES:,} bytes")
    try:
        parts, _ = urlsplit(url), origin(url)
    except ValueError as exc:
        raise MarketIntelError(f"not fetched: not a URL ({exc})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise MarketIntelError(f"not fetched: {parts.scheme or 'no'} scheme, only http and https are fetched")
    if not parts.hostname:
        raise MarketIntelError("not fetched: the address names no host")
    if allow_private:
        return None
    addresses = _resolved(parts.hostname, deadline)
    if origin(url) in trusted:
        return addresses[0]
    for address in addresses:
        if internal(address):
            raise MarketIntelError(
                f"not fetched: {parts.hostname} is an internal address ({address}); only public addresses are fetched"
            )
    return addresses[0]


def pinned_request(http: httpx.Client, url: str, address: Address | None) -> httpx.Request:
    """A GET of `url` that connects to `address` (`check_fetchable`'s) without resolving the
    host again: the URL's host is the address, the host name its Host header and its TLS
    server name (httpcore's `sni_hostname`: the SNI sent and the name the certificate is
    verified for). The connection is closed after it (`Connection: close`): a pooled one,
    keyed by the address, is never reused for another name at that address, whose
    certificate was never checked. `address` None: `url` as it is."""
    if address is None:
        return http.build_request("GET", url)
    target = httpx.URL(url)
    name = target.raw_host.decode("ascii")  # IDNA-encoded, as the certificate names it
    return http.build_request(
        "GET",
        target.copy_with(host=str(address)),
        headers={"Host": target.netloc.decode("ascii"), "Connection": "close"},
        extensions={"sni_hostname": name, "trace": _tunnel_verified_as(name)},
    )


def _tunnel_verified_as(name: str) -> Callable[[str, dict[str, object]], None]:
    """httpcore's `trace` hook for a pinned request: the TLS handshake inside a tunnel through
    an HTTPS proxy (CONNECT, `HTTPS_PROXY`) is made for `name`. httpcore's tunnel ignores
    `sni_hostname` and took the pinned address as the server name, so the certificate was
    verified for the address, not the host (every HTTPS download through a proxy failed
    `certificate is not valid for '<address>'`). The hook is called with the handshake's
    arguments before it starts ("proxy.start_tls.started"), and sets the name there."""

    def trace(event: str, info: dict[str, object]) -> None:
        if event == "proxy.start_tls.started" and "server_hostname" in info:
            info["server_hostname"] = name

    return trace


@dataclass(frozen=True)
class Hop:
    """Where a download ended: its address, by host name as the URL wrote it (never the
    address it was requested at), and its answer, streamed (read it within the `with`)."""

    url: str
    response: httpx.Response


@contextmanager
def followed(
    http: httpx.Client, url: str, deadline: Deadline, reach: Reach, headers: dict[str, str] | None = None
) -> Iterator[Hop]:
    """A GET of `url` with `headers`, its redirects followed (at most MAX_REDIRECTS), every
    hop checked (`check_fetchable`, its look-up within what is left of `deadline`) and
    requested at the address checked (`pinned_request`): a name that resolved to a public
    address for the check is never resolved again for the request (DNS rebinding). A hop
    `reach` names as configured is requested by its name, unchecked. A hop refused is
    SourceUnavailableError `<asked> redirected to <hop>, not fetched: ...`; nothing is
    requested there. A hop still under way when `deadline` runs out is cut off (`_cut_off`)."""
    asked = None
    for _ in range(MAX_REDIRECTS + 1):
        address = _hop_address(url, asked, deadline, reach)
        request = pinned_request(http, url, address)
        request.headers.update(headers or {})
        with _cut_off(request, deadline):
            response = http.send(request, stream=True, follow_redirects=False)
            if not response.has_redirect_location:
                with closing(response):
                    yield Hop(url, response)
                return
            response.close()
        asked, url = url, str(httpx.URL(url).join(response.headers["location"]))  # httpx checked it
    too_many = f"{asked} redirected more than {MAX_REDIRECTS} times; not followed further"
    raise SourceUnavailableError(masked_urls(too_many))


@contextmanager
def _cut_off(request: httpx.Request, deadline: Deadline) -> Iterator[None]:
    """`request`'s hop, its connection shut once `deadline` runs out, as `deadline`'s
    BudgetExceededError: the client's timeout bounds each wait for bytes only, so a server
    sending its answer's head a byte a second (the body is checked as each chunk comes,
    `bounded_body`) held the download for hours. The connection is a new one, never pooled
    (`Connection: close`): its socket is what httpcore's `trace` hook hands `_Watch`."""
    watch = _Watch()
    request.headers["Connection"] = "close"
    request.extensions["trace"] = _both(request.extensions.get("trace"), watch.trace)
    timer = threading.Timer(deadline.remaining() + 0.01, watch.cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    except httpx.HTTPError:
        if watch.was_cut:
            deadline.check()  # spent: raises BudgetExceededError
        raise
    finally:
        timer.cancel()


class _Watch:
    """The socket a hop's connection reads from, as httpcore's `trace` hook hands it over
    (the TCP one, then the TLS one wrapping it), and `cut` to shut it from another thread:
    a read blocked on it returns, and the request fails."""

    def __init__(self) -> None:
        self.socket: socket.socket | None = None
        self.was_cut = False

    def trace(self, event: str, info: dict[str, object]) -> None:
        if event.endswith(("connect_tcp.complete", "start_tls.complete")):
            self.socket = info["return_value"].get_extra_info("socket")  # type: ignore[attr-defined]
            if self.was_cut:  # the limit ran out before the connection was made (a slow name server)
                self.cut()

    def cut(self) -> None:
        self.was_cut = True
        if self.socket is not None:
            with suppress(OSError):  # already closed
                socket.socket.shutdown(self.socket, socket.SHUT_RDWR)  # not SSLSocket's: no TLS goodbye


Trace = Callable[[str, dict[str, object]], None]


def _both(first: Trace | None, second: Trace) -> Trace:
    """One httpcore `trace` hook calling `first` (where there is one), then `second`."""

    def trace(event: str, info: dict[str, object]) -> None:
        if first is not None:
            first(event, info)
        second(event, info)

    return trace


def _hop_address(url: str, asked: str | None, deadline: Deadline, reach: Reach) -> Address | None:
    """`check_fetchable`'s address for a hop to `url` (`asked` redirected to it; None: the
    first), or the hop's SourceUnavailableError naming the redirect."""
    named = reach.allow_private or reach.configured(url)
    try:
        return check_fetchable(url, deadline, named, reach.trusted)
    except MarketIntelError as refused:
        if asked is None:
            raise
        raise SourceUnavailableError(masked_urls(f"{asked} redirected to {url}, {refused.detail}")) from None


def internal(address: Address) -> bool:
    """Whether `address` is inside a network rather than on the public internet (an IPv4
    address written as IPv6, ::ffff:127.0.0.1, judged as the IPv4 one; a 6to4 address,
    2002:a9fe:a9fe::, internal where the IPv4 address it carries is: a 6to4 relay delivers
    it there, and Python's `is_global` takes all of 2002::/16 for public)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if isinstance(address, ipaddress.IPv6Address) and address.sixtofour is not None and internal(address.sixtofour):
        return True
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or not address.is_global
    )


def _resolved(host: str, deadline: Deadline) -> list[Address]:
    """Every address `host` resolves to (an address written in the URL is itself)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        found = _looked_up(host, deadline)
    except (OSError, UnicodeError) as exc:
        raise MarketIntelError(f"not fetched: {host} does not resolve ({exc})") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]


def _looked_up(host: str, deadline: Deadline) -> list:
    """`socket.getaddrinfo` of `host`, waited for at most what is left of `deadline`: the
    system's resolver has no timeout of its own to give (a name server that does not answer
    held the stage as long as the resolver retried, outside the download's limit). A look-up
    given up on goes on in its daemon thread until the resolver gives up, and is not waited for."""
    found: list[list] = []
    failed: list[OSError | UnicodeError] = []

    def look_up() -> None:
        try:
            found.append(socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP))
        except (OSError, UnicodeError) as exc:
            failed.append(exc)

    thread = threading.Thread(target=look_up, name=f"resolve {host}", daemon=True)
    thread.start()
    thread.join(deadline.remaining())
    if thread.is_alive():
        raise MarketIntelError(
            f"not fetched: looking up {host} took longer than the {deadline.seconds:g} s allowed; {deadline.advice}"
        )
    if failed:
        raise failed[0]
    return found[0]
