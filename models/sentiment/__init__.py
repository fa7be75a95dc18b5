"""Finance-aware sentiment: a lexicon scorer with negation and intensity, and the
per-instrument composite that feeds the risk model's sentiment features."""

from models.sentiment.scorer import SCORER_ID, SentimentScore, key_sentences, score_text

__all__ = ["SCORER_ID", "SentimentScore", "key_sentences", "score_text"]
