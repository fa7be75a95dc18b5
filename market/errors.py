"""Domain errors. Services raise these; only `api/` and the CLI translate them.

Each class names the kind of failure, never an HTTP status: the API maps classes to
statuses in one place (`api/problems.py`), the CLI prints `str(error)` on one line.
"""

from __future__ import annotations


class MarketIntelError(Exception):
    """Base of every error the service raises on purpose."""

    title = "Market intelligence error"

    def __init__(self, detail: str, **context: object) -> None:
        super().__init__(detail)
        self.detail = detail
        self.context = context


class ConfigurationError(MarketIntelError):
    """A setting is missing or malformed; the process cannot start."""

    title = "Configuration error"


class InvalidInputError(MarketIntelError):
    """The caller sent something the service cannot accept (bad date, unknown stage, ...)."""

    title = "Invalid input"


class NotFoundError(MarketIntelError):
    title = "Not found"


class ConflictError(MarketIntelError):
    """The request is valid but the current state forbids it (e.g. suggestion not pending)."""

    title = "Conflict"


class NotReadyError(MarketIntelError):
    """The data the request needs has not been produced yet (e.g. today's delivery)."""

    title = "Not ready"


class BusyError(NotReadyError):
    """The process is at its limit of a kind of work (uploads being read); `context["headers"]`
    carries Retry-After."""

    title = "Busy"


class AuthenticationError(MarketIntelError):
    title = "Unauthorized"


class PermissionDeniedError(MarketIntelError):
    title = "Forbidden"


class RateLimitedError(MarketIntelError):
    """Too many requests for the caller's limit; `context["headers"]` says when to retry."""

    title = "Too Many Requests"


class SchemaNotReadyError(NotReadyError):
    """The database has migrations that are not applied yet."""

    title = "Database schema not up to date"


class MigrationError(MarketIntelError):
    """A migration failed or an applied migration file was edited afterwards."""

    title = "Migration error"


class StageFailedError(MarketIntelError):
    """A pipeline stage failed; `detail` says which and why."""

    title = "Stage failed"


class StageAlarmError(StageFailedError):
    """A stage ran and recorded what it found, and what it found needs a person: the health
    stage's failed checks. Raised where a run's status is what someone watches (an Airflow
    task, so that it fails and its failure alert is sent); the CLI exits 2 instead."""

    title = "Stage found a problem"


class SourceUnavailableError(NotReadyError):
    """An outside source did not answer usefully after bounded retries."""

    title = "Source unavailable"


class NotPublishedError(NotReadyError):
    """The source says the requested day is not published yet (a late day)."""

    title = "Not published yet"


class IncompletePageError(SourceUnavailableError):
    """A page arrived cut short or without a section it must have."""

    title = "Incomplete page"


class DeliveryRejectedError(InvalidInputError):
    """A day's data failed validation; nothing of it was stored."""

    title = "Delivery rejected"


class BudgetExceededError(InvalidInputError):
    """Work on the caller's input ran past its time budget (market/budget.py) and was stopped."""

    title = "Budget exceeded"


class PayloadTooLargeError(InvalidInputError):
    """An upload is over its size limit."""

    title = "Payload too large"


class UnsupportedMediaTypeError(InvalidInputError):
    """An upload is of a kind the service does not read."""

    title = "Unsupported media type"
