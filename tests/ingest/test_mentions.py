import time

import pytest

from ingest.mentions import ALIASES, InstrumentMatcher
from ingest.simulator.universe import NAMED_COMPANIES

INSTRUMENTS = [{"symbol": s, "name": n} for s, n, *_ in NAMED_COMPANIES] + [
    {"symbol": "WIN", "name": "Windward Insurance Limited"}
]
matcher = InstrumentMatcher(INSTRUMENTS)


def symbols(text: str) -> list[str]:
    return [m.symbol for m in matcher.find(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("KCB reports higher profit", ["KCB"]),
        ("Shares of Island Savings Bank (ISB) rose", ["ISB"]),
        ("Kingston Commercial Bank Limited declares dividend", ["KCB"]),
        ("Windward Insurance posts a loss", ["WIN"]),
        ("NCT: board meeting date confirmed", ["NCT"]),
        ("Both CFG and BLH traded higher", ["BLH", "CFG"]),
        ("Gainers: KCB, ISB and NCT", ["ISB", "KCB", "NCT"]),  # a list of symbols is not a shouted line
        ("QUARTERLY REPORT (WIN)", ["WIN"]),
        ("NOTICE TO SHAREHOLDERS - WIN: DIVIDEND", ["WIN"]),
        ("Caribbean Financial Group posts a record profit", ["CFG"]),
        ("Blue Lagoon Holdings opens a hotel", ["BLH"]),
        ("Manchester Coffee Growers says Blue Mountain coffee exports rose 12%", ["MCG"]),  # a place, not BMD
        # a name without its "Group" or "Holdings", as a company is written
        ("Harbour Retail opens ten stores", ["HRG"]),
        ("Shares of Harbour Retail's parent fell", ["HRG"]),
        ("QUARTERLY REPORT\nHarbour Retail\nNet profit rose", ["HRG"]),
        ("Blue Lagoon said on Monday it would open a hotel", ["BLH"]),
    ],
)
def test_symbols_and_names(text: str, expected: list[str]) -> None:
    assert symbols(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We expect to win more contracts",
        "The KCBX index",
        "Kingston Harbour Commercial Centre",
        "ISBN 978-0",
        "a kcb subsidiary",
        "WE EXPECT TO WIN MORE CONTRACTS",  # in capitals a word and a symbol look alike
        "Headline: INSURERS WIN APPROVAL",
        # "Group" and "Holdings" are no legal form: without them a name is a common phrase
        "Caribbean Financial Action Task Force puts the island under increased monitoring",
        "Tourists return to the Blue Lagoon in Portland after the storm",
        "The Harbour Retail Park reopens",  # a longer name
        "New harbour retail space opens downtown",  # not as a company is written
        "The Harbour Retail strip was flooded",  # after "the"
        "Caribbean Financial Action Task Force review",
        # places are no aliases
        "Kingston Commercial district landlords raise rents",
        "Hikers on Blue Mountain Peak at dawn",
    ],
)
def test_no_false_matches(text: str) -> None:
    assert symbols(text) == []


@pytest.mark.parametrize("symbol, alias", [(s, a) for s, aliases in ALIASES.items() for a in aliases])
def test_every_alias_finds_its_instrument(symbol: str, alias: str) -> None:
    found = matcher.find(f"Analysts say {alias} outperformed this week.")
    assert [(m.symbol, m.matched_by) for m in found] == [(symbol, "alias")]


def test_how_it_was_matched_is_kept() -> None:
    assert [(m.symbol, m.matched_by) for m in matcher.find("Blue Lagoon Holdings and ISB")] == [
        ("BLH", "name"),
        ("ISB", "symbol"),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("KINGSTON COMMERCIAL BANK", ["KCB"]),
        ("Kingſton Commercial Bank", ["KCB"]),  # a long s
        ("\u212aINGSTON COMMERCIAL BANK", ["KCB"]),  # the Kelvin sign
        ("ISLAND SAV\u0130NGS BANK", ["ISB"]),  # a dotted capital I
        ("\u0131SLAND SAVINGS BANK", ["ISB"]),  # a dotless i
    ],
)
def test_a_name_in_any_case_is_found_however_its_letters_are_written(text: str, expected: list[str]) -> None:
    """re.I matches the long s, the Kelvin sign and the dotted and dotless i with their ASCII
    letters: what the matcher looks for before it runs a name's pattern must match them too."""
    assert symbols(text) == expected


def test_a_long_disclosure_is_matched_in_seconds() -> None:
    """A disclosure's text (up to 200 KB a page, 50 pages) was matched by every name's pattern
    in turn: a 1 MB annual report took about 30 s against 300 names, 10 against 100, and held
    T1's text stage as long."""
    many = InstrumentMatcher(
        [{"symbol": f"S{n:03d}", "name": f"Company Number{n} Holdings Limited"} for n in range(300)] + INSTRUMENTS
    )
    text = "The quarter's results were good and costs fell. " * 20_000 + "Kingston Commercial Bank Limited"
    started = time.monotonic()
    assert [m.symbol for m in many.find(text)] == ["KCB"]
    assert time.monotonic() - started < 5
