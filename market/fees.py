"""What a fill pays in fees: the market's published schedule (statutory levies plus a
stated brokerage rate), per side, in the market's currency.

A `FeeSchedule` is what the cost model (market/costs.py) charges a fill: named levies (a
rate of the fill's value each), a brokerage rate with an optional per-fill minimum, and a
floor on the whole charge. `rate` is the total proportional rate per side (levies plus
brokerage), the figure a decision weighs twice for a round trip; `fee(gross)` is the charge
in cents, each line of the contract note rounded to the cent as a broker's note shows it;
`breakdown(gross)` gives those lines (levies and brokerage) for display.

A `MarketFees` is a market's published schedule: its levies, the professional (default)
brokerage rate this service assumes and the retail rate shown beside it, with the sources
the figures were checked against (docs/portfolio.md, "The one cost model"). `SCHEDULES`
names the built-in ones; any other market's schedule is a small TOML or JSON file
(`load_fee_file`, FEE_FILE_FORMAT: levies, brokerage, minimums, the retail rate), read and
checked by the one loader, with a one-line error naming the file and the field.
`market_fees(key_or_path)` gives either; `MARKETINTEL_FEE_SCHEDULE` names one and
`fee_schedule(settings)` builds the `FeeSchedule` the service charges (the executor, the
suggestions, the trade preview), as `benchmarks/backtest.py --fees` does for a replay.

This module reads no settings class: `fee_schedule` takes anything with the four fee
settings (`FeeSettings`), so market/settings.py imports this module and not the reverse.

Not modelled: value-added tax on the brokerage commission (16% in Kenya), stamp duty (a
few shillings per KES 10,000 bracket in Kenya), custody and account fees: they are not
charged per fill on the traded value, or not by the exchange's schedule.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from market.errors import ConfigurationError
from market.money import setting_amount, to_cents

ZERO = Decimal(0)


class FeeSettings(Protocol):
    """The settings a fee schedule is built from (market/settings.py `Settings` has them)."""

    fee_schedule: str
    brokerage_fee_rate: float | None
    brokerage_min_fee: float | None
    retail_brokerage_fee_rate: float | None


@dataclass(frozen=True)
class Levy:
    """A statutory levy: a fraction of each side's traded value, paid to `name`."""

    name: str
    rate: Decimal


@dataclass(frozen=True)
class FeeBreakdown:
    """One fill's fee in cents, line by line: each levy and the brokerage. The lines add up
    to `total`; where the schedule's floor binds, the top-up is shown as brokerage (the
    broker charges it)."""

    levies: tuple[tuple[str, Decimal], ...]
    brokerage: Decimal

    @property
    def levy_total(self) -> Decimal:
        return sum((amount for _, amount in self.levies), ZERO)

    @property
    def total(self) -> Decimal:
        return self.levy_total + self.brokerage

    def as_dict(self) -> dict[str, object]:
        """Decimal text, for a rationale or a response: each levy, their sum, brokerage, total."""
        return {
            "levies": {name: str(amount) for name, amount in self.levies},
            "levy_total": str(self.levy_total),
            "brokerage": str(self.brokerage),
            "total": str(self.total),
        }


