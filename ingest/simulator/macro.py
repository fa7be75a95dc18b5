"""A deterministic simulated economy and the three national sources that publish it.

The true monthly and quarterly paths (policy rate, FX, reserves, money supply, CPI, GDP,
unemployment) are drawn once from the seed. Each source publishes on its own calendar,
and some first estimates are revised at the next release, as the real institutions do:

| source | series | frequency | first release | revised |
|---|---|---|---|---|
| BOJ (central bank), CSV | POLICY_RATE, USDJMD, GBPJMD, EURJMD, CADJMD | monthly | 3rd of next month | no |
| | NIR (USD millions) | monthly | 8th of next month | in the mid-month statement, on the 22nd |
| | M2 (JMD millions) | monthly | 15th, six weeks on | at the next release |
| STATIN (statistics), HTML table | CPI, CPI_YOY | monthly | 15th of next month | no |
| | GDP (JMD millions, real) | quarterly | three months after the quarter | a month later |
| | UNEMPLOYMENT | quarterly | 20th, two months after | no |
| PIOJ (planning), PDF bulletin | GDP_GROWTH_EST | quarterly | 20th of the month after | at the next bulletin |
| | GROWTH_OUTLOOK (next quarter) | quarterly | with each bulletin | no |

"On the Nth" means the first weekday on or after it. Every file lists every release of
every period (a real-time data set, like ALFRED's all-vintages downloads), so one
download gives the whole vintage history; a site asked on date D shows only releases on
or before D.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property

import numpy as np

FIRST_YEAR, LAST_YEAR = 2015, 2028
MONTHS = (LAST_YEAR - FIRST_YEAR + 1) * 12


def simulated_macro_covers(day: date) -> bool:
    """Whether the simulated macro sources publish for `day`'s week: their series run from
    FIRST_YEAR to LAST_YEAR (a replay of older real files has prices but no simulated
    macro figures beside them)."""
    return FIRST_YEAR <= day.year <= LAST_YEAR


def macro_span_reason(day: date) -> str:
    return (
        f"the simulated macro sources publish from {FIRST_YEAR} to {LAST_YEAR}, "
        f"not for {day.isoformat()} (macro indicators are left empty)"
    )


FX_PAIRS = {"USDJMD": 1.0, "GBPJMD": 1.27, "EURJMD": 1.08, "CADJMD": 0.74}  # the cross in USD per unit, at the start
SERIES = {  # code: (source, name, category, frequency, unit, currency of the values)
    "POLICY_RATE": ("BOJ", "Policy interest rate", "rates", "M", "percent", None),
    "USDJMD": ("BOJ", "JMD per USD, monthly average", "fx", "M", "JMD per USD", None),
    "GBPJMD": ("BOJ", "JMD per GBP, monthly average", "fx", "M", "JMD per GBP", None),
    "EURJMD": ("BOJ", "JMD per EUR, monthly average", "fx", "M", "JMD per EUR", None),
    "CADJMD": ("BOJ", "JMD per CAD, monthly average", "fx", "M", "JMD per CAD", None),
    "NIR": ("BOJ", "Net international reserves", "reserves", "M", "USD millions", "USD"),
    "M2": ("BOJ", "Broad money (M2)", "money", "M", "JMD millions", "JMD"),
    "CPI": ("STATIN", "Consumer price index (Dec 2019 = 100)", "prices", "M", "index", None),
    "CPI_YOY": ("STATIN", "CPI inflation, 12 months", "prices", "M", "percent", None),
    "GDP": ("STATIN", "Real GDP, quarter", "output", "Q", "JMD millions", "JMD"),
    "UNEMPLOYMENT": ("STATIN", "Unemployment rate", "labour", "Q", "percent", None),
    "GDP_GROWTH_EST": ("PIOJ", "Real GDP growth estimate, year on year", "output", "Q", "percent", None),
    "GROWTH_OUTLOOK": ("PIOJ", "Real GDP growth projection for the next quarter", "outlook", "Q", "percent", None),
}


@dataclass(frozen=True)
class Release:
    code: str
    period: str
    value: float
    release_date: date


def _weekday_on_or_after(day: date) -> date:
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _month(index: int) -> tuple[int, int]:
    return FIRST_YEAR + index // 12, index % 12 + 1


def _month_day(index: int, months_later: int, day: int) -> date:
    year, month = _month(index + months_later)
    return _weekday_on_or_after(date(year, month, day))


def month_label(index: int) -> str:
    year, month = _month(index)
    return f"{year}-{month:02d}"


def quarter_label(index: int) -> str:
    return f"{FIRST_YEAR + index // 4}-Q{index % 4 + 1}"


class MacroEconomy:
    """`label` (e.g. "simulated") is added to every source's title, for a world where real
    prices are replayed beside these simulated figures; empty: the titles as published."""

    def __init__(self, seed: int = 7, label: str = "") -> None:
        self.seed = seed
        self._suffix = f" ({label})" if label else ""

    @cached_property
    def _paths(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng([self.seed, 1_000])
        rate = [5.0]
        for _ in range(MONTHS - 1):
            step = rng.choice([-0.5, -0.25, 0.25, 0.5]) if rng.random() < 0.15 else 0.0
            step += 0.25 * np.sign(5.5 - rate[-1]) if abs(5.5 - rate[-1]) > 2.5 else 0.0
            rate.append(float(np.clip(rate[-1] + step, 0.5, 10.0)))
        usd = 115 * np.exp(np.cumsum(rng.normal(0.0025, 0.009, MONTHS)))
        paths = {"POLICY_RATE": np.array(rate), "USDJMD": usd}
        for pair, start in FX_PAIRS.items():
            if pair != "USDJMD":
                paths[pair] = usd * start * np.exp(np.cumsum(rng.normal(0, 0.012, MONTHS)))
        paths["NIR"] = 2_400 + np.cumsum(rng.normal(14, 55, MONTHS))
        paths["M2"] = 400_000 * np.exp(np.cumsum(rng.normal(0.0065, 0.008, MONTHS)))
        cpi = 100 * np.exp(np.cumsum(rng.normal(0.004, 0.0035, MONTHS)))
        paths["CPI"] = cpi / cpi[59] * 100  # Dec 2019 = 100
        quarters = MONTHS // 3
        growth = rng.normal(1.2, 1.3, quarters)
        growth[20:22] -= 9.0  # a 2020 shock, as every small open economy had
        gdp = 180_000 * np.cumprod(1 + np.concatenate([[0.0], rng.normal(0.003, 0.008, quarters - 1)]))
        paths["GDP"] = gdp
        paths["GROWTH"] = growth
        paths["UNEMPLOYMENT"] = np.clip(13 - 0.17 * np.arange(quarters) + rng.normal(0, 0.4, quarters), 3.5, 16)
        paths["NOISE"] = rng.normal(0, 1, (6, MONTHS))
        return paths

    @cached_property
    def releases(self) -> dict[str, list[Release]]:
        """Every release of every series, oldest first."""
        p = self._paths
        out: dict[str, list[Release]] = {code: [] for code in SERIES}
        noise = p["NOISE"]
        for m in range(MONTHS - 3):
            label = month_label(m)
            for code in ("POLICY_RATE", *FX_PAIRS):
                out[code].append(Release(code, label, round(float(p[code][m]), 4), _month_day(m, 1, 3)))
            out["NIR"].append(
                Release("NIR", label, round(float(p["NIR"][m] + 25 * noise[0, m]), 1), _month_day(m, 1, 8))
            )
            out["NIR"].append(Release("NIR", label, round(float(p["NIR"][m]), 1), _month_day(m, 1, 22)))
            first_m2 = p["M2"][m] * (1 + 0.004 * noise[1, m])
            out["M2"].append(Release("M2", label, round(float(first_m2), 0), _month_day(m, 2, 15)))
            out["M2"].append(Release("M2", label, round(float(p["M2"][m]), 0), _month_day(m, 3, 15)))
            out["CPI"].append(Release("CPI", label, round(float(p["CPI"][m]), 2), _month_day(m, 1, 15)))
            if m >= 12:
                yoy = (p["CPI"][m] / p["CPI"][m - 12] - 1) * 100
                out["CPI_YOY"].append(Release("CPI_YOY", label, round(float(yoy), 2), _month_day(m, 1, 15)))
        for q in range(MONTHS // 3 - 2):
            label, end = quarter_label(q), q * 3 + 2  # the quarter's last month
            first_gdp = p["GDP"][q] * (1 + 0.006 * noise[2, q])
            out["GDP"].append(Release("GDP", label, round(float(first_gdp), 0), _month_day(end, 3, 1)))
            out["GDP"].append(Release("GDP", label, round(float(p["GDP"][q]), 0), _month_day(end, 4, 1)))
            out["UNEMPLOYMENT"].append(
                Release("UNEMPLOYMENT", label, round(float(p["UNEMPLOYMENT"][q]), 1), _month_day(end, 2, 20))
            )
            estimate = p["GROWTH"][q] + 0.5 * noise[3, q]
            out["GDP_GROWTH_EST"].append(
                Release("GDP_GROWTH_EST", label, round(float(estimate), 1), _month_day(end, 1, 20))
            )
            out["GDP_GROWTH_EST"].append(
                Release("GDP_GROWTH_EST", label, round(float(p["GROWTH"][q]), 1), _month_day(end, 4, 20))
            )
            outlook = p["GROWTH"][q + 1] + 0.8 * noise[4, q]
            out["GROWTH_OUTLOOK"].append(
                Release("GROWTH_OUTLOOK", quarter_label(q + 1), round(float(outlook), 1), _month_day(end, 1, 20))
            )
        return {code: sorted(rows, key=lambda r: (r.release_date, r.period)) for code, rows in out.items()}

    def published(self, code: str, through: date) -> list[Release]:
        return [r for r in self.releases[code] if r.release_date <= through]

    # ---- the three sources' formats ---------------------------------------------------
    def boj_csv(self, code: str, through: date) -> str:
        source, name, _, frequency, unit, _ = SERIES[code]
        buffer = io.StringIO()
        buffer.write(
            f"# Bank of Jamaica statistical series {code}: {name}{self._suffix}\n# unit: {unit}\n"
            f"# frequency: {'monthly' if frequency == 'M' else 'quarterly'}\n"
        )
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["period", "value", "release_date"])
        for r in self.published(code, through):
            writer.writerow([r.period, f"{r.value}", r.release_date.isoformat()])
        return buffer.getvalue()

    def statin_html(self, through: date) -> str:
        rows = []
        for code, (source, name, _, _, unit, currency) in SERIES.items():
            if source == "STATIN":
                rows += [
                    f"<tr><td>{name}</td><td>{code}</td><td>{r.period}</td><td>{r.value:,}</td><td>{unit}</td>"
                    f"<td>{currency or ''}</td><td>{r.release_date:%d %b %Y}</td></tr>"
                    for r in self.published(code, through)
                ]
        return (
            f"<!doctype html><html><head><title>STATIN key indicators{self._suffix}</title></head><body>"
            f"<h1>Statistical Institute of Jamaica: key indicators, every release{self._suffix}</h1>"
            "<table id='indicators'><thead><tr><th>Indicator</th><th>Code</th><th>Period</th><th>Value</th>"
            "<th>Unit</th><th>Currency</th><th>Released</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></body></html>"
        )

    def pioj_pdf(self, through: date) -> bytes:
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.styles import getSampleStyleSheet
        from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table

        styles = getSampleStyleSheet()
        lines = [["Code", "Period", "Value", "Unit", "Released"]]
        for code, (source, _, _, _, unit, _) in SERIES.items():
            if source == "PIOJ":
                lines += [
                    [code, r.period, f"{r.value:.1f}", unit, r.release_date.isoformat()]
                    for r in self.published(code, through)
                ]
        buffer = io.BytesIO()
        document = SimpleDocTemplate(buffer, pagesize=A4, title=f"PIOJ Economic Update and Outlook{self._suffix}")
        document.build(
            [
                Paragraph(f"Planning Institute of Jamaica: Economic Update and Outlook{self._suffix}", styles["Title"]),
                Paragraph(f"Bulletin date: {through.isoformat()}", styles["Normal"]),
                Paragraph(
                    "Estimates and projections of real GDP growth (percent, year on year), every release.",
                    styles["Normal"],
                ),
                Spacer(1, 12),
                Table(lines, repeatRows=1),
            ]
        )
        return buffer.getvalue()
