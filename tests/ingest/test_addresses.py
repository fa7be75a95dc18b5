"""A download goes to the address that was checked, and HTTPS still verifies the
certificate for the URL's host name (ingest/addresses.py `pinned_request`)."""

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest

from ingest.addresses import pinned_request

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
