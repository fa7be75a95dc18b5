"""The simulated market's listed companies: fictional names, real-looking structure.

The first instruments are hand-named companies across the sectors of a small Caribbean
exchange; beyond them, generated names fill any requested size. Each instrument carries
the parameters that shape its microstructure: how often it trades, how wide its quotes
are, how volatile it is and how much news it attracts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

SIM_START = date(2024, 1, 2)  # first simulated trading day; every path starts here

# (symbol, name, sector, board, liquidity tier 0 = most liquid ... 3 = trades rarely)
NAMED_COMPANIES: list[tuple[str, str, str, str, int]] = [
    ("KCB", "Kingston Commercial Bank", "Banking", "MAIN", 0),
    ("CFG", "Caribbean Financial Group", "Financial", "MAIN", 0),
    ("BLH", "Blue Lagoon Holdings", "Conglomerates", "MAIN", 0),
    ("ISB", "Island Savings Bank", "Banking", "MAIN", 0),
    ("PMC", "Portmore Manufacturing Co", "Manufacturing", "MAIN", 1),
    ("MBI", "Montego Bay Insurance", "Insurance", "MAIN", 1),
    ("JPC", "Jamaica Power & Cable", "Energy", "MAIN", 1),
    ("SAH", "St Ann Hotels", "Tourism", "MAIN", 1),
    ("NCT", "North Coast Telecom", "Communications", "MAIN", 0),
    ("HRG", "Harbour Retail Group", "Retail", "MAIN", 1),
    ("BMD", "Blue Mountain Distillers", "Manufacturing", "MAIN", 1),
    ("CBF", "Caribbean Beverage & Foods", "Manufacturing", "MAIN", 1),
    ("LCE", "Liguanea Cement", "Manufacturing", "MAIN", 1),
    ("PRL", "Port Royal Logistics", "Distribution", "MAIN", 2),
    ("MVR", "Mandeville Realty", "Real Estate", "MAIN", 2),
    ("SCF", "Spanish Town Capital Fund", "Financial", "MAIN", 2),
    ("OCR", "Ocho Rios Resorts", "Tourism", "MAIN", 2),
    ("NGP", "Negril Properties", "Real Estate", "MAIN", 2),
    ("KMH", "Kingston Media House", "Communications", "MAIN", 2),
    ("TAF", "Treasure Agri Foods", "Manufacturing", "MAIN", 1),
    ("WIN", "Windward Insurance", "Insurance", "MAIN", 1),
    ("CLM", "Clarendon Mills", "Manufacturing", "MAIN", 2),
    ("PTH", "Palisadoes Trading House", "Distribution", "MAIN", 2),
    ("HSL", "Hellshire Shipping Lines", "Distribution", "MAIN", 2),
    ("GCB", "Gold Coast Brokers", "Financial", "MAIN", 1),
    ("RCS", "Rio Cobre Sugar", "Manufacturing", "MAIN", 2),
    ("DWP", "Dunn's Water Power", "Energy", "MAIN", 2),
    ("JMF", "Jamaica Mutual Fund", "Financial", "MAIN", 1),
    ("ATL", "Atlantic Trust & Lending", "Financial", "MAIN", 1),
    ("KEX", "Kingston Express Couriers", "Distribution", "MAIN", 2),
    ("BHP", "Bamboo House Pharmacies", "Retail", "MAIN", 2),
    ("CPL", "Coral Plastics", "Manufacturing", "MAIN", 2),
    ("SLA", "Sandals Leisure Assets", "Tourism", "MAIN", 1),
    ("EIB", "Eastern Investment Bank", "Banking", "MAIN", 1),
    ("MCG", "Manchester Coffee Growers", "Manufacturing", "MAIN", 2),
    ("TRD", "Trident Digital", "Technology", "MAIN", 2),
    ("AIS", "Ackee Industrial Supplies", "Distribution", "JUNIOR", 2),
    ("BBK", "Breadfruit Bakeries", "Manufacturing", "JUNIOR", 2),
    ("CCT", "Cockpit Country Tours", "Tourism", "JUNIOR", 3),
    ("DLS", "Discovery Bay Logistics", "Distribution", "JUNIOR", 3),
    ("EFS", "Errol Flynn Studios", "Communications", "JUNIOR", 3),
    ("FMT", "Falmouth Motors", "Retail", "JUNIOR", 2),
    ("GPT", "Greenwood Pharma Tech", "Technology", "JUNIOR", 2),
    ("HLF", "Half Moon Lending", "Financial", "JUNIOR", 2),
    ("IBS", "Irie Bottling & Spirits", "Manufacturing", "JUNIOR", 3),
    ("JSS", "John Crow Security Services", "Other", "JUNIOR", 3),
    ("KLT", "Kool Lime Textiles", "Manufacturing", "JUNIOR", 3),
    ("LGE", "Lucea Green Energy", "Energy", "JUNIOR", 2),
    ("MSF", "May Pen Solar Farms", "Energy", "JUNIOR", 3),
    ("NBC", "Nanny Bay Credit", "Financial", "JUNIOR", 2),
    ("OBD", "Old Harbour Builders", "Real Estate", "JUNIOR", 3),
    ("PPT", "Pimento Pepper Traders", "Distribution", "JUNIOR", 3),
    ("QHS", "Quick Hire Staffing", "Other", "JUNIOR", 3),
    ("RBF", "Reggae Beat Foods", "Retail", "JUNIOR", 2),
    ("SVM", "Savanna Medical", "Other", "JUNIOR", 3),
    ("TPS", "Tryall Payment Systems", "Technology", "JUNIOR", 2),
    ("UCS", "Upper Clarendon Seafood", "Manufacturing", "JUNIOR", 3),
    ("VWH", "Vere Warehousing", "Distribution", "JUNIOR", 3),
    ("WRM", "White River Microfinance", "Financial", "JUNIOR", 2),
    ("XPL", "Xaymaca Plantations", "Manufacturing", "JUNIOR", 3),
    ("YSC", "YS Falls Cosmetics", "Retail", "JUNIOR", 3),
    ("ZNT", "Zion Hill Networks", "Technology", "JUNIOR", 3),
]


@dataclass(frozen=True)
class Tier:
    """What a liquidity tier draws its instruments' parameters from (uniform ranges)."""

    p_trade: tuple[float, float]  # probability of trading on a day
    typical_volume: float  # median daily volume in shares on a traded day
    base_spread: float  # typical quoted spread as a fraction of the price (quotes sit on whole price steps)
    volatility: tuple[float, float]  # daily standard deviation of the latent value's log


