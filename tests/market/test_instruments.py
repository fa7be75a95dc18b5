"""The instrument-type vocabulary and the one rule (market/instruments.py)."""

import pytest

from market.instruments import (
    InstrumentType,
    infer_instrument_type,
    instrument_type,
    is_ordinary,
    parse_instrument_type,
)

# Every code and name in the NSE Kenya daily files (2006-2022) that is not an ordinary
# share, with the type the rule gives it; the other 67 codes are ordinary shares.
NSE_NOT_ORDINARY = {
    ("KPLC-P4", "KPLC-P4"): InstrumentType.PREFERENCE,
    ("KPLC-P7", "KPLC-P7"): InstrumentType.PREFERENCE,
    ("GLD", "ABSA NewGold ETF"): InstrumentType.FUND,
    ("GLD", "Barclays NewGold ETF"): InstrumentType.FUND,
    ("FAHR", "Stanlib Fahari Income-REIT"): InstrumentType.FUND,
    ("GLD", None): InstrumentType.FUND,  # the per-company files carry no names
    ("FAHR", None): InstrumentType.FUND,
    ("^NASI", "NSE All-Share Index"): InstrumentType.INDEX,
}


@pytest.mark.parametrize(("code", "name"), list(NSE_NOT_ORDINARY))
def test_the_nse_non_ordinary_codes_are_caught(code: str, name: str | None) -> None:
    kind = infer_instrument_type(code, name)
    assert kind == NSE_NOT_ORDINARY[(code, name)]
    assert not is_ordinary(kind)


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("KPLC", "Kenya Power and Lighting Company Plc"),
        ("KCB", "KCB Group Plc"),
        ("SCOM", "Safaricom Plc"),
        ("NSE", "Nairobi Securities Exchange Plc"),
        ("CTUM", "Centum Investment Company Plc"),
        ("KURV", "Kurwitu Ventures Ltd"),
        ("PREP", "Preparatory Holdings"),  # 'P' not after '-', no digits
        ("ABC-PX", "ABC"),
    ],
)
def test_ordinary_shares_stay_ordinary(code: str, name: str) -> None:
    assert infer_instrument_type(code, name) == InstrumentType.ORDINARY
    assert is_ordinary(instrument_type(code, name))


# Lines a smaller market's daily file carries beside its shares under codes that say
# nothing (Jamaica's, Ghana's, Lusaka's): read as ordinary shares they were bought by the
# AI book and averaged into the benchmark, a market index among them as a share that
# never trades
NAMED_NOT_ORDINARY = {
    ("JMMBGL7.25", "JMMB Group 7.25% Preference"): InstrumentType.PREFERENCE,
    ("PJAM-PS", "Pan Jamaica Pref Shares"): InstrumentType.PREFERENCE,
    ("BOND24", "Corporate 10% Bond 2024"): InstrumentType.DEBT,
    ("ABCD", "ABC 8% Debentures"): InstrumentType.DEBT,
    ("JMMB7.5", "JMMB 7.5% Fixed Rate Notes"): InstrumentType.DEBT,
    ("XYZ-R", "XYZ Holdings Rights"): InstrumentType.RIGHTS,
    ("GSE-CI", "GSE Composite Index"): InstrumentType.INDEX,
    ("JSEIDX", "JSE Main index"): InstrumentType.INDEX,
    ("STX40", "Satrix Top 40 Index ETF"): InstrumentType.FUND,  # a fund that tracks an index
}


@pytest.mark.parametrize(("code", "name"), list(NAMED_NOT_ORDINARY))
def test_a_name_says_what_its_code_does_not(code: str, name: str) -> None:
    kind = infer_instrument_type(code, name)
    assert kind == NAMED_NOT_ORDINARY[(code, name)]
    assert not is_ordinary(kind)


@pytest.mark.parametrize(
    "name",
    ["Diamond Trust Bank Kenya Ltd", "Preparatory Holdings", "Bondholder Capital", "Copyright Media", "Indexa Ltd"],
)
def test_a_word_inside_another_is_not_the_word(name: str) -> None:
    assert infer_instrument_type("ACME", name) == InstrumentType.ORDINARY


def test_a_stated_type_wins_over_the_inference() -> None:
    assert instrument_type("GSECI", "GSE Composite Index", "ordinary") == InstrumentType.ORDINARY
    assert instrument_type("KPLC-P4", "KPLC-P4", "ordinary") == InstrumentType.ORDINARY
    assert instrument_type("ACME", "Acme Ltd", "ETF") == InstrumentType.FUND
    assert instrument_type("ACME", "Acme Ltd", "  ") == InstrumentType.ORDINARY  # blank: not stated


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ORDINARY", InstrumentType.ORDINARY),
        ("equity", InstrumentType.ORDINARY),
        ("Preference", InstrumentType.PREFERENCE),
        ("preferred stock", InstrumentType.PREFERENCE),
        ("unit_trust", InstrumentType.FUND),
        ("Debenture", InstrumentType.DEBT),
        ("rights issue", InstrumentType.RIGHTS),
        ("locked-in", InstrumentType.LOCKED_IN),
        ("promoter", InstrumentType.LOCKED_IN),
        ("warrant", InstrumentType.UNKNOWN),
        ("", None),
        (None, None),
    ],
)
def test_a_type_column_reads_the_vocabulary_and_its_synonyms(text: str | None, kind: InstrumentType | None) -> None:
    assert parse_instrument_type(text) == kind


def test_only_ordinary_shares_are_ordinary_unknown_included() -> None:
    assert [k for k in InstrumentType if is_ordinary(k)] == [InstrumentType.ORDINARY]
    assert not is_ordinary(None)
