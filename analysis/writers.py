"""Who writes the day's analysis from its facts (analysis/day_facts.py).

- `TemplateWriter` (default, `template-v1`): deterministic sentences from the facts; the
  same facts always give the same text.
- `ChatWriter`: any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Azure-style
  proxies, vLLM, Ollama, llama.cpp server) at `llm_base_url` with `llm_model`, temperature 0,
  the facts as JSON in the user message and an instruction to use no other numbers.

`write_analysis` never fails the stage because of the language model: a timeout, an HTTP
error or an empty answer falls back to the template, and the stored analysis names the
writer that produced it and why the fallback was taken.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Protocol

import httpx

from analysis.day_facts import DayFacts, Signal
from market.settings import Settings
from market.text import masked_urls
from views.breadth import Breadth

log = logging.getLogger(__name__)
TEMPLATE_ID = "template-v1"
SYSTEM_PROMPT = (
    "You are a market analyst writing the end-of-day note of a small stock exchange for portfolio managers. "
    "Write 4 short paragraphs: market breadth, the strongest model signals, notable news, the AI portfolio and "
    "model. Use only the facts in the JSON you are given; do not invent numbers, names or events; say when a "
    "fact is missing. Plain text, no headings, at most 220 words. This is not investment advice."
)


class Writer(Protocol):
    writer_id: str

    def write(self, facts: DayFacts) -> str: ...


@dataclass(frozen=True)
class Written:
    body: str
    writer: str
    fallback_reason: str | None


def breadth_lead(breadth: Breadth) -> str:
    """Who led the day's breadth (views/breadth.py): advancers, decliners, or neither; the
    template's market sentence and the Quant Briefing's sentiment section both open with it."""
    if breadth["advancers"] > breadth["decliners"]:
        return "Advancers led"
    if breadth["decliners"] > breadth["advancers"]:
        return "Decliners led"
    return "Advancers and decliners were level"


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else fraction * 100


def _halted(signal: Signal) -> str:
    """ "halted since D; " for a signal under a HALT notice (it cannot be traded), else nothing."""
    since = signal.get("halted_since")
    return f"halted since {since}; " if since else ""


def _pct(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:+.{digits}f}%"


class TemplateWriter:
    writer_id = TEMPLATE_ID

    def write(self, facts: DayFacts) -> str:
        return "\n\n".join([self._market(facts), self._signals(facts), self._news(facts), self._portfolio(facts)])

    @staticmethod
    def _market(facts: DayFacts) -> str:
        b = facts["breadth"]
        return (
            f"Market on {facts['trading_date']}: {breadth_lead(b)} with {b['advancers']} up, {b['decliners']} down and "
            f"{b['unchanged']} unchanged of {b['traded']} stocks that traded; {b['not_traded']} did not trade. "
            f"The service's capitalisation-weighted index moved {_pct(b['index_change_pct'])}."
        )

    @staticmethod
    def _signals(facts: DayFacts) -> str:
        if not facts["top_signals"]:
            return "Signals: the day is not scored yet."
        top = "; ".join(
            f"{s['symbol']} ({_halted(s)}Score {s['score']:.1f}, {s['action']}, {s['tercile']}, expected excess "
            f"over the universe {_pct(_percent(s.get('held_edge')))})"
            for s in facts["top_signals"]
        )
        avoid = ", ".join(f"{s['symbol']} ({_halted(s)}Score {s['score']:.1f})" for s in facts["avoid"]) or "none"
        return f"Top signals of {facts['scored']} scored instruments: {top}. AVOID: {avoid}."

    @staticmethod
    def _news(facts: DayFacts) -> str:
        if not facts["news"]:
            return "News: no item naming a listed instrument was published since the previous close."
        items = "; ".join(
            f'"{n["title"]}" ({", ".join(n["symbols"])}, sentiment '
            f"{'n/a' if n['sentiment'] is None else format(n['sentiment'], '+.2f')})"
            for n in facts["news"]
        )
        return f"Notable news: {items}."

    @staticmethod
    def _portfolio(facts: DayFacts) -> str:
        ai, model = facts["ai_portfolio"], facts["model"]
        last = ai["last_executed"]
        if last is None:
            moves = "The AI portfolio has not executed a day yet."
        else:
            orders = ", ".join(f"{o['side']} {o['quantity']:,} {o['symbol']}" for o in last["orders"]) or "no orders"
            moves = (
                f"The AI portfolio holds {ai['positions']} positions going into today's execution; on "
                f"{last['trading_date']} it placed {orders} (equity {last['equity']:,.2f})."
            )
        if ai["newly_trapped"]:
            moves += f" Newly TRAPPED at this close (no volume, no exit possible): {', '.join(ai['newly_trapped'])}."
        if model["model_id"] is None:
            return f"{moves} No model has scored the day."
        trained = (
            " (retrained for this day" + (", warm start)" if model.get("warm_start") else ", full refit)")
            if model["retrained"]
            else ""
        )
        binary = model["live"].get("binary_accuracy")
        validation = model.get("validation", {})
        earlier = validation.get("binary_accuracy")
        record = (
            f"live binary accuracy {binary['value'] * 100:.1f}% against a base rate of "
            f"{binary['base_rate'] * 100:.1f}% on {binary['sample_size']} predictions"
            if binary
            else "no live out-of-sample record yet"
        )
        if earlier and earlier["value"] is not None:
            record += (
                f"; validation record (walk-forward, {validation['period_start']} to {validation['period_end']}) "
                f"{earlier['value'] * 100:.1f}% against {earlier['base_rate'] * 100:.1f}% on "
                f"{earlier['sample_size']} predictions"
            )
        layer1 = model["layer1_backend"] or "not recorded for this model"  # the bootstrap's walk-forward models
        return f"{moves} Model {model['model_id']}{trained}: {record}; layer 1 {layer1}."


class ChatWriter:
    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None) -> None:
        if not settings.llm_base_url:
            raise ValueError("MARKETINTEL_LLM_BASE_URL is not set")
        self.url = settings.llm_base_url.rstrip("/") + "/chat/completions"
        self.model = settings.llm_model
        self.key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        self.timeout = settings.llm_timeout_seconds
        self.transport = transport
        self.writer_id = f"openai-compatible:{self.model}"

    def write(self, facts: DayFacts) -> str:
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": json.dumps(facts, sort_keys=True)},
            ],
        }
        with httpx.Client(timeout=self.timeout, transport=self.transport) as client:
            response = client.post(self.url, json=body, headers=headers)
        response.raise_for_status()
        text = response.json()["choices"][0]["message"]["content"]
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the model answered with no text")
        return text.strip()


def write_analysis(facts: DayFacts, settings: Settings) -> Written:
    template = TemplateWriter()
    if settings.analysis_writer == "template":
        return Written(template.write(facts), template.writer_id, None)
    try:
        writer = ChatWriter(settings)
        return Written(writer.write(facts), writer.writer_id, None)
    except Exception as exc:  # noqa: BLE001 - any failure of the language model falls back, and says why
        reason = masked_urls(f"{type(exc).__name__}: {exc}")[:500]  # httpx names the URL
        log.warning("language-model analysis failed, using the template: %s", reason)
        return Written(template.write(facts), template.writer_id, reason)