@dataclass(frozen=True)
class FeeSchedule:
    """The fees one side of a trade pays, per fill.

    `FeeSchedule(brokerage, minimum)` (positionally) is a flat brokerage rate with a floor
    and no levies, what the schedule was before it had levies; `FeeSchedule()` is 0.5%
    brokerage alone. A market's schedule comes from `MarketFees.schedule()` or
    `fee_schedule(settings)`.
    """

    brokerage: Decimal = Decimal("0.005")
    minimum: Decimal = ZERO  # the smallest charge a fill pays, levies and brokerage together
    levies: tuple[Levy, ...] = ()
    brokerage_minimum: Decimal = ZERO  # the smallest brokerage commission a fill pays
    name: str = "flat"

    @property
    def levy_rate(self) -> Decimal:
        """The statutory levies' sum, per side."""
        return sum((levy.rate for levy in self.levies), ZERO)

    @property
    def rate(self) -> Decimal:
        """The total proportional rate per side: levies plus brokerage (minimums aside)."""
        return self.levy_rate + self.brokerage

    @property
    def least(self) -> Decimal:
        """The smallest fee any fill pays: the larger of the two minimums."""
        return max(self.minimum, self.brokerage_minimum)

    def breakdown(self, gross: Decimal) -> FeeBreakdown:
        """The fee on `gross` (one side's traded value) line by line, in cents."""
        levies = tuple((levy.name, to_cents(gross * levy.rate)) for levy in self.levies)
        brokerage = to_cents(max(self.brokerage_minimum, gross * self.brokerage))
        lines = sum((amount for _, amount in levies), ZERO) + brokerage
        floor = to_cents(self.minimum)
        if lines < floor:
            brokerage += floor - lines
        return FeeBreakdown(levies, brokerage)

    def fee(self, gross: Decimal) -> Decimal:
        """The whole charge on `gross`, in cents (market/money.to_cents: what the ledger stores)."""
        return self.breakdown(gross).total

    def order_fee(self, price: Decimal, quantity: int) -> Decimal:
        """The charge on `quantity` shares at `price`: the fee on their value in cents, as the
        ledger books it (`to_cents`). The one computation of a fill's fee (market/costs.py
        `fill`), so of a trade preview's, and of a manual trade booked without fees
        (portfolio/trading.py): what a client is shown is what it is charged."""
        return self.fee(to_cents(Decimal(price) * quantity))

    def describe(self) -> str:
        """One line for a report: 'jse: levies 0.35% (JSE cess 0.32%, JCSD 0.03%) + brokerage 0.50% = 0.85% a side'."""
        parts = ", ".join(f"{levy.name} {levy.rate:.2%}" for levy in self.levies)
        levies = f"levies {self.levy_rate:.2%} ({parts}) + " if self.levies else ""
        floor = f", at least {self.least}" if self.least else ""
        return f"{self.name}: {levies}brokerage {self.brokerage:.2%} = {self.rate:.2%} a side{floor}"

    @classmethod
    def from_settings(cls, settings: FeeSettings, retail: bool = False) -> FeeSchedule:
        """`fee_schedule(settings, retail)`: the schedule the settings name."""
        return fee_schedule(settings, retail)


@dataclass(frozen=True)
class MarketFees:
    """A market's published fee schedule, per side: the statutory levies, the professional
    brokerage rate this service assumes by default and the retail rate shown beside it."""

    key: str
    market: str
    levies: tuple[Levy, ...]
    brokerage: Decimal  # professional / institutional (negotiated), the default
    retail_brokerage: Decimal  # what a retail client is quoted
    sources: tuple[str, ...] = field(default=(), compare=False)
    brokerage_minimum: Decimal = ZERO  # the smallest brokerage commission a fill pays
    minimum: Decimal = ZERO  # the smallest charge a fill pays, levies and brokerage together

    @property
    def levy_rate(self) -> Decimal:
        return sum((levy.rate for levy in self.levies), ZERO)

    def schedule(
        self, retail: bool = False, brokerage: Decimal | None = None, brokerage_minimum: Decimal | None = None
    ) -> FeeSchedule:
        """The `FeeSchedule` at the professional rate (or the retail one), `brokerage`
        replacing the rate and `brokerage_minimum` the schedule's minimum where given."""
        rate = brokerage if brokerage is not None else (self.retail_brokerage if retail else self.brokerage)
        least = self.brokerage_minimum if brokerage_minimum is None else brokerage_minimum
        name = f"{self.key} retail" if retail else self.key
        return FeeSchedule(rate, self.minimum, self.levies, least, name)


# The Nairobi Securities Exchange, equities, per side (sources in docs/portfolio.md).
NSE_LEVIES = (
    Levy("NSE transaction levy", Decimal("0.0012")),
    Levy("CMA levy", Decimal("0.0012")),
    Levy("CDSC levy", Decimal("0.0008")),
    Levy("Investor Compensation Fund", Decimal("0.0001")),
)
NSE = MarketFees(
    "nse",
    "Nairobi Securities Exchange",
    NSE_LEVIES,
    brokerage=Decimal("0.005"),
    retail_brokerage=Decimal("0.014"),
    sources=(
        "https://www.theeastafrican.co.ke/tea/business/nse-waives-transaction-fee-on-same-day-equity-trades-3871674",
        "https://www.businessdailyafrica.com/bd/markets/capital-markets/cma-to-suspend-day-trading-fees-for-uptake--4420818",
        "https://cma.or.ke/?p=4640",
        "https://nsecalc.co.ke/",
        "https://digitalfinancenews.co.ke/nse-broker-fees-explained-and-how-to-minimise-them",
    ),
)

