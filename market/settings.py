"""The one settings object. Every value comes from the environment (prefix `MARKETINTEL_`)
or a `.env` file; nothing is read at import time: call `get_settings()`.

Paths default to folders inside the project checkout (`var/`, `runs/`, `notebooks/`), so a
fresh clone runs with no configuration at all.
"""

from __future__ import annotations

import os
import re
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Literal

from dotenv import dotenv_values
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from market.errors import ConfigurationError
from market.fees import DEFAULT_SCHEDULE, SCHEDULES, is_fee_file, market_fees
from market.money import setting_amount

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DELIST_AFTER_SESSIONS = 60  # a held name without a row this many sessions is delisted (portfolio/delisting.py)
HOME_CURRENCY = "JMD"  # the home exchange's currency: the simulator's, and the generic CSV's default
ADMIN_KEY_PATTERN = re.compile(r"^svc-admin-[0-9a-f]{32,}$")
ADMIN_KEY_FILE = "admin-key"  # in secrets_dir: the admin key `marketintel demo` generates once (mode 0600)
REDIS_SCHEMES = ("redis://", "rediss://", "redis+unix://", "redis+sentinel://", "redis+cluster://")
Tier = Literal["STANDARD", "PRO", "INSTITUTIONAL"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MARKETINTEL_",
        env_file=(PROJECT_ROOT / ".env", ".env"),
        env_file_encoding="utf-8",
        extra="ignore",
    )

    database_url: str = Field(
        default=f"sqlite:///{PROJECT_ROOT / 'var' / 'marketintel.db'}",
        description="SQLAlchemy URL of the store; SQLite file by default, postgresql://... in production.",
    )
    migration_database_url: str | None = Field(
        default=None,
        description="Owner connection used only by `marketintel db upgrade`; defaults to database_url.",
    )
    postgres_service_role: str | None = Field(
        default="marketintel_app",
        description="On Postgres every service connection runs SET ROLE to this role, which has no "
        "UPDATE/DELETE/TRUNCATE; empty to connect as the login user unchanged.",
    )
    admin_key: SecretStr | None = Field(
        default=None,
        description="Admin API key, `svc-admin-` followed by at least 32 hex digits; unset: the key in "
        "secrets_dir/admin-key, when that file exists (`marketintel demo` writes one).",
    )
    data_dir: Path = Field(default=PROJECT_ROOT / "var" / "data", description="Raw snapshots, PDFs, imports.")
    runs_dir: Path = Field(default=PROJECT_ROOT / "runs", description="Executed notebooks, runs/<date>/<stage>.ipynb.")
    notebooks_dir: Path = Field(default=PROJECT_ROOT / "notebooks", description="Stage notebook templates.")
    models_dir: Path = Field(default=PROJECT_ROOT / "var" / "models", description="Model artifacts (not in git).")
    reports_dir: Path = Field(default=PROJECT_ROOT / "var" / "reports", description="Generated PDF reports.")
    exchange_base_url: str = Field(default="http://127.0.0.1:8765", description="Exchange website (or simulator).")
    exchange_timeout_seconds: float = Field(default=10.0, gt=0, description="Per-request timeout for the exchange.")
    exchange_retries: int = Field(default=3, ge=0, description="Retries of a transient exchange failure.")
    exchange_backoff_seconds: float = Field(default=0.5, ge=0, description="First retry delay; doubles each retry.")
    exchange_closures: list[date] = Field(
        default_factory=list,
        description="Weekdays the exchange did not open though no public holiday says so (a storm, a system "
        "outage), as a JSON list of dates: the calendar reads them as closed, so T0 skips them and T1's "
        "pre-flight does not wait for their delivery. Unused under a replay, whose files are its calendar.",
    )
    simulator_seed: int = Field(default=7, description="Seed of the built-in exchange simulator.")
    simulator_instruments: int = Field(default=60, ge=60, description="Instruments the simulator lists.")
    replay_path: Path | None = Field(
        default=None,
        description="Replay real history instead of simulating: a folder (or file) of end-of-day files in a format the "
        "importer reads. Every process then uses the files' trading calendar, and the exchange served and "
        "backfilled is the replay (`ingest/replay.py`); unset: the built-in simulator.",
    )
    replay_currency: str | None = Field(
        default=None,
        pattern=r"^[A-Z]{3}$",
        description="Currency of replayed prices; unset: the format's (KES for the NSE files, JMD for the generic "
        "CSV).",
    )
    macro_base_url: str | None = Field(
        default=None,
        description="Where the three macro sources are (/boj, /statin, /pioj); default: the exchange base URL, "
        "which the simulator serves them at.",
    )
    news_feeds: list[str] = Field(
        default_factory=list,
        description="RSS/Atom feed URLs (JSON list); empty: the exchange's own feed at <exchange_base_url>/news/rss.",
    )
    allow_private_enclosures: bool = Field(
        default=False,
        description="Download disclosure PDFs a feed names at internal addresses (loopback, private, "
        "link-local such as the cloud metadata service at 169.254.169.254): off, such an enclosure is a "
        "FAILED disclosure and never requested, and a configured site's redirect to another host at such an "
        "address is refused; on only for a demo or test serving its PDFs from this machine.",
    )
    disclosures_per_run: int = Field(
        default=100,
        ge=1,
        description="Most disclosure PDFs one run of the text stage downloads and reads (each may take up to "
        "pdf_timeout_seconds to download and as long to read); those past it are left for the next run, which "
        "finds them not stored, and counted as disclosures_deferred in the stage summary.",
    )
    pdf_max_bytes: int = Field(
        default=10_000_000, ge=1, description="Largest PDF accepted (disclosures, statements, research)."
    )
    max_body_bytes: int = Field(
        default=262_144,
        ge=1024,
        description="Largest request body other than an upload (REST JSON, GraphQL "
        "documents with their variables); 413 from Content-Length or as soon "
        "as a chunked body passes it.",
    )
    max_url_bytes: int = Field(
        default=8_192,
        ge=256,
        description="Longest path plus query string (a GraphQL document sent by GET included); 414 over it.",
    )
    pdf_max_pages: int = Field(default=50, ge=1, description="Most pages read from one PDF.")
    pdf_timeout_seconds: float = Field(
        default=20.0, gt=0, description="Time allowed to extract one PDF's text, and to download one disclosure PDF."
    )
    pdf_sandbox_memory_mb: int = Field(
        default=512,
        ge=256,
        le=8192,
        description="Address space one PDF sandbox (ingest/pdf_worker.py) may take, in MiB (RLIMIT_AS); a file "
        "that needs more (a decompression bomb) is refused as malformed.",
    )
    pdf_sandboxes: int = Field(
        default=2,
        ge=1,
        le=32,
        description="PDF sandboxes alive at once in one process; one more waits up to pdf_timeout_seconds, "
        "then is refused as busy (503). So hostile PDFs in parallel stay under pdf_sandboxes x "
        "pdf_sandbox_memory_mb per process (1 GiB by default).",
    )
    research_text_max_bytes: int = Field(
        default=1_000_000,
        ge=1,
        description="Largest plain-text research note accepted (a PDF note is capped by "
        "pdf_max_bytes and pdf_max_pages).",
    )
    research_quota_characters: int = Field(
        default=10_000_000,
        ge=1,
        description="Most text one client's research notes may hold in all (characters); a "
        "note past it is refused (413). The house's notes have no quota.",
    )
    upload_reads: int = Field(
        default=2,
        ge=1,
        description="Uploads (statements, research notes) read and filed at once per API worker, each "
        "in a PDF sandbox of its own; one past it is refused (503 with Retry-After), so "
        "uploads bound the memory and CPU they take and never hold other requests' "
        "database slots while a PDF is read.",
    )
    upload_reads_per_client: int = Field(
        default=1,
        ge=1,
        description="Of those, at most this many for one client (the house counts as one); one past "
        "it is refused (429 with Retry-After).",
    )
    shutdown_grace_seconds: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="How long a server (`marketintel serve`, `marketintel exchange serve`, the demo's API) "
        "waits after SIGTERM or Ctrl-C for the requests in flight before it closes their connections and "
        "exits: a client that keeps a request open (an upload trickled a few bytes at a time) cannot hold "
        "a stop for longer. A write caught by it is a transaction: committed or rolled back, never half.",
    )
    research_text_timeout_seconds: float = Field(
        default=5.0, gt=0, description="Time allowed to tag and score one research note's text (plain or from a PDF)."
    )
    price_band: float = Field(
        default=0.5,
        gt=0,
        description=(
            "Largest accepted close-to-previous-close move without a split notice, a factor either way "
            "(0.5: a rise of 50% or a fall of a third; ingest/exchange/band.py)."
        ),
    )
    trade_price_band: float = Field(
        default=0.15,
        gt=0,
        lt=1,
        description="A manual trade's price must lie within this fraction of the latest close (the exchange's daily "
        "limit).",
    )
    daily_price_limit: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        description="The market's stated daily price limit, a fraction of the previous close (0.1 = 10%): the "
        "importer and the research loaders report every close beyond it (by more than a tick) that no "
        "corporate action explains as a probable capital change (ingest/importers/actions.py). Unset: no "
        "limit is known and nothing is reported.",
    )
    delist_after_sessions: int = Field(
        default=DELIST_AFTER_SESSIONS,
        ge=1,
        description="Sessions without a row after which a held position is delisted (portfolio/delisting.py): "
        "the AI book and the backtest leave it out of the book's names and value it by delisted_value from "
        "then on, and the record says so with the date.",
    )
    delisted_value: Literal["nothing", "last_close"] = Field(
        default="nothing",
        description="What a delisted position is worth: `nothing` (conservative: nothing until a corporate "
        "action gives a value per share) or `last_close`; the other reading is printed beside it.",
    )
    ai_starting_cash: float = Field(
        default=10_000_000,
        gt=0,
        description="Opening cash of the autonomous AI portfolio (JMD), deposited on its first executed day; once "
        "open, its return is measured from that deposit, not from this setting.",
    )
    fee_schedule: str = Field(
        default=DEFAULT_SCHEDULE,
        description="The market whose fee schedule every fill pays (market/fees.py): its statutory levies plus "
        "the brokerage below; `jse` (the simulated Jamaica-style market: JSE cess 0.32%, JCSD 0.03%), `nse` "
        "(Nairobi: NSE 0.12%, CMA 0.12%, CDSC 0.08%, Investor Compensation Fund 0.01%), or the path of a "
        ".toml or .json fee file with any market's levies, brokerage, minimums and retail rate "
        "(market.fees.FEE_FILE_FORMAT), read and checked when the settings load.",
    )
    brokerage_fee_rate: float | None = Field(
        default=None,
        ge=0,
        lt=0.1,
        description="The brokerage part of each fill's fee, a fraction of its value: the professional "
        "(negotiated) rate; the schedule's levies are added to it (AI portfolio, suggestions, manual-trade "
        "preview, decisions). Unset: the schedule's own (0.5% for both built-in schedules).",
    )
    brokerage_min_fee: float | None = Field(
        default=None,
        ge=0,
        description="Smallest brokerage commission per fill, in the market's currency; unset: the schedule's own "
        "(none for the built-in schedules).",
    )
    retail_brokerage_fee_rate: float | None = Field(
        default=None,
        ge=0,
        lt=0.1,
        description="The retail brokerage rate reports and the backtest print beside the default; unset: the "
        "schedule's published retail figure (1.4% for both built-in schedules).",
    )
    foundation_model: str = Field(
        default="amazon/chronos-bolt-small", description="Chronos-Bolt hub id or local folder."
    )
    foundation_model_offline: bool = Field(default=True, description="Never download model weights.")
    public_reports: bool = Field(default=False, description="PDF report endpoints need no API key.")
    company_name: str = Field(default="Market Intelligence Service", description="Report header line.")
    report_page_size: Literal["A4", "Letter"] = Field(default="A4", description="Paper size of the PDF reports.")
    rate_limit_standard: int = Field(default=60, ge=1, description="Requests per minute, STANDARD keys.")
    rate_limit_pro: int = Field(default=300, ge=1, description="Requests per minute, PRO keys.")
    rate_limit_institutional: int = Field(default=1200, ge=1, description="Requests per minute, INSTITUTIONAL keys.")
    rate_limit_unauthenticated: int = Field(
        default=120,
        ge=1,
        description="Requests per minute from one client address that fail authentication (no key, "
        "a malformed, unknown, revoked or rotated-out key); past it 429.",
    )
    trusted_proxies: str = Field(
        default="",
        description="Comma-separated addresses of the reverse proxies whose X-Forwarded-For names the "
        "client (uvicorn's forwarded_allow_ips; '*' trusts any). Empty: the header is ignored and "
        "the connecting address counts, so a client cannot pick its own address for the "
        "per-address limit.",
    )
    rate_limit_store: Literal["memory", "database"] = Field(
        default="memory",
        description="Where per-key request counts live: in the process (one API worker) or in the database, "
        "shared by every worker (`marketintel serve --workers N` with N > 1 switches to it); not used when "
        "redis_url is set.",
    )
    redis_url: str | None = Field(
        default=None,
        description="Redis shared by API processes on one or several machines (redis://host:6379/0, rediss://, "
        "redis+unix://, redis+sentinel://, redis+cluster://); set: per-key rate limits are counted there "
        "and rate_limit_store is not used. Unset: nothing needs Redis.",
    )
    redis_key_prefix: str = Field(
        default="marketintel",
        pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
        description="Prefix of every key written to Redis, so deployments (or tests) can share one server.",
    )
    api_key_pepper: SecretStr | None = Field(
        default=None,
        description="Server-side secret mixed into every client key's HMAC-SHA256, random and at least 32 "
        "characters (shorter stops start-up); unset: a random pepper is created once in "
        "secrets_dir/api-key-pepper. Changing it invalidates every client key.",
    )
    secrets_dir: Path = Field(default=PROJECT_ROOT / "var" / "secrets", description="Generated secrets (mode 0600).")
    graphql_introspection: bool = Field(
        default=True, description="GraphQL introspection and the GraphiQL page (/graphql in a browser); off hides both."
    )
    graphql_max_depth: int = Field(default=8, ge=2, description="Deepest GraphQL selection accepted.")
    graphql_max_tokens: int = Field(default=2000, ge=50, description="Most lexical tokens in one GraphQL document.")
    graphql_max_aliases: int = Field(default=15, ge=0, description="Most aliased fields in one GraphQL document.")
    graphql_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="Wall-clock time one GraphQL operation may run, counted from its turn under "
        "heavy_requests; past it, or once its client disconnects, its remaining fields "
        "are not resolved (error code BUDGET_EXCEEDED).",
    )
    graphql_max_cost: int = Field(
        default=200_000,
        ge=100,
        description="Largest estimated GraphQL cost: each field costs 1, times the page sizes above it.",
    )
    analysis_writer: Literal["template", "openai"] = Field(
        default="template",
        description="Who writes T1's daily analysis: the deterministic template, or an "
        "OpenAI-compatible chat endpoint (falls back to the template on any failure).",
    )
    llm_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1.",
    )
    llm_model: str = Field(default="gpt-4o-mini", description="Chat model name sent to the endpoint.")
    llm_api_key: SecretStr | None = Field(
        default=None, description="Bearer token for the endpoint (none for local servers)."
    )
    llm_timeout_seconds: float = Field(default=30.0, gt=0, description="Whole-request limit for the language model.")
    webhook_url: str | None = Field(
        default=None, description="Where notifications are POSTed as JSON; unset: stored only."
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="HMAC-SHA256 key of the X-Marketintel-Signature header (required with webhook_url)."
    )
    webhook_retries: int = Field(default=3, ge=0, description="Retries of a failed webhook delivery.")
    webhook_backoff_seconds: float = Field(
        default=1.0, ge=0, description="First webhook retry delay; doubles each retry."
    )
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, description="Per-attempt webhook timeout.")
    notify_urls: list[str] = Field(
        default_factory=list,
        description='Apprise URLs (a JSON list, e.g. ["mailto://...", "tgram://..."]) that '
        "also get a message for each model monitor ALERT; empty: webhook only.",
    )
    benchmark_index: str | None = Field(
        default=None,
        description="The stored index (index_levels, e.g. ^NASI) the track record compares with where "
        "the store holds several; unset: the one with levels on the most of the span's "
        "days. Without stored levels: the service's cap-weighted index.",
    )
    monitor_window_days: int = Field(
        default=20,
        ge=1,
        description="Trading days of live inputs and Scores the model monitor pools against the "
        "validation record (docs/monitoring.md).",
    )
    monitor_short_window_days: int = Field(
        default=5,
        ge=1,
        description="The model monitor's short window: each input's PSI is also taken over this many "
        "latest trading days, so a sudden change shows within days (docs/monitoring.md).",
    )
    monitor_alert_margin: float = Field(
        default=1.75,
        ge=1,
        description="An input's or the Score's drift is ALERT above this multiple of the largest PSI "
        "of the validation record's own windows, where that is above MONITOR_PSI_ALERT "
        "(docs/monitoring.md).",
    )
    monitor_psi_watch: float = Field(
        default=0.1, gt=0, description="Population stability index at which an input's or the Score's drift is WATCH."
    )
    monitor_psi_alert: float = Field(
        default=0.25, gt=0, description="Population stability index at which an input's or the Score's drift is ALERT."
    )
    monitor_tail_watch: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="A market-wide input is WATCH when the day's value is this far out in the "
        "validation record's daily values (two-sided tail share).",
    )
    monitor_tail_alert: float = Field(
        default=0.01, gt=0, lt=1, description="Two-sided tail share of a market-wide input's day value that is ALERT."
    )
    monitor_live_outcomes: int = Field(
        default=300,
        ge=50,
        description="Live outcomes (predictions whose label, the excess over the liquid universe over "
        "the horizon from the next close, is known and not zero) the accuracy and calibration checks read, "
        "the latest; fewer: those checks are OK with the note 'not enough live outcomes'.",
    )
    monitor_persistence_days: int = Field(
        default=3,
        ge=1,
        description="Consecutive trading days a check must breach its ALERT threshold before its state "
        "is ALERT (and MODEL_DRIFT / MODEL_DEGRADED is sent).",
    )
    heavy_requests: int = Field(
        default=2,
        ge=1,
        description="PDF reports and GraphQL operations run at most this many at a time per API worker, "
        "each in a worker thread; the rest queue, so /healthz and light requests stay "
        "responsive.",
    )
    heavy_requests_per_client: int = Field(
        default=1,
        ge=1,
        description="Of those, at most this many for one client (its key's client; the admin key "
        "counts as one; a caller without a key, of public reports, by its address); its "
        "further heavy requests queue, holding no thread or database connection, so another "
        "client waits at most one heavy operation's time for a turn. At most heavy_requests.",
    )
    db_pool_size: int = Field(
        default=5,
        ge=1,
        description="Connections each process keeps open to the store (SQLAlchemy QueuePool size). "
        "An API request holds at most one at a time, and at most this many requests "
        "hold one at once (the rest wait, holding nothing), so a small pool only "
        "queues requests.",
    )
    db_max_overflow: int = Field(
        default=10,
        ge=0,
        description="Extra connections opened past db_pool_size under load "
        "(GraphQL batches, writes); closed again when given back.",
    )
    db_pool_timeout: float = Field(
        default=30.0, gt=0, description="Seconds a request waits for a pooled connection before failing (503)."
    )
    stage_timeout_seconds: int = Field(default=1800, ge=1, description="Per-notebook execution limit.")
    log_level: str = Field(default="INFO", description="Python logging level.")

    @field_validator("database_url", "migration_database_url")
    @classmethod
    def _known_database(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("sqlite", "postgresql", "postgres://")):
            raise ValueError("only sqlite:/// and postgresql:// URLs are supported")
        return value

    @field_validator("redis_url", mode="before")
    @classmethod
    def _redis_scheme(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str) and not value.startswith(REDIS_SCHEMES):
            raise ValueError(f"expected a URL starting with {', '.join(REDIS_SCHEMES)}")
        return value

    @field_validator("fee_schedule")
    @classmethod
    def _known_fee_schedule(cls, value: str) -> str:
        """A built-in key (lower case), or a fee file's absolute path, read and checked now so
        that a bad file stops the settings from loading with one line naming it."""
        if is_fee_file(value):
            path = Path(value.strip()).expanduser().resolve()
            try:
                market_fees(str(path))
            except ConfigurationError as exc:
                raise ConfigurationError(f"MARKETINTEL_FEE_SCHEDULE={value!r}: {exc.detail}") from None
            return str(path)
        key = value.strip().lower()
        if key not in SCHEDULES:
            raise ConfigurationError(
                f"MARKETINTEL_FEE_SCHEDULE={value!r} names no fee schedule; "
                f"expected one of: {', '.join(sorted(SCHEDULES))}, or the path of a .toml or .json fee file"
            )
        return key

    @field_validator("brokerage_min_fee")
    @classmethod
    def _bounded_min_fee(cls, value: float | None) -> float | None:
        """Finite and within the one money bound (market.money `setting_amount`): an
        infinite minimum loaded, then every fee failed."""
        if value is not None:
            setting_amount(value, "MARKETINTEL_BROKERAGE_MIN_FEE")
        return value

    @field_validator("replay_path", "replay_currency", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _heavy_share_within_heavy_requests(self) -> Settings:
        if self.heavy_requests_per_client > self.heavy_requests:
            raise ValueError(
                f"heavy_requests_per_client ({self.heavy_requests_per_client}) is more than heavy_requests "
                f"({self.heavy_requests}): one client may hold at most every heavy turn there is"
            )
        return self

    @model_validator(mode="after")
    def _monitor_watch_before_alert(self) -> Settings:
        """The monitor's WATCH threshold lies before its ALERT one on the worse side: a PSI
        is worse higher, a tail share lower. Set the other way round, a breach would skip
        WATCH and the API's `worse_when` would read the thresholds upside down."""
        if self.monitor_psi_watch >= self.monitor_psi_alert:
            raise ValueError(
                f"monitor_psi_watch ({self.monitor_psi_watch:g}) is not below monitor_psi_alert "
                f"({self.monitor_psi_alert:g}): a higher PSI is worse, so WATCH comes first"
            )
        if self.monitor_tail_watch <= self.monitor_tail_alert:
            raise ValueError(
                f"monitor_tail_watch ({self.monitor_tail_watch:g}) is not above monitor_tail_alert "
                f"({self.monitor_tail_alert:g}): a smaller tail share is worse, so WATCH comes first"
            )
        return self

    @model_validator(mode="after")
    def _admin_key_from_secrets(self) -> Settings:
        """MARKETINTEL_ADMIN_KEY (environment or .env) when set, else the key kept in
        secrets_dir/admin-key when that file exists: what `marketintel demo` generated, so
        `marketintel serve` (and every uvicorn worker it starts) finds it afterwards."""
        if (self.admin_key is None or not self.admin_key.get_secret_value()) and self.admin_key_file.is_file():
            self.admin_key = SecretStr(self.admin_key_file.read_text(encoding="utf-8").strip())
        return self

    @property
    def admin_key_file(self) -> Path:
        """Where the admin key is kept when MARKETINTEL_ADMIN_KEY is not set."""
        return self.secrets_dir / ADMIN_KEY_FILE

    def checked_admin_key(self) -> str:
        """The admin key, or a ConfigurationError that says exactly what to set."""
        if self.admin_key is None or not self.admin_key.get_secret_value():
            raise ConfigurationError(
                f"MARKETINTEL_ADMIN_KEY is not set and {self.admin_key_file} holds no key: set it in the environment "
                "or .env (`marketintel keys new-admin` prints a fresh key) or write the key to that file "
                "(`marketintel demo` generates one there)"
            )
        key = self.admin_key.get_secret_value()
        if not ADMIN_KEY_PATTERN.match(key):
            origin = self.admin_key_origin()
            named = f"the admin key in {origin}" if origin == str(self.admin_key_file) else "MARKETINTEL_ADMIN_KEY"
            raise ConfigurationError(
                f"{named} is malformed: expected 'svc-admin-' followed by at least 32 lowercase hex digits"
            )
        return key

    def admin_key_origin(self) -> str:
        """Where the admin key in use was read: the path of secrets_dir/admin-key when it is
        that file's key, else MARKETINTEL_ADMIN_KEY (the override)."""
        path = self.admin_key_file
        key = self.admin_key.get_secret_value() if self.admin_key is not None else ""
        if key and path.is_file() and path.read_text(encoding="utf-8").strip() == key:
            return str(path)
        return "MARKETINTEL_ADMIN_KEY (environment or .env)"

    def rate_limit_for(self, tier: Tier) -> int:
        return {
            "STANDARD": self.rate_limit_standard,
            "PRO": self.rate_limit_pro,
            "INSTITUTIONAL": self.rate_limit_institutional,
        }[tier]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings; tests call `get_settings.cache_clear()` after changing env.

    MARKETINTEL_NO_DOTENV=1 ignores `.env` files (the test suite sets it, so a developer's
    own .env cannot change what the tests see).
    """
    if os.environ.get("MARKETINTEL_NO_DOTENV") == "1":
        return Settings(_env_file=None)
    return Settings()


def settings_environment() -> dict[str, str]:
    """The MARKETINTEL_ variables that give a process started in another working directory
    the settings this one reads (a stage notebook's kernel starts in the notebooks' folder,
    pipeline/notebooks.py): each variable this process's environment or `.env` files set
    (`Settings.model_config`: the project folder's, then the working directory's, which
    wins; the environment wins over both; none under MARKETINTEL_NO_DOTENV=1, as
    `get_settings`), with a relative folder, fee file or SQLite path made absolute against
    this working directory, where this process reads it."""
    found: dict[str, str] = {}
    if os.environ.get("MARKETINTEL_NO_DOTENV") != "1":
        for file in Settings.model_config["env_file"]:
            if Path(file).is_file():
                found.update({k.upper(): v for k, v in dotenv_values(file).items() if v is not None})
    found.update({k.upper(): v for k, v in os.environ.items()})
    prefix = Settings.model_config["env_prefix"]
    return {key: _absolute(key.removeprefix(prefix).lower(), v) for key, v in found.items() if key.startswith(prefix)}


def _absolute(field: str, value: str) -> str:
    """A setting's `value` as read in this working directory: a relative path (a folder,
    the replay, a fee file, a SQLite file) made absolute; any other value as it is."""
    if not value.strip():
        return value
    annotation = Settings.model_fields[field].annotation if field in Settings.model_fields else None
    if annotation in (Path, Path | None):
        return str(Path(value).absolute())
    if field == "fee_schedule" and is_fee_file(value):
        return str(Path(value.strip()).expanduser().absolute())
    if field in ("database_url", "migration_database_url"):
        from sqlalchemy.engine import make_url

        url = make_url(value)
        database = url.database or ""
        if url.get_backend_name() == "sqlite" and database not in ("", ":memory:") and not database.startswith("file:"):
            return url.set(database=str(Path(database).absolute())).render_as_string(hide_password=False)
    return value


WORK_FOLDERS = ("runs", "data", "models", "secrets", "reports")  # Settings' <name>_dir a run writes into


def work_environment(root: Path, database: str = "marketintel.db", url: str | None = None) -> dict[str, str]:
    """The MARKETINTEL_ variables that put the store (the SQLite file `database`, or the
    database at `url`, e.g. a Postgres one) and every folder the service writes (runs,
    data, models, secrets, reports) under `root`: for a process that must leave the
    checkout's var/ and runs/ alone (the test session, a test's CLI subprocess, a
    benchmark). The notebook templates stay where they are."""
    env = {"MARKETINTEL_DATABASE_URL": url or f"sqlite:///{root / database}"}
    env.update({f"MARKETINTEL_{name.upper()}_DIR": str(root / name) for name in WORK_FOLDERS})
    return env
