"""A download goes to the address that was checked, and HTTPS still verifies the
certificate for the URL's host name (ingest/addresses.py `pinned_request`), directly and
through an HTTPS proxy; a redirect's hop too (`followed`), from the exchange and the macro
sources as from a feed's link."""

import contextlib
import datetime
import ipaddress
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest

from ingest.addresses import Reach, followed, pinned_request
from ingest.exchange.client import ExchangeClient, PageLimits
from ingest.macro_sources import fetch_all
from market.budget import Deadline
from market.errors import MarketIntelError, SourceUnavailableError
from market.settings import Settings

LOOPBACK = ipaddress.ip_address("127.0.0.1")


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for `name` and its key, as PEM files under `folder`."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pkcs8 = serialization.PrivateFormat.PKCS8
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption()))
    return certfile, keyfile


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = self.headers["Host"].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tls_site(tmp_path: Path) -> Iterator[tuple[int, Path, list[str]]]:
    """An HTTPS server on 127.0.0.1 with a certificate for `news.test` only: its port, the
    certificate and the server names the clients sent (SNI)."""
    certfile, keyfile = _certificate(tmp_path, "news.test")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)
    names: list[str] = []
    context.sni_callback = lambda _socket, name, _context: names.append(name)
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], certfile, names
    server.shutdown()
    server.server_close()


def test_a_pinned_https_request_verifies_the_certificate_for_the_host_name(
    tls_site: tuple[int, Path, list[str]],
) -> None:
    """Sent to the checked address, the request still names its host (Host and SNI) and is
    verified for it: the server's certificate for news.test serves news.test and is refused
    for any other name sent to the same address."""
    port, certfile, names = tls_site
    with httpx.Client(verify=ssl.create_default_context(cafile=certfile), timeout=5) as http:
        answer = http.send(pinned_request(http, f"https://news.test:{port}/a.pdf", LOOPBACK))
        with pytest.raises(httpx.ConnectError, match="certificate is not valid for 'other.test'"):
            http.send(pinned_request(http, f"https://other.test:{port}/a.pdf", LOOPBACK))
    assert (answer.status_code, answer.text) == (200, f"news.test:{port}")
    assert names == ["news.test", "other.test"]


def _tunnel(client: socket.socket, targets: list[str]) -> None:
    """One CONNECT: the target noted, then bytes both ways until either side closes."""
    head = b""
    while b"\r\n\r\n" not in head:
        head += client.recv(4096)
    target = head.split(b" ")[1].decode()
    targets.append(target)
    host, port = target.rsplit(":", 1)
    with client, socket.create_connection((host, int(port))) as upstream:
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        ends = {client: upstream, upstream: client}
        while True:
            ready, _, _ = select.select(list(ends), [], [], 5)
            data = ready[0].recv(65536) if ready else b""
            if not data:
                return
            ends[ready[0]].sendall(data)


@pytest.fixture
def connect_proxy() -> Iterator[tuple[str, list[str]]]:
    """An HTTPS proxy (CONNECT) on 127.0.0.1: its URL and the targets it was asked to connect to."""
    server = socket.create_server(("127.0.0.1", 0))
    targets: list[str] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_tunnel, args=(client, targets), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", targets
    server.close()


def test_through_an_https_proxy_the_pinned_address_is_tunnelled_to_and_the_host_name_verified(
    tls_site: tuple[int, Path, list[str]], connect_proxy: tuple[str, list[str]]
) -> None:
    """Through a proxy (HTTPS_PROXY) the tunnel goes to the checked address, and the
    certificate is verified for the URL's host name, not for that address: every HTTPS
    download through a proxy failed `certificate is not valid for '127.0.0.1'`."""
    port, certfile, names = tls_site
    proxy, targets = connect_proxy
    with httpx.Client(verify=ssl.create_default_context(cafile=certfile), timeout=5, proxy=proxy) as http:
        answer = http.send(pinned_request(http, f"https://news.test:{port}/a.pdf", LOOPBACK))
        with pytest.raises(httpx.ConnectError, match="certificate is not valid for 'other.test'"):
            http.send(pinned_request(http, f"https://other.test:{port}/a.pdf", LOOPBACK))
    assert (answer.status_code, answer.text) == (200, f"news.test:{port}")
    assert targets == [f"127.0.0.1:{port}"] * 2 and names == ["news.test", "other.test"]


