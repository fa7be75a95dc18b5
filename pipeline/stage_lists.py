"""The stages of each DAG, in order: the one list that `pipeline/day.py` (`marketintel
run-day`), the demo and the DAG files read. Parse-light on purpose: the DAG processor
imports it at every parse, so it holds names and numbers and imports nothing."""

from __future__ import annotations

T0_STAGES = ["t0_scrape"]
T1_PREFLIGHT = "t1_preflight"
T1_STAGES = [
    T1_PREFLIGHT,
    "t1_ingest_text",
    "t1_sentiment",
    "t1_features",
    "t1_predict",
    "t1_monitor",
    "t1_analysis",
    "t1_trade",
    "t1_reports",
]
T2_STAGES = ["t2_suggestions"]
T3_STAGES = ["t3_macro"]

# Each T1 task's execution timeout in Airflow, minutes (the pre-flight has its own retry window).
T1_TIMEOUT_MINUTES = {
    T1_PREFLIGHT: 5,
    "t1_ingest_text": 20,
    "t1_sentiment": 20,
    "t1_features": 20,
    "t1_predict": 45,
    "t1_monitor": 10,
    "t1_analysis": 10,
    "t1_trade": 15,
    "t1_reports": 10,
}