# The Jamaica Stock Exchange (the simulated market is Jamaica-style), per side.
JSE_LEVIES = (
    Levy("JSE cess", Decimal("0.0032")),
    Levy("JCSD trade fee", Decimal("0.0003")),
)
JSE = MarketFees(
    "jse",
    "Jamaica Stock Exchange",
    JSE_LEVIES,
    brokerage=Decimal("0.005"),  # no public Jamaican figure found: the NSE's professional rate
    retail_brokerage=Decimal("0.014"),  # likewise the NSE's retail rate
    sources=(
        "https://our.today/equity-trades-in-jamaica-now-cost-more/",
        "https://www.marketscreener.com/news/JSE-Jamaica-Stock-Exchange-Investors-will-Benefit-from-New-Trade-Settlement-Fee--27316334/",
    ),
)

SCHEDULES: dict[str, MarketFees] = {schedule.key: schedule for schedule in (JSE, NSE)}
DEFAULT_SCHEDULE = "jse"  # the simulated default market's

# What benchmarks/backtest.py runs the NSE files at: the professional default and retail.
NSE_FEES = NSE.schedule()
NSE_RETAIL_FEES = NSE.schedule(retail=True)


FEE_FILE_SUFFIXES = (".toml", ".json")
MAX_RATE = Decimal("0.1")  # a levy or brokerage rate per side: a fraction of the value below 10%
FEE_FILE_FORMAT = """\
# A market's fee schedule, per side of each fill (market/fees.py load_fee_file); JSON takes the same keys.
market = "Ghana Stock Exchange"   # optional: the name reports print (default: the file's name)
brokerage = 0.005                 # required: the professional brokerage rate, a fraction of the fill's value
retail_brokerage = 0.015          # optional: the retail rate printed beside it (default: brokerage)
brokerage_minimum = 0             # optional: the smallest brokerage commission per fill, in the currency
minimum = 0                       # optional: the smallest whole charge per fill, levies included
sources = ["https://..."]         # optional: where the figures come from
[levies]                          # optional: each statutory levy's rate, a fraction of the fill's value
"GSE levy" = 0.0035
"SEC levy" = 0.0015
"""
_FEE_FILE_KEYS = ("market", "brokerage", "retail_brokerage", "brokerage_minimum", "minimum", "sources", "levies")


def is_fee_file(name: str) -> bool:
    """Whether `name` (a setting's value, a --fees option) names a fee file, not a built-in key."""
    return name.strip().lower().endswith(FEE_FILE_SUFFIXES)


def market_fees(key: str) -> MarketFees:
    """The built-in schedule named `key` (case-insensitive), or the fee file `key` names
    (`load_fee_file`: a path ending .toml or .json); KeyError naming the known ones, a
    ConfigurationError naming what is wrong with a file."""
    if is_fee_file(key):
        path = Path(key.strip()).expanduser()
        stat = path.stat() if path.is_file() else None
        return _cached_fee_file(str(path.resolve()), stat.st_mtime_ns if stat else None, stat.st_size if stat else None)
    try:
        return SCHEDULES[key.strip().lower()]
    except KeyError:
        raise KeyError(
            f"no fee schedule {key!r}; known: {', '.join(sorted(SCHEDULES))}, or a .toml or .json fee file"
        ) from None


@lru_cache(maxsize=16)
def _cached_fee_file(path: str, mtime_ns: int | None, size: int | None) -> MarketFees:
    """A fee file read once per version of it (its path, modification time and size)."""
    return load_fee_file(Path(path))