class _Redirecting(BaseHTTPRequestHandler):
    """A configured site on 127.0.0.1: /secret is its internal page (noted when served), /loop
    redirects to itself, and every other path to http://rebind.test/secret."""

    served: list[str]

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path != "/secret":
            where = "/loop" if self.path == "/loop" else f"http://rebind.test:{port}/secret"
            self.send_response(302)
            self.send_header("Location", where)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.served.append(self.headers["Host"])
        self.send_response(200)
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"secret")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def rebinding_site(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str], list[str]]]:
    """The configured site's URL, the Host headers its internal page was served to, and the
    look-ups of rebind.test: a resolver stub answering a public address first, 127.0.0.1 after
    (DNS rebinding). The public address is unreachable (the tests have no network)."""
    served: list[str] = []
    server = HTTPServer(("127.0.0.1", 0), type("Handler", (_Redirecting,), {"served": served}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    real, looked_up = socket.getaddrinfo, []

    def dns(host: str, *args, **kwargs):
        if host == "93.184.216.34":
            raise OSError("network unreachable")
        if host == "rebind.test":
            looked_up.append(host)
            host = "93.184.216.34" if len(looked_up) == 1 else "127.0.0.1"
            if len(looked_up) == 1:
                return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, 0))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    yield f"http://127.0.0.1:{server.server_address[1]}", served, looked_up
    server.shutdown()
    server.server_close()


