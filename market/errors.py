"""Domain errors. Services raise these; only `api/` and the CLI translate them.

Each class names the kind of failure, never an HTTP status nor a title: the API maps
classes to problem types (status, type URI and the type's one title) in one place
(`api/problems.py` `TYPE_BY_ERROR`), the detail saying what happened this time; the CLI
prints `str(error)` on one line.
"""

from __future__ import annotations


class MarketIntelError(Exception):
    """Base of every error the service raises on purpose."""

    def __init__(self, detail: str, **context: object) -> None:
        super().__init__(detail)
        self.detail = detail
        self.context = context


class ConfigurationError(MarketIntelError):
    """A setting is missing or malformed; the process cannot start."""


class InvalidInputError(MarketIntelError):
    """The caller sent something the service cannot accept (bad date, unknown stage, ...)."""


class NotFoundError(MarketIntelError):
    """Nothing is stored under what the caller names (a symbol, portfolio, suggestion, key, day)."""


class ConflictError(MarketIntelError):
    """The request is valid but the current state forbids it (e.g. suggestion not pending)."""


class NotReadyError(MarketIntelError):
    """The data the request needs has not been produced yet (e.g. today's delivery)."""


class BusyError(NotReadyError):
    """The process is at its limit of a kind of work (uploads being read); `context["headers"]`
    carries Retry-After."""


class AuthenticationError(MarketIntelError):
    """The caller sent no usable API key (none, malformed, unknown, revoked or rotated out)."""


class PermissionDeniedError(MarketIntelError):
    """The key is valid but may not do this (its tier or settings)."""


class RateLimitedError(MarketIntelError):
    """Too many requests for the caller's limit; `context["headers"]` says when to retry."""


class SchemaNotReadyError(NotReadyError):
    """The database has migrations that are not applied yet."""


class MigrationError(MarketIntelError):
    """A migration failed or an applied migration file was edited afterwards."""


class StageFailedError(MarketIntelError):
    """A pipeline stage failed; `detail` says which and why."""


class StageAlarmError(StageFailedError):
    """A stage ran and recorded what it found, and what it found needs a person: the health
    stage's failed checks. Raised where a run's status is what someone watches (an Airflow
    task, so that it fails and its failure alert is sent); the CLI exits 2 instead."""


class SourceUnavailableError(NotReadyError):
    """An outside source did not answer usefully after bounded retries."""


class NotPublishedError(NotReadyError):
    """The source says the requested day is not published yet (a late day)."""


class IncompletePageError(SourceUnavailableError):
    """A page arrived cut short or without a section it must have."""


class DeliveryRejectedError(InvalidInputError):
    """A day's data failed validation; nothing of it was stored."""


class BudgetExceededError(InvalidInputError):
    """Work on the caller's input ran past its time budget (market/budget.py) and was stopped."""


class PayloadTooLargeError(InvalidInputError):
    """An upload is over its size limit."""


class UnsupportedMediaTypeError(InvalidInputError):
    """An upload is of a kind the service does not read."""
