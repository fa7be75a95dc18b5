"""Where a download a source names may go. A feed names the address of each disclosure PDF,
and a hostile feed could name one inside the service's network (127.0.0.1, 10.x, the cloud
metadata service at 169.254.169.254, ::1, a host name resolving to one): the service would
request it on the feed's behalf (SSRF). An address is refused, before any request, unless it
is http(s) and every address its host resolves to is a public one, or it is on the origin
(scheme, host and port) of a feed the operator configured: that address the service reads
anyway, so a PDF beside the feed on an exchange's internal mirror is fetched while one the feed
names on any other internal host is not. `allow_private` (the `allow_private_enclosures`
setting, for a demo or test serving its PDFs from 127.0.0.1) lifts the address check, never the
scheme check."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from market.errors import MarketIntelError

SCHEMES = ("http", "https")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


Origin = tuple[str, str, int | None]


def origin(url: str) -> Origin:
    """The URL's scheme, host and port (the scheme's own port where none is written)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def check_fetchable(url: str, allow_private: bool = False, trusted: frozenset[Origin] = frozenset()) -> None:
    """Raise MarketIntelError saying why `url` is not fetched (nothing is requested): not
    http(s), no host, a host that does not resolve, or one with an internal address that is
    not on a `trusted` origin (the configured feeds')."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise MarketIntelError(f"not fetched: {parts.scheme or 'no'} scheme, only http and https are fetched")
    if not parts.hostname:
        raise MarketIntelError("not fetched: the address names no host")
    if allow_private or origin(url) in trusted:
        return
    for address in _resolved(parts.hostname):
        if internal(address):
            raise MarketIntelError(
                f"not fetched: {parts.hostname} is an internal address ({address}); only public addresses are fetched"
            )


def internal(address: Address) -> bool:
    """Whether `address` is inside a network rather than on the public internet (an IPv4
    address written as IPv6, ::ffff:127.0.0.1, judged as the IPv4 one)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or not address.is_global
    )


def _resolved(host: str) -> list[Address]:
    """Every address `host` resolves to (an address written in the URL is itself)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise MarketIntelError(f"not fetched: {host} does not resolve ({exc})") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]