def load_fee_file(path: Path) -> MarketFees:
    """A market's schedule from a TOML or JSON file (FEE_FILE_FORMAT): ConfigurationError
    with one line naming the file and what is wrong (unreadable, not TOML or JSON, an
    unknown key, no brokerage, a rate that is not a fraction from 0 up to MAX_RATE, a
    minimum that is negative or past the one money bound (market.money
    MAX_AMOUNT), a levy without a name)."""
    where = f"fee file {path}"
    if path.suffix.lower() not in FEE_FILE_SUFFIXES:
        raise ConfigurationError(f"{where}: expected a .toml or .json file")
    if not path.is_file():
        raise ConfigurationError(f"{where}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{where}: cannot be read ({exc.__class__.__name__}: {exc})") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise ConfigurationError(f"{where}: not valid {kind}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: expected a table of keys ({', '.join(_FEE_FILE_KEYS)})")
    unknown = sorted(set(data) - set(_FEE_FILE_KEYS))
    if unknown:
        raise ConfigurationError(f"{where}: unknown keys {', '.join(unknown)}; expected {', '.join(_FEE_FILE_KEYS)}")
    if "brokerage" not in data:
        raise ConfigurationError(f"{where}: no brokerage (the professional rate, e.g. brokerage = 0.005 for 0.5%)")
    brokerage = _rate(data["brokerage"], "brokerage", where)
    return MarketFees(
        key=path.stem,
        market=_text(data.get("market", path.stem), "market", where),
        levies=_levies(data.get("levies", {}), where),
        brokerage=brokerage,
        retail_brokerage=_rate(data["retail_brokerage"], "retail_brokerage", where)
        if "retail_brokerage" in data
        else brokerage,
        sources=tuple(_text(s, "sources", where) for s in _list(data.get("sources", []), "sources", where)),
        brokerage_minimum=_amount(data.get("brokerage_minimum", 0), "brokerage_minimum", where),
        minimum=_amount(data.get("minimum", 0), "minimum", where),
    )


def _number(value: object, name: str, where: str) -> Decimal:
    """A TOML or JSON number as an exact Decimal (an integer of any size, read without a
    float: 10**400 is refused by the caller's range, never an OverflowError)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    if not isinstance(value, float) or not math.isfinite(value):
        raise ConfigurationError(f"{where}: {name} = {value!r} is not a number")
    return Decimal(str(value))


def _rate(value: object, name: str, where: str) -> Decimal:
    rate = _number(value, name, where)
    if not ZERO <= rate < MAX_RATE:
        raise ConfigurationError(
            f"{where}: {name} = {value!r} is not a rate: a fraction of the fill's value from 0 up to {MAX_RATE} "
            "(0.35% is 0.0035)"
        )
    return rate


def _amount(value: object, name: str, where: str) -> Decimal:
    """A minimum, in the currency: a number (`_number`), not negative, within the one money
    bound (market.money `setting_amount`)."""
    if _number(value, name, where) < 0:
        raise ConfigurationError(f"{where}: {name} = {value!r} is negative")
    return setting_amount(value, f"{where}: {name}")


def _text(value: object, name: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{where}: {name} = {value!r} is not a non-empty text")
    return value.strip()


def _list(value: object, name: str, where: str) -> list:
    if not isinstance(value, list):
        raise ConfigurationError(f"{where}: {name} is not a list")
    return value


def _levies(value: object, where: str) -> tuple[Levy, ...]:
    if not isinstance(value, dict):
        raise ConfigurationError(f'{where}: levies is not a table of name = rate (e.g. "SEC levy" = 0.0015)')
    return tuple(
        Levy(_text(name, "a levy's name", where), _rate(rate, f"levies.{name!r}", where))
        for name, rate in value.items()
    )


def fee_schedule(settings: FeeSettings, retail: bool = False) -> FeeSchedule:
    """The `FeeSchedule` the service charges: the levies of the market that
    `MARKETINTEL_FEE_SCHEDULE` names (a built-in key or a fee file), plus
    `MARKETINTEL_BROKERAGE_FEE_RATE` (unset: the schedule's professional rate) with
    `MARKETINTEL_BROKERAGE_MIN_FEE` as its per-fill minimum (unset: the schedule's).
    `retail=True`: the same levies and minimum at the retail rate
    (`MARKETINTEL_RETAIL_BROKERAGE_FEE_RATE`, else the schedule's published retail figure),
    for the headline printed beside the default."""
    market = market_fees(settings.fee_schedule)
    if retail:
        override = settings.retail_brokerage_fee_rate
        rate = market.retail_brokerage if override is None else Decimal(str(override))
    else:
        override = settings.brokerage_fee_rate
        rate = market.brokerage if override is None else Decimal(str(override))
    least = None if settings.brokerage_min_fee is None else Decimal(str(settings.brokerage_min_fee))
    return market.schedule(retail, rate, least)
