"""The finance scorer on hand-written sentences whose polarity is not in doubt."""

import pytest

from models.sentiment import key_sentences, score_text

LABELLED = [
    ("The bank reported record profits and strong loan growth.", "positive"),
    ("Revenue rose sharply, beating analyst expectations.", "positive"),
    ("The company upgraded its full-year guidance after a robust quarter.", "positive"),
    ("Margins improved and the board declared a higher dividend.", "positive"),
    ("The insurer returned to profitability with solid underwriting gains.", "positive"),
    ("Management is confident that expansion into Trinidad will succeed.", "positive"),
    ("Earnings surged on resilient tourism demand.", "positive"),
    ("The retailer won a major government contract.", "positive"),
    ("Analysts upgrade the stock citing strong cash generation.", "positive"),
    ("The manufacturer recovered strongly from last year's downturn.", "positive"),
    ("Sales did not decline despite the hurricane.", "positive"),
    ("The audit found no impairment and no breach of covenants.", "positive"),
    ("The company reported a net loss for the quarter.", "negative"),
    ("Profit fell sharply as costs surged and demand weakened.", "negative"),
    ("The regulator opened an investigation into accounting fraud.", "negative"),
    ("The firm warned of lower earnings amid a severe recession.", "negative"),
    ("Shares plunged after the company missed its revenue target.", "negative"),
    ("The group recorded a large impairment on its hotel assets.", "negative"),
    ("The lender faces litigation and possible penalties.", "negative"),
    ("Trading in the stock was suspended pending a restatement.", "negative"),
    ("Management cut the dividend, citing uncertainty.", "negative"),
    ("The company defaulted on its bond payments.", "negative"),
    ("Growth did not improve and margins remained weak.", "negative"),
    ("Earnings failed to recover after the setback.", "negative"),
    ("The board could not achieve its profitability targets.", "negative"),
    ("Analysts downgrade the insurer on deteriorating claims.", "negative"),
    ("The company will hold its annual general meeting on 15 May.", "neutral"),
    ("The board appointed a new company secretary.", "neutral"),
    ("The financial statements are attached to this notice.", "neutral"),
    ("Shareholders of record on 3 June are entitled to attend.", "neutral"),
    ("The company's registered office moved to New Kingston.", "neutral"),
    ("A director purchased 10,000 shares on the exchange.", "neutral"),
]


def test_at_least_ninety_percent_of_labelled_sentences_are_right() -> None:
    assert len(LABELLED) >= 30
    wrong = [(text, label, score_text(text).label) for text, label in LABELLED if score_text(text).label != label]
    assert len(wrong) <= 0.1 * len(LABELLED), wrong


@pytest.mark.parametrize(
    "plain, negated",
    [
        ("Profit improved.", "Profit did not improve."),
        ("Sales declined.", "Sales have not declined."),
        ("There was an impairment.", "There was no impairment."),
    ],
)
def test_negation_flips_polarity(plain: str, negated: str) -> None:
    assert score_text(plain).score * score_text(negated).score < 0


def test_intensity_scales_and_evidence_accumulates() -> None:
    assert score_text("Revenue fell sharply.").score < score_text("Revenue fell.").score < 0
    assert 0 < score_text("Revenue rose slightly.").score < score_text("Revenue rose.").score
    assert score_text("Strong growth, record gains, robust demand.").score > score_text("Strong growth.").score
    assert score_text("").score == 0 and score_text("The meeting is on Tuesday.").hits == []


def test_finance_words_that_general_lexicons_misread() -> None:
    assert score_text("Total liabilities and tax expense are shown in note 4.").score == 0
    assert score_text("The company wrote down goodwill after a loss.").score < 0


def test_key_sentences_pick_the_strongest_in_reading_order() -> None:
    text = (
        "The meeting was held in Kingston. Profit fell sharply and the outlook is uncertain. "
        "Directors were re-elected. Revenue growth was strong."
    )
    picked = key_sentences(text, count=2)
    assert [p["sentence"] for p in picked] == [
        "Profit fell sharply and the outlook is uncertain.",
        "Revenue growth was strong.",
    ]
    assert picked[0]["score"] < 0 < picked[1]["score"]
