"""A finance lexicon in the Loughran-McDonald style, written for this project.

Why our own: general-purpose lexicons misread finance ("liability", "tax" and "cost" are
not negative news; "loss", "impairment" and "default" are), and the LM lists themselves
are licensed for research, not for a commercial service. These lists follow LM's idea
(words whose finance meaning is reliably positive or negative) for the vocabulary of
company news and disclosures. Words are matched after light normalisation (lower case;
see `scorer.normalise` for the inflections folded onto a stem).
"""

from __future__ import annotations

POSITIVE = frozenset(
    """
achieve achievement advance advantage attractive beat beneficial benefit best boost breakthrough
buoyant confident confidence encouraging exceed excellent expand expansion favorable favourable gain
good great grow growth high higher improve improvement increase innovative leader leading
outperform positive profitable profitability progress prosper prosperous rebound recover
recovery resilient reward rise robust solid stable strength strengthen strong succeed success
successful surge surpass upbeat upgrade upturn win winner momentum accretive
""".split()
)

NEGATIVE = frozenset(
    """
adverse against allegation bankrupt bankruptcy breach burden challenge cut damage decline decrease
default deficit delay delist deteriorate deterioration difficult difficulty disappoint disappointing
dispute doubt downgrade downturn drop erode erosion fail failure fall fine fraud halt hurt impair
impairment inability investigation lawsuit layoff litigation lose loss low lower miss negative
penalty plunge poor probe problem recession restate restatement risk sanction setback shortfall
shrink slowdown slump suspend suspension terminate uncertain uncertainty underperform unfavorable
unfavourable volatile volatility warn warning weak weaken weakness worse worst writedown write-down
closure costly crisis concern concerns caution cautious pressure squeeze
""".split()
)

# Words that turn the polarity of what follows them (within NEGATION_WINDOW tokens).
NEGATORS = frozenset(
    "not no never without neither nor cannot didn't doesn't don't isn't wasn't aren't "
    "weren't won't wouldn't hasn't haven't hadn't failed fails unable lack lacks".split()
)
NEGATION_WINDOW = 3

# Words that scale the next sentiment word.
INTENSIFIERS = {
    "very": 1.5,
    "strongly": 1.5,
    "sharply": 1.6,
    "significantly": 1.5,
    "substantially": 1.5,
    "record": 1.3,
    "major": 1.3,
    "severe": 1.6,
    "severely": 1.6,
    "deeply": 1.5,
    "highly": 1.4,
    "slightly": 0.5,
    "marginally": 0.5,
    "somewhat": 0.6,
    "modestly": 0.6,
    "mildly": 0.6,
}

# Irregular forms folded onto their lexicon word.
IRREGULAR = {
    "fell": "fall",
    "fallen": "fall",
    "rose": "rise",
    "risen": "rise",
    "grew": "grow",
    "grown": "grow",
    "won": "win",
    "lost": "lose",
    "losses": "loss",
    "beaten": "beat",
    "cuts": "cut",
    "worsened": "worse",
    "better": "improve",
    "sank": "plunge",
    "sunk": "plunge",
    "soared": "surge",
    "defaulted": "default",
}
