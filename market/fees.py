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
names the built-in ones; `MARKETINTEL_FEE_SCHEDULE` picks one and `fee_schedule(settings)`
builds the `FeeSchedule` the service charges.

Not modelled: value-added tax on the brokerage commission (16% in Kenya), stamp duty (a
few shillings per KES 10,000 bracket in Kenya), custody and account fees: they are not
charged per fill on the traded value, or not by the exchange's schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from market.money import to_cents

if TYPE_CHECKING:
    from market.settings import Settings

ZERO = Decimal(0)


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

    def describe(self) -> str:
        """One line for a report: 'jse: levies 0.35% (JSE cess 0.32%, JCSD 0.03%) + brokerage 0.50% = 0.85% a side'."""
        parts = ", ".join(f"{levy.name} {levy.rate:.2%}" for levy in self.levies)
        levies = f"levies {self.levy_rate:.2%} ({parts}) + " if self.levies else ""
        floor = f", at least {self.least}" if self.least else ""
        return f"{self.name}: {levies}brokerage {self.brokerage:.2%} = {self.rate:.2%} a side{floor}"

    @classmethod
    def from_settings(cls, settings: Settings, retail: bool = False) -> FeeSchedule:
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

    @property
    def levy_rate(self) -> Decimal:
        return sum((levy.rate for levy in self.levies), ZERO)

    def schedule(
        self, retail: bool = False, brokerage: Decimal | None = None, brokerage_minimum: Decimal = ZERO
    ) -> FeeSchedule:
        """The `FeeSchedule` at the professional rate (or the retail one), `brokerage`
        replacing the rate where given."""
        rate = brokerage if brokerage is not None else (self.retail_brokerage if retail else self.brokerage)
        name = f"{self.key} retail" if retail else self.key
        return FeeSchedule(rate, ZERO, self.levies, brokerage_minimum, name)


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


def market_fees(key: str) -> MarketFees:
    """The built-in schedule named `key` (case-insensitive); KeyError naming the known ones."""
    try:
        return SCHEDULES[key.strip().lower()]
    except KeyError:
        raise KeyError(f"no fee schedule {key!r}; known: {', '.join(sorted(SCHEDULES))}") from None


def fee_schedule(settings: Settings, retail: bool = False) -> FeeSchedule:
    """The `FeeSchedule` the service charges: the levies of the market that
    `MARKETINTEL_FEE_SCHEDULE` names, plus `MARKETINTEL_BROKERAGE_FEE_RATE` (the
    professional rate) with `MARKETINTEL_BROKERAGE_MIN_FEE` as its per-fill minimum.
    `retail=True`: the same levies and minimum at the retail rate
    (`MARKETINTEL_RETAIL_BROKERAGE_FEE_RATE`, else the schedule's published retail figure),
    for the headline printed beside the default."""
    market = market_fees(settings.fee_schedule)
    if retail:
        override = settings.retail_brokerage_fee_rate
        rate = market.retail_brokerage if override is None else Decimal(str(override))
    else:
        rate = Decimal(str(settings.brokerage_fee_rate))
    return market.schedule(retail, rate, Decimal(str(settings.brokerage_min_fee)))
