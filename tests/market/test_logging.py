"""The one logging set-up: our packages at the configured level, libraries at WARNING."""

import logging
import tomllib

from market.logging import OWN_PACKAGES, configure_logging
from market.settings import PROJECT_ROOT


def test_own_packages_are_the_packages_pyproject_installs() -> None:
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert set(OWN_PACKAGES) == {name.rstrip("*") for name in include}


def test_libraries_are_quiet_unless_verbose() -> None:
    # A library logger nobody else in the test session configures (Airflow's and other
    # libraries' logging set-ups may already have touched httpx's in an earlier test).
    library = logging.getLogger("some_library.client")
    root, before = logging.getLogger(), logging.getLogger().level
    try:
        configure_logging("INFO")
        assert not library.isEnabledFor(logging.INFO)
        assert library.isEnabledFor(logging.WARNING)
        assert logging.getLogger("pipeline.runner").isEnabledFor(logging.INFO)
        configure_logging("INFO", verbose=True)
        assert library.isEnabledFor(logging.INFO)
        configure_logging("ERROR")
        assert not library.isEnabledFor(logging.WARNING)
    finally:
        root.setLevel(before)
        for package in OWN_PACKAGES:
            logging.getLogger(package).setLevel(logging.NOTSET)


def test_a_key_in_a_traceback_is_cut_to_its_prefix() -> None:
    """A key in an exception's message (a lookup's KeyError, a driver's error quoting its
    statement) reached the log in the traceback's text, which the record factory's message
    redaction did not touch: every formatter, uvicorn's included, prints it cut."""
    from uvicorn.logging import DefaultFormatter

    key = "svc-sk-" + "ab12" * 10
    lines: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(logging.Formatter().format(record))
            lines.append(DefaultFormatter("%(message)s").format(record))

    logger = logging.getLogger("pipeline.test_traceback_redaction")
    handler = _Collect()
    logger.addHandler(handler)
    try:
        configure_logging("INFO")
        try:
            {}[key]
        except KeyError:
            logger.exception("lookup failed")
        logger.warning("where", stack_info=True)
    finally:
        logger.removeHandler(handler)
    text = "\n".join(lines)
    assert "KeyError: 'svc-sk-<redacted>'" in text and "Traceback" in text, text
    assert "Stack (most recent call last)" in text
    assert "ab12" not in text, text


def test_a_record_is_one_line_whatever_its_arguments_hold() -> None:
    """Client text reached log records with its line feeds (a GraphQL refusal quotes the
    cursor it refuses): each a line the client wrote. The message and its arguments, an
    exception's text included, are escaped when the record is made (its traceback too: below)."""
    lines: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(logging.Formatter("%(levelname)s %(message)s").format(record))

    logger = logging.getLogger("desk.test_one_line")
    handler = _Collect()
    logger.addHandler(handler)
    # a lone surrogate last: a stream writing UTF-8 cannot write it ("--- Logging error ---")
    fake = "x\n2026-11-30 17:30:00,000 WARNING api.security: admin key accepted\r\x1b[2K\u2028\ud800"
    try:
        configure_logging("INFO")
        logger.info("refused: %s (%s)", fake, ValueError(fake))
        logger.info({"a": 1})  # a message that is no text is kept for its own str()
    finally:
        logger.removeHandler(handler)
    escaped = "x\\n2026-11-30 17:30:00,000 WARNING api.security: admin key accepted\\r\\x1b[2K\\u2028\\ud800"
    assert lines == [f"INFO refused: {escaped} ({escaped})", "INFO {'a': 1}"]


def test_a_record_with_a_traceback_is_one_line_on_every_handler_the_service_configures() -> None:
    """An exception's message reached the log in its traceback's text with its line feeds:
    `ValueError("bad\\n2026-11-30 INFO forged")`, logged by `log.exception`, wrote a line that
    read as another event. The traceback and a record's stack are escaped like its message,
    and each handler the service configures (the root's, uvicorn's) joins a record's lines
    with the escaped line break: every record is one line; another handler's formatter
    writes the traceback on a line of its own, one line too."""
    import io

    import uvicorn

    from pipeline.serving import uvicorn_log_options

    other = _Plain()
    logging.getLogger("api.problems").addHandler(other)
    # a set-up before the service's turned uvicorn's error logger off (Airflow's does)
    logging.getLogger("uvicorn.error").propagate = False
    configure_logging("INFO")
    # uvicorn's set-up as served (at WARNING, as the tests' servers log: no later one logs at INFO)
    uvicorn.Config("api.app:create_app", factory=True, log_level="warning", **uvicorn_log_options())
    handlers = [h for h in logging.getLogger().handlers if getattr(h, "_marketintel", False)]
    handlers += logging.getLogger("uvicorn").handlers
    streams = [io.StringIO() for _ in handlers]
    previous = [h.setStream(s) for h, s in zip(handlers, streams, strict=True)]
    try:
        for name in ("api.problems", "uvicorn.error"):
            try:
                raise ValueError("bad\n2026-11-30 INFO forged")
            except ValueError:
                logging.getLogger(name).exception("unhandled error")
            logging.getLogger(name).warning("where", stack_info=True)
    finally:
        for handler, stream in zip(handlers, previous, strict=True):
            handler.setStream(stream)
        logging.getLogger("api.problems").removeHandler(other)
    assert [len(record.splitlines()) for record in other.records] == [2, 2], other.records
    for stream in streams:
        lines = stream.getvalue().splitlines()
        assert len(lines) == 2, lines
        assert "unhandled error\\nTraceback (most recent call last):\\n" in lines[0], lines
        assert "ValueError: bad\\n2026-11-30 INFO forged" in lines[0], lines
        assert "where\\nStack (most recent call last):\\n" in lines[1], lines


class _Plain(logging.Handler):
    """Each record as the standard library's formatter writes it."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(logging.Formatter().format(record))


def test_a_urls_credentials_are_masked_whoever_logs_it(caplog) -> None:
    """httpx logs each request's URL whole (INFO, shown under `--verbose`): a configured
    feed's password and API key with it."""
    configure_logging("INFO", verbose=True)
    try:
        with caplog.at_level(logging.INFO, logger="httpx"):
            logging.getLogger("httpx").info('HTTP Request: GET %s "HTTP/1.1 200 OK"', "http://u:pw-9@h/rss?token=k-9")
    finally:
        configure_logging("INFO")
    assert 'GET http://***@h/rss?token=*** "HTTP/1.1 200 OK"' in caplog.text and "-9" not in caplog.text