# Calibrated, with the microstructure constants in market.py, to the stylised facts of the
# NSE Kenya daily files (stylised_facts.json): a fifth of instrument-days without a trade,
# most names trading nearly every day and a tail trading on a few days a week, moves of
# about 1.5%, an ADV_20 cross-section over more than a decade. The base spreads are set
# so that the Abdi-Ranaldo estimator (market/liquidity.py, 60 traded sessions) run on the
# simulated bars reads what it reads on the NSE files in each ADV_20 band (about 1.4% for
# ADV_20 >= 100k shares, 1.7% for 5k-100k, 1.4% under 5k; benchmarks/stylised_facts.py
# prints both): the closes are volume-weighted averages, which keep about half of the
# bounce, so the quotes behind an AR of 1.4% are about 3% wide (with the quote grid).
TIERS = {
    0: Tier((0.97, 0.99), 300_000, 0.010, (0.009, 0.019)),
    1: Tier((0.90, 0.99), 50_000, 0.028, (0.011, 0.021)),
    2: Tier((0.75, 0.98), 8_000, 0.031, (0.011, 0.024)),
    3: Tier((0.20, 0.60), 1_400, 0.040, (0.011, 0.024)),
}
VOLUME_DISPERSION = 0.9  # log-sd of typical volume around its tier's median, across names
SECTORS = sorted({c[2] for c in NAMED_COMPANIES})


@dataclass(frozen=True)
class Instrument:
    index: int
    symbol: str
    name: str
    sector: str
    board: str
    tier: int
    p_trade: float
    typical_volume: float
    base_spread: float
    volatility: float  # daily log-return standard deviation
    beta: float
    news_rate: float  # expected news items per trading day
    initial_price: float
    shares_outstanding: int
    listed_day: int  # index of the listing day among the simulated trading days (0: listed before)
    delisted_day: int | None  # index of the first day it no longer trades, if it delists


def build_universe(size: int, seed: int, day_count: int) -> list[Instrument]:
    """`size` instruments over `day_count` simulated trading days. Every 20th instrument
    lists during the simulation and every 29th delists, so both paths are exercised."""
    rng = np.random.default_rng([seed, 1])
    instruments = []
    for i in range(size):
        if i < len(NAMED_COMPANIES):
            symbol, name, sector, board, tier = NAMED_COMPANIES[i]
        else:
            board = "JUNIOR" if rng.random() < 0.4 else "MAIN"
            tier = int(rng.choice([1, 2, 3], p=[0.3, 0.4, 0.3]))
            symbol, name, sector = f"S{i:04d}", f"Simulated Company {i:04d}", SECTORS[i % len(SECTORS)]
        params = TIERS[tier]
        listed_day = int(rng.integers(40, day_count // 2)) if i % 20 == 13 else 0
        delisted_day = int(rng.integers(max(listed_day + 120, day_count // 3), day_count)) if i % 29 == 17 else None
        instruments.append(
            Instrument(
                index=i,
                symbol=symbol,
                name=name,
                sector=sector,
                board=board,
                tier=tier,
                p_trade=float(rng.uniform(*params.p_trade)),
                typical_volume=float(params.typical_volume * rng.lognormal(0, VOLUME_DISPERSION)),
                base_spread=float(params.base_spread * rng.uniform(0.6, 1.5)),
                volatility=float(rng.uniform(*params.volatility)),
                beta=float(rng.uniform(0.3, 1.2)),
                news_rate=float(0.08 / (1 + tier) + 0.02),
                initial_price=float(np.round(rng.lognormal(3.2, 1.0), 2) + 1.0),
                shares_outstanding=int(rng.integers(50, 4000) * 1_000_000),
                listed_day=listed_day,
                delisted_day=delisted_day,
            )
        )
    return instruments
