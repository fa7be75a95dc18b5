"""One logging set-up for CLI, API, notebooks and Airflow tasks.

Our own packages log at the configured level (`MARKETINTEL_LOG_LEVEL`, INFO by default);
every library (httpx's line per request, papermill's lines per notebook, nbclient,
traitlets, ...) logs at WARNING unless `verbose` is asked for (`marketintel --verbose`),
so a long job prints its progress and its result, not a line per HTTP request. The rule
is by package, not a list of noisy libraries, so a new dependency is quiet too.

No log line holds an API key (`redact_keys`): text shaped like a client or admin key
(`svc-sk-`/`svc-admin-` and hex digits, in either case) is cut to its prefix when the
record is made, whatever logs it and whichever handler writes it. A key a client put in a
URL (`?api_key=...`, which the service does not read) reached uvicorn's access log whole.
Nor does it hold a URL's credentials: a user and password, a credential-like query
parameter's value (`market.text.masked_urls`), whichever library logs the URL.
A traceback is text too: an exception's message (a `KeyError` of the key a lookup missed,
a driver's error quoting its statement) is formatted when the record is made, redacted,
and kept as the record's `exc_text`, which every `logging.Formatter` prints as it is; a
record's `stack_info` likewise.

A log record is one line (`one_line`, market/text.py): its message's and its arguments'
line breaks and other control characters are escaped when the record is made, so text a
client sent (a GraphQL refusal quotes its cursor or symbol, a file name, an exception's
message) cannot write a line that reads as another event; its traceback's and stack's text
likewise (an exception's message is in its traceback), their lines joined by the escaped
line break `\\n`. A formatter puts a line break of its own between the message and the
traceback: each handler the service configures (the root's here, uvicorn's in
pipeline/serving.py) writes it escaped too (`OneLineFormatter`), so a record is one line
there; any other handler writes a record in two lines at most, the second the traceback's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from market.text import masked_urls, one_line

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# The project's own top-level packages, lowest layer first: the `include` list of
# pyproject.toml's [tool.setuptools.packages.find] and the import contract's
# root_packages (tests/market/test_logging.py and tests/test_layers.py keep them equal).
OWN_PACKAGES = (
    "market",
    "store",
    "ingest",
    "models",
    "portfolio",
    "views",
    "analysis",
    "reports",
    "desk",
    "pipeline",
    "api",
    "cli",
)
LIBRARY_LEVEL = "WARNING"


def configure_logging(level: str = "INFO", *, verbose: bool = False) -> None:
    """Configure the root logger once; later calls only change the levels.

    Libraries (the root logger) log at WARNING, or at `level` when `verbose`; our own
    packages always log at `level`."""
    root = logging.getLogger()
    if not any(getattr(h, "_marketintel", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(OneLineFormatter(_FORMAT))
        handler._marketintel = True  # type: ignore[attr-defined]  # noqa: SLF001 - our marker on our own handler
        root.addHandler(handler)
    redact_keys()
    level = level.upper()
    root.setLevel(level if verbose else _coarser(level, LIBRARY_LEVEL))
    for package in OWN_PACKAGES:
        logging.getLogger(package).setLevel(level)


LINE_BREAK = one_line("\n")  # what joins a record's lines: the two characters \ and n


class OneLineFormatter(logging.Formatter):
    """A formatter whose record is one line: the line breaks it puts between a record's
    message, traceback and stack are written escaped (`one_line`), as the record's own are
    when it is made (`redact_keys`). A mixin for another formatter class too (uvicorn's)."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).replace("\n", LINE_BREAK)


def _coarser(a: str, b: str) -> str:
    """The less talkative of two level names (ERROR beats WARNING beats INFO)."""
    return a if logging.getLevelName(a) >= logging.getLevelName(b) else b


KEY_SHAPED = re.compile(r"(svc-(?:sk|admin)-)[0-9a-f]{8,}", re.IGNORECASE)
REDACTED = r"\1<redacted>"


def redact_keys() -> None:
    """Every log record made from now on with key-shaped text cut to its prefix and its
    line breaks escaped, in its message and its arguments (`_redacted`; an exception
    argument as its text), kept in their shapes otherwise: uvicorn's access
    formatter unpacks its arguments; its traceback and stack text are formatted here,
    redacted and escaped (`_redacted_traces`). Installed once: the record factory is wrapped again
    only when it is not already ours."""
    made = logging.getLogRecordFactory()
    if getattr(made, "redacts_keys", False):
        return

    def _record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made_record = made(*args, **kwargs)
        made_record.msg = _redacted(made_record.msg)
        if isinstance(made_record.args, tuple):
            made_record.args = tuple(_redacted(a) for a in made_record.args)
        elif isinstance(made_record.args, Mapping):
            made_record.args = {k: _redacted(v) for k, v in made_record.args.items()}
        _redacted_traces(made_record)
        return made_record

    _record.redacts_keys = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(_record)


_TRACES = logging.Formatter()


def _redacted_traces(record: logging.LogRecord) -> None:
    """The record's traceback formatted once (as `logging.Formatter` would) with its
    key-shaped text cut and as one line, kept as `exc_text` so no formatter formats it
    again whole; its stack text cut and one line likewise."""
    if record.exc_info and not record.exc_text:
        record.exc_text = one_line(_cut(_TRACES.formatException(record.exc_info)))
    if record.stack_info:
        record.stack_info = one_line(_cut(record.stack_info))


def _redacted(value: object) -> object:
    """`value` as one line with its key-shaped text cut to the prefix when it is text or an
    exception (whose text a `%s` would write), else as it is."""
    if isinstance(value, BaseException):
        value = str(value)
    return one_line(_cut(value)) if isinstance(value, str) else value


def _cut(text: str) -> str:
    """`text` with every key-shaped run cut to its prefix and every URL's credentials masked
    (`masked_urls`: httpx's line per request, under `--verbose`, names the URL whole)."""
    return masked_urls(KEY_SHAPED.sub(REDACTED, text))
