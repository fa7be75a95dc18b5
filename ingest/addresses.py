"""Where a download a source names may go. A feed names the address of each disclosure PDF,
and a hostile feed could name one inside the service's network (127.0.0.1, 10.x, the cloud
metadata service at 169.254.169.254, ::1, a host name resolving to one): the service would
request it on the feed's behalf (SSRF). An address is refused, before any request, unless it
is http(s) and every address its host resolves to is a public one; `allow_private` (the
`allow_private_enclosures` setting, for a demo or test serving its PDFs from 127.0.0.1) lifts
the address check, never the scheme check."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from market.errors import MarketIntelError

SCHEMES = ("http", "https")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def check_fetchable(url: str, allow_private: bool = False) -> None:
    """Raise MarketIntelError saying why `url` is not fetched (nothing is requested): not
    http(s), no host, a host that does not resolve, or one with an internal address."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise MarketIntelError(f"not fetched: {parts.scheme or 'no'} scheme, only http and https are fetched")
    if not parts.hostname:
        raise MarketIntelError("not fetched: the address names no host")
    if allow_private:
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