def test_a_redirect_from_the_exchange_is_requested_at_the_address_checked(
    rebinding_site: tuple[str, list[str], list[str]],
) -> None:
    """The exchange's site redirected to a host that resolved to a public address for the
    check and to 127.0.0.1 when the client resolved it again to connect: the client read the
    internal page. The hop goes to the address checked, and its name is looked up once."""
    url, served, looked_up = rebinding_site
    with ExchangeClient(url, retries=0, timeout=5) as client, pytest.raises(SourceUnavailableError) as failed:
        client.get("/quotes")
    assert str(failed.value) == f"{url}/quotes connection failed (ConnectError: network unreachable) on all 1 attempts"
    assert served == [] and looked_up == ["rebind.test"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_redirect_from_a_macro_source_is_requested_at_the_address_checked(
    rebinding_site: tuple[str, list[str], list[str]], settings: Settings
) -> None:
    """A macro source redirected as the exchange did (it was followed by the HTTP client,
    its hop's name resolved again), and, read with a client of the caller's, not checked."""
    url, served, looked_up = rebinding_site
    settings = settings.model_copy(update={"macro_base_url": url, "allow_private_enclosures": False})
    for http in (None, httpx.Client(timeout=5, follow_redirects=True)):
        with pytest.raises(MarketIntelError, match=r"POLICY_RATE.csv unreachable \(ConnectError\)$"):
            fetch_all(settings, datetime.date(2026, 11, 5), http)
        assert served == [] and looked_up == ["rebind.test"]
        looked_up.clear()  # the name server answers the public address to the next look-up


def test_a_redirect_loop_is_the_sites_failure(rebinding_site: tuple[str, list[str], list[str]]) -> None:
    """A site redirecting to itself was an httpx error the client did not catch
    (TooManyRedirects): the stage failed on it unexplained."""
    url, _, _ = rebinding_site
    with ExchangeClient(url, retries=0, timeout=5) as client, pytest.raises(SourceUnavailableError) as failed:
        client.get("/loop")
    assert str(failed.value) == f"{url}/loop redirected more than 5 times; not followed further"


@pytest.fixture
def dripping_site() -> Iterator[str]:
    """A site on 127.0.0.1 that answers every request with the start of a head, then one
    byte of it every 0.2 s, never ending it."""
    server = socket.create_server(("127.0.0.1", 0))

    def drip(client: socket.socket) -> None:
        with client, contextlib.suppress(OSError):
            client.recv(65536)
            client.sendall(b"HTTP/1.1 200 OK\r\n")
            while True:
                client.sendall(b"X")
                time.sleep(0.2)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                threading.Thread(target=drip, args=(server.accept()[0],), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def test_a_page_whose_head_is_sent_a_byte_at_a_time_is_cut_off_at_the_limit(dripping_site: str) -> None:
    """The page's time limit was checked as its body came, and the client's timeout bounds
    each wait only: a head sent a byte at a time (16 KiB of it, a byte every few seconds)
    held the page for hours. It is the attempt's timeout, at the limit."""
    started = time.monotonic()
    limits = PageLimits(max_seconds=1, internal_redirects=True)
    with ExchangeClient(dripping_site, retries=0, timeout=5, limits=limits) as client:
        with pytest.raises(SourceUnavailableError) as failed:
            client.get("/quotes")
    assert time.monotonic() - started < 3
    said = f"{dripping_site}/quotes sent its page for longer than the 1 s allowed on all 1 attempts"
    assert str(failed.value) == said


def test_a_redirect_to_a_6to4_address_carrying_an_internal_one_is_refused() -> None:
    """A 6to4 address (2002::/16) carries an IPv4 one, which a relay delivers to: Python takes
    the range for public, so a redirect to the metadata service or a private host written
    that way was followed. A 6to4 address carrying a public one is fetched."""
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        hops = {
            "/metadata": "http://[2002:a9fe:a9fe::]/",  # 169.254.169.254
            "/private": "http://[2002:a00:8::1]/",  # 10.0.0.8
            "/public": "http://[2002:5db8:d822::]/",  # 93.184.216.34
        }
        where = hops.get(request.url.path)
        return httpx.Response(302, headers={"location": where}) if where else httpx.Response(200, content=b"ok")

    with ExchangeClient("http://exchange.test", retries=0, transport=httpx.MockTransport(respond)) as client:
        for path in ("/metadata", "/private"):
            with pytest.raises(SourceUnavailableError, match=r"not fetched: 2002:\S+ is an internal address \(2002:"):
                client.get(path)
        assert client.get("/public").body == b"ok"
    assert seen == [
        "http://exchange.test/metadata",
        "http://exchange.test/private",
        "http://exchange.test/public",
        "http://[2002:5db8:d822::]/",
    ]


def test_a_dripping_head_after_a_slow_look_up_is_cut_off_too(
    dripping_site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The configured site's name is looked up by the HTTP client: a name server slower than
    the page's limit, then a head sent a byte at a time, and the connection made after the
    limit ran out was never cut. It is cut as it is made."""
    real = socket.getaddrinfo

    def dns(host: str, *args, **kwargs):
        if host == "slow-dns.test":
            time.sleep(1.5)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", dns)
    site = dripping_site.replace("127.0.0.1", "slow-dns.test")
    started = time.monotonic()
    limits = PageLimits(max_seconds=1, internal_redirects=True)
    with ExchangeClient(site, retries=0, timeout=5, limits=limits) as client:
        with pytest.raises(SourceUnavailableError, match="sent its page for longer than the 1 s allowed"):
            client.get("/quotes")
    assert time.monotonic() - started < 4


def test_a_download_through_an_https_proxy_is_watched_and_verified_for_its_host_name(
    tls_site: tuple[int, Path, list[str]], connect_proxy: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A download's hop (`followed`) through a proxy: the time limit's watch shares
    httpcore's trace hook with the tunnel's server name, which still verifies the
    certificate for news.test at the address looked up."""
    port, certfile, names = tls_site
    proxy, targets = connect_proxy
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda host, *a, **k: real(host.replace("news.test", "127.0.0.1"), *a, **k)
    )
    reach = Reach(trusted=frozenset({("https", "news.test", port)}))  # a configured feed's origin: not checked
    deadline = Deadline(5, "the download", "retried")
    with (
        httpx.Client(verify=ssl.create_default_context(cafile=certfile), timeout=5, proxy=proxy) as http,
        followed(http, f"https://news.test:{port}/a.pdf", deadline, reach) as hop,
    ):
        assert (hop.url, hop.response.read()) == (f"https://news.test:{port}/a.pdf", f"news.test:{port}".encode())
    assert targets == [f"127.0.0.1:{port}"] and names == ["news.test"]
