"""T1 step 5 on the API tests' seeded store: the written analysis (template and an
OpenAI-compatible endpoint on loopback, with its fallbacks), the notifications it raises,
and their signed webhook delivery to a receiver on loopback, with retries."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from analysis.notify import SIGNATURE_HEADER, TIMESTAMP_HEADER
from analysis.writers import TEMPLATE_ID
from market.settings import Settings
from pipeline.airflow_tasks import alert_task_failure, run_notebook_task
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from store import tables
from store.history import current_rows
from tests.api import world
from tests.conftest import ON_SQLITE_ONLY

SECRET = "whsec-test-0123456789"
DAY = world.DAY


class Receiver:
    """A webhook receiver that answers with the statuses it is given, then 200."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.received: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def hook(request: Request) -> Response:
            body = await request.body()
            stamp = request.headers[TIMESTAMP_HEADER]
            expected = "sha256=" + hmac.new(SECRET.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            self.received.append(
                {"valid": hmac.compare_digest(expected, request.headers[SIGNATURE_HEADER]), "body": json.loads(body)}
            )
            return Response(status_code=self.statuses.pop(0) if self.statuses else 200)

        return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


class ChatServer:
    """An OpenAI-compatible /v1/chat/completions on loopback."""

    def __init__(self, mode: str) -> None:
        self.mode, self.requests = mode, []

    def app(self) -> Starlette:
        async def completions(request: Request) -> Response:
            body = await request.json()
            self.requests.append({"body": body, "auth": request.headers.get("authorization")})
            if self.mode == "slow":
                await asyncio.sleep(3)
            if self.mode == "error":
                return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
            facts = json.loads(body["messages"][1]["content"])
            return JSONResponse(
                {
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": f"Breadth on {facts['trading_date']}: {facts['breadth']['advancers']} up.",
                            },
                        }
                    ]
                }
            )

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture
def seeded(unmade_settings: Settings) -> Settings:
    return world.build(unmade_settings).settings


def stored(settings: Settings, table) -> list[dict]:
    from store.engine import service_engine

    with service_engine(settings).connect() as conn:
        return current_rows(conn, table)


def test_template_analysis_is_stored_once_and_a_rerun_writes_nothing(seeded: Settings) -> None:
    first = run_stage("t1_analysis", DAY, settings=seeded)
    assert first.summary["writer"] == TEMPLATE_ID and first.summary["reused_stored_analysis"] is False
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["writer"] == TEMPLATE_ID and analysis["fallback_reason"] is None
    breadth = analysis["facts"]["breadth"]
    assert analysis["body"].startswith(f"Market on {DAY.isoformat()}: ")
    assert f"{breadth['advancers']} up, {breadth['decliners']} down" in analysis["body"]
    # the expected excess the Action reads, named as an excess over the universe (LIQ's world row has none)
    assert "LIQ (Score 72.0, LONG, TOP, expected excess over the universe n/a)" in analysis["body"]
    assert "MID (Score 55.0, HOLD, MIDDLE, expected excess over the universe +0.20%)" in analysis["body"]
    assert "SLOW (Score 30.0)" in analysis["body"]  # the AVOID
    assert '"LIQ Holdings profit up 12%"' not in analysis["body"]  # published the day before: not today's news
    assert "News: no item naming a listed instrument was published since the previous close." in analysis["body"]
    kinds = {n["kind"] for n in stored(seeded, tables.notifications)}
    assert kinds == {"ANALYSIS"}, "the world's predictions come from no registered training: nothing retrained"
    again = run_stage("t1_analysis", DAY, settings=seeded)
    assert again.summary["reused_stored_analysis"] is True and again.summary["new_notifications"] == 0
    assert len(stored(seeded, tables.analyses)) == 1 and len(stored(seeded, tables.notifications)) == 1


def test_a_rerun_of_a_day_after_later_days_quotes_the_live_record_of_its_time(seeded: Settings) -> None:
    """The day's analysis quotes the live record as it stood at its close: metrics a later
    day's t1_predict appended do not change it, so a re-run writes nothing new."""
    from store.engine import service_engine
    from tests.api.test_reports import append_metrics

    with service_engine(seeded).begin() as conn:
        append_metrics(conn, "live", f"live:{DAY.isoformat()}", [("binary_accuracy", 0.55, 0.5, 40)])
    first = run_stage("t1_analysis", DAY, settings=seeded)
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["facts"]["model"]["live"]["binary_accuracy"]["value"] == 0.55
    with service_engine(seeded).begin() as conn:  # a later day's live record
        append_metrics(conn, "live", f"live:{world.MONDAY.isoformat()}", [("binary_accuracy", 0.61, 0.5, 90)])
    again = run_stage("t1_analysis", DAY, settings=seeded)
    assert first.summary["reused_stored_analysis"] is False and again.summary["reused_stored_analysis"] is True
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["facts"]["model"]["live"]["binary_accuracy"]["value"] == 0.55


@ON_SQLITE_ONLY
def test_a_language_model_writes_it_and_failures_fall_back_to_the_template(seeded: Settings) -> None:
    server = ChatServer("ok")
    with serve_in_thread(server.app()) as base:
        llm = seeded.model_copy(
            update={
                "analysis_writer": "openai",
                "llm_base_url": f"{base}/v1",
                "llm_model": "tiny",
                "llm_api_key": SecretStr("sk-local"),
            }
        )
        result = run_stage("t1_analysis", DAY, settings=llm)
    assert result.summary["writer"] == "openai-compatible:tiny" and result.summary["fallback_reason"] is None
    (request,) = server.requests
    assert request["auth"] == "Bearer sk-local" and request["body"]["temperature"] == 0
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["body"] == f"Breadth on {DAY.isoformat()}: {analysis['facts']['breadth']['advancers']} up."
    with serve_in_thread(server.app()) as base:  # a re-run reuses it: the model is not asked again
        run_stage("t1_analysis", DAY, settings=llm.model_copy(update={"llm_base_url": f"{base}/v1"}))
    assert len(server.requests) == 1


@pytest.mark.parametrize("mode, reason", [("slow", "ReadTimeout"), ("error", "HTTPStatusError")])
@ON_SQLITE_ONLY
def test_a_failing_language_model_falls_back_and_says_why(seeded: Settings, mode: str, reason: str) -> None:
    server = ChatServer(mode)
    with serve_in_thread(server.app()) as base:
        llm = seeded.model_copy(
            update={"analysis_writer": "openai", "llm_base_url": f"{base}/v1", "llm_timeout_seconds": 0.5}
        )
        result = run_stage("t1_analysis", DAY, settings=llm)
    assert result.summary["writer"] == TEMPLATE_ID and result.summary["fallback_reason"].startswith(reason)
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["fallback_reason"].startswith(reason) and analysis["body"].startswith("Market on ")


@ON_SQLITE_ONLY
def test_a_language_model_at_an_address_holding_credentials_fails_without_showing_them(seeded: Settings) -> None:
    """The fallback reason (stored, served by the API, logged) quoted httpx's message, which
    names the URL whole: a password or key in `llm_base_url` with it."""
    server = ChatServer("error")
    with serve_in_thread(server.app()) as base:
        address = base.replace("://", "://desk:llm-pw@") + "/v1"
        llm = seeded.model_copy(update={"analysis_writer": "openai", "llm_base_url": address})
        result = run_stage("t1_analysis", DAY, settings=llm)
    (analysis,) = stored(seeded, tables.analyses)
    assert "://***@" in analysis["fallback_reason"] and "llm-pw" not in analysis["fallback_reason"]
    assert result.summary["fallback_reason"] == analysis["fallback_reason"]


def test_notifications_are_signed_retried_and_never_sent_twice(seeded: Settings) -> None:
    receiver = Receiver([503, 503])
    with serve_in_thread(receiver.app()) as base:
        hooked = seeded.model_copy(
            update={
                "webhook_url": f"{base}/hook?token=abc",
                "webhook_secret": SecretStr(SECRET),
                "webhook_backoff_seconds": 0.01,
                "webhook_retries": 3,
            }
        )
        result = run_stage("t1_analysis", DAY, settings=hooked)
        assert result.summary["delivered"] == 1 and result.summary["failed"] == 0
        run_stage("t1_analysis", DAY, settings=hooked)
    assert len(receiver.received) == 3 and all(r["valid"] for r in receiver.received)
    body = receiver.received[-1]["body"]
    assert body["notification_id"] == f"{DAY.isoformat()}:analysis" and body["kind"] == "ANALYSIS"
    assert body["payload"]["body"].startswith("Market on ")
    attempts = sorted(stored(seeded, tables.notification_attempts), key=lambda a: a["attempt"])
    assert [(a["attempt"], a["status"], a["response_code"]) for a in attempts] == [
        (1, "FAILED", 503),
        (2, "FAILED", 503),
        (3, "DELIVERED", 200),
    ]
    assert {a["channel"] for a in attempts} == {f"webhook:{base}/hook"}, "no query (tokens) in the store"


def test_a_client_error_is_not_retried_and_the_next_pass_delivers(seeded: Settings) -> None:
    receiver = Receiver([400])
    with serve_in_thread(receiver.app()) as base:
        hooked = seeded.model_copy(
            update={"webhook_url": f"{base}/hook", "webhook_secret": SecretStr(SECRET), "webhook_backoff_seconds": 0.01}
        )
        first = run_stage("t1_analysis", DAY, settings=hooked)
        assert first.summary["failed"] == 1 and len(receiver.received) == 1
        second = run_stage("t1_analysis", DAY, settings=hooked)
        assert second.summary["delivered"] == 1 and len(receiver.received) == 2


def test_the_next_days_pass_delivers_an_earlier_days_undelivered_notification(seeded: Settings) -> None:
    """A webhook outage during Thursday's T1 left Thursday's notification undelivered; Friday's
    T1 sent only Friday's, although the docs promise the next pass delivers it. Every pass
    now sends every undelivered notification, and `waiting` counts the backlog."""
    thursday = world.CALENDAR.previous_trading_day(DAY)
    receiver = Receiver([400])
    with serve_in_thread(receiver.app()) as base:
        hooked = seeded.model_copy(
            update={"webhook_url": f"{base}/hook", "webhook_secret": SecretStr(SECRET), "webhook_backoff_seconds": 0.01}
        )
        outage = run_stage("t1_analysis", thursday, settings=hooked)
        assert outage.summary["failed"] == 1 and outage.summary["waiting"] == 1
        friday = run_stage("t1_analysis", DAY, settings=hooked)
    assert friday.summary["delivered"] == 2 and friday.summary["waiting"] == 0
    sent = [r["body"]["notification_id"] for r in receiver.received[1:]]
    assert sent == [f"{thursday.isoformat()}:analysis", f"{DAY.isoformat()}:analysis"]
    unhooked = run_stage("t1_analysis", DAY, settings=seeded)  # no webhook: the whole backlog waits
    assert unhooked.summary["waiting"] == 2


def test_notify_deliver_exits_2_while_notifications_wait(seeded: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a webhook the operator's `notify deliver` sends nothing: it says how many wait
    and exits 2 (it exited 0, so cron read a store-only deployment as delivered); one that
    sends every notification exits 0."""
    from typer.testing import CliRunner

    from cli.main import app
    from market.settings import get_settings

    stored_only = run_stage("t1_analysis", DAY, settings=seeded).summary
    assert stored_only["webhook"] == "not configured" and stored_only["waiting"] == stored_only["new_notifications"] > 0
    unsent = CliRunner().invoke(app, ["notify", "deliver"])
    assert unsent.exit_code == 2
    assert json.loads(unsent.stdout)["waiting"] == stored_only["waiting"]
    assert unsent.stderr.strip() == (
        f"error: {stored_only['waiting']} notification(s) not delivered: no webhook is configured "
        "(MARKETINTEL_WEBHOOK_URL)"
    )
    receiver = Receiver()
    with serve_in_thread(receiver.app()) as base:
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_URL", f"{base}/hook")
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_SECRET", SECRET)
        get_settings.cache_clear()
        sent = CliRunner().invoke(app, ["notify", "deliver"])
    get_settings.cache_clear()
    assert sent.exit_code == 0, sent.output
    assert json.loads(sent.stdout) | {"webhook": "-"} == {
        "webhook": "-",
        "delivered": stored_only["waiting"],
        "failed": 0,
        "waiting": 0,
    }
    assert len(receiver.received) == stored_only["waiting"]


@ON_SQLITE_ONLY
@pytest.mark.parametrize("stage", ["t1_monitor", "t1_analysis"])
def test_a_webhook_without_a_secret_is_refused_before_the_stage_writes(seeded: Settings, stage: str) -> None:
    """A webhook URL without its secret failed the stage after its rows were committed (the
    table said 0 rows written) and stopped the day before its trade; the stage is refused
    before it records or writes anything now, in one line. A preview sends nothing, so it
    still runs."""
    from market.errors import ConfigurationError
    from store.engine import service_engine

    def counts() -> dict[str, int]:
        with service_engine(seeded).connect() as conn:
            written = (tables.stage_runs, tables.monitor_checks, tables.analyses)
            return {t.name: len(current_rows(conn, t)) for t in written}

    wrong = seeded.model_copy(update={"webhook_url": "http://127.0.0.1:9/hook"})
    before = counts()
    with pytest.raises(ConfigurationError, match="MARKETINTEL_WEBHOOK_URL is set without MARKETINTEL_WEBHOOK_SECRET"):
        run_stage(stage, DAY, settings=wrong)
    assert counts() == before
    assert run_stage(stage, DAY, settings=wrong, write=False).status == "SUCCEEDED"


def test_run_day_refuses_a_webhook_without_a_secret_before_its_first_stage(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run-day stopped at t1_monitor, T0 to t1_predict written and no trade; it refuses up
    front in one line now, with no notebook and no row."""
    from typer.testing import CliRunner

    from cli.main import app
    from market.settings import get_settings
    from store.engine import service_engine

    monkeypatch.setenv("MARKETINTEL_WEBHOOK_URL", "http://127.0.0.1:9/hook")
    get_settings.cache_clear()
    refused = CliRunner().invoke(app, ["run-day", "--date", "2026-11-20"])
    get_settings.cache_clear()
    assert refused.exit_code == 1, refused.output
    assert refused.stderr == (
        "error: MARKETINTEL_WEBHOOK_URL is set without MARKETINTEL_WEBHOOK_SECRET; notifications are signed, "
        "so set a secret the receiver shares\n"
    )
    assert not settings.runs_dir.exists() or not any(settings.runs_dir.iterdir())
    with service_engine(settings).connect() as conn:
        assert current_rows(conn, tables.stage_runs) == []


def test_new_trapped_positions_and_a_retrained_model_raise_alerts(seeded: Settings) -> None:
    """The AI portfolio bought on DAY; on the next day DRY-like silence (no volume) traps
    whatever it holds that did not trade."""
    from store.engine import service_engine
    from store.history import append_history

    engine = service_engine(seeded)
    monday = world.MONDAY
    with engine.begin() as conn:
        held = {t["symbol"] for t in current_rows(conn, tables.trades) if t["portfolio_id"] == "AI"}
        assert held, "the world's AI day bought something"
        closes = {
            r["symbol"]: r
            for r in current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == DAY])
        }
        append_history(
            conn,
            tables.eod_prices,
            [
                {
                    **{k: v for k, v in closes[s].items() if k not in ("id", "recorded_at")},
                    "trading_date": monday,
                    "volume": 0 if s in held else closes[s]["volume"],
                }
                for s in closes
            ],
        )
    world.seed_predictions(
        engine, monday, {"LIQ": {"score": 60.0, "action": "LONG", "tercile": "TOP"}}, model_id="fresh"
    )
    with engine.begin() as conn:
        append_history(
            conn,
            tables.model_runs,
            [
                {
                    "model_id": "fresh",
                    "kind": "risk",
                    "train_end": DAY,
                    "horizon_days": 1,
                    "warm_start": True,
                    "training_rows": 900,
                }
            ],
        )
    result = run_stage("t1_analysis", monday, settings=seeded)
    notes = {n["notification_id"]: n for n in stored(seeded, tables.notifications) if n["trading_date"] == monday}
    assert {f"{monday.isoformat()}:trapped:{s}" for s in held} | {
        f"{monday.isoformat()}:analysis",
        f"{monday.isoformat()}:model-retrained:fresh",
    } == set(notes)
    assert all(notes[f"{monday.isoformat()}:trapped:{s}"]["severity"] == "WARNING" for s in held)
    assert (
        f"Newly TRAPPED at this close (no volume, no exit possible): {', '.join(sorted(held))}."
        in result.tables["analysis"][-1]["paragraph"]
    )


def test_a_failed_preflight_alerts_through_the_failure_callback(
    seeded: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing try alerts nobody (Airflow retries it); the failure callback, which Airflow
    calls once the last retry has failed, stores and sends PREFLIGHT_FAILED with the reason.
    Its id names the DAG run and try, so the pre-flight failing again for the same day (a
    cleared task, a manual run) alerts again: the second failure was stored as the first."""
    from market.errors import StageFailedError
    from market.settings import get_settings

    context = {
        "params": {"run_date": "2026-11-19"},
        "dag_run": SimpleNamespace(run_id="scheduled__2026-11-19"),
        "ti": SimpleNamespace(task_id="t1_preflight", dag_id="marketintel_t1", try_number=7),
    }
    manual = {**context, "dag_run": SimpleNamespace(run_id="manual__2026-11-20T13:00")}
    receiver = Receiver()
    with serve_in_thread(receiver.app()) as base:
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_URL", f"{base}/hook")
        monkeypatch.setenv("MARKETINTEL_WEBHOOK_SECRET", SECRET)
        get_settings.cache_clear()
        with pytest.raises(StageFailedError, match="no T0 delivery for 2026-11-19") as failure:
            run_notebook_task("t1_preflight", context)
        assert [n for n in stored(seeded, tables.notifications) if n["kind"] == "PREFLIGHT_FAILED"] == []
        alert_task_failure({**context, "exception": failure.value})
        alert_task_failure({**manual, "exception": failure.value})  # the same day fails again
    first, second = sorted(
        (n for n in stored(seeded, tables.notifications) if n["kind"] == "PREFLIGHT_FAILED"), key=lambda n: n["id"]
    )
    assert first["notification_id"] == "2026-11-19:preflight-failed:scheduled__2026-11-19:7"
    assert second["notification_id"] == "2026-11-19:preflight-failed:manual__2026-11-20T13:00:7"
    assert first["severity"] == "CRITICAL" and "no T0 delivery" in first["payload"]["reason"]
    assert [r["body"]["kind"] for r in receiver.received] == ["PREFLIGHT_FAILED"] * 2 and receiver.received[0]["valid"]


@ON_SQLITE_ONLY
def test_a_rewritten_analysis_is_sent_once_and_shown_delivered_only_once_sent(seeded: Settings) -> None:
    """After a price correction the day's analysis was rewritten under the same id: the
    webhook never got it, yet /api/analysis showed the new body as delivered."""
    from store.engine import service_engine
    from store.history import append_history
    from views.analysis import stored_analysis
    from views.bars import refresh_bars

    receiver = Receiver()
    with serve_in_thread(receiver.app()) as base:
        hooked = seeded.model_copy(update={"webhook_url": f"{base}/hook", "webhook_secret": SecretStr(SECRET)})
        run_stage("t1_analysis", DAY, settings=hooked)
        with service_engine(seeded).begin() as conn:  # the exchange corrects MID's close for the day
            prices = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == DAY])
            (mid,) = [r for r in prices if r["symbol"] == "MID"]
            fixed = {k: v for k, v in mid.items() if k not in ("id", "recorded_at", "valid_from", "valid_to")}
            append_history(conn, tables.eod_prices, [{**fixed, "close": round(mid["close"] * 1.2, 2)}])
            refresh_bars(conn)
        receiver.statuses = [400]  # the rewritten one is refused once: shown undelivered, then sent
        failed = run_stage("t1_analysis", DAY, settings=hooked)
        with service_engine(seeded).connect() as conn:
            waiting = stored_analysis(conn, DAY)
        run_stage("t1_analysis", DAY, settings=hooked)  # the retry delivers it
        run_stage("t1_analysis", DAY, settings=hooked)  # and never again
    with service_engine(seeded).connect() as conn:
        shown = stored_analysis(conn, DAY)
    assert failed.summary["reused_stored_analysis"] is False and failed.summary["new_notifications"] == 1
    first, refused, delivered = [r["body"] for r in receiver.received if r["body"]["kind"] == "ANALYSIS"]
    assert refused == delivered and first["payload"]["body"] != delivered["payload"]["body"]
    assert delivered["payload"]["body"] == shown["body"] == waiting["body"]
    assert delivered["notification_id"].startswith(f"{DAY.isoformat()}:analysis:")
    analysis_notes = [(x["notification_id"], x["delivered"]) for x in shown["notifications"] if x["kind"] == "ANALYSIS"]
    assert analysis_notes == [(delivered["notification_id"], True)]
    assert [x["delivered"] for x in waiting["notifications"] if x["kind"] == "ANALYSIS"] == [False]


def test_the_days_news_is_what_came_after_the_last_close_and_by_this_one(seeded: Settings) -> None:
    """An item published after the day's close (after T1 ran) was the day's news in a
    re-run's facts, which then wrote and sent a second analysis; one published after the
    previous session's close, which the day's composite counted, was not."""
    from datetime import UTC, datetime, time

    from market.clock import EXCHANGE_TZ
    from store.engine import service_engine
    from store.history import append_history

    def published(day, hour: int) -> datetime:
        return datetime.combine(day, time(hour), tzinfo=EXCHANGE_TZ).astimezone(UTC)

    items = {
        "LIQ wins a licence after Thursday's close": published(world.CALENDAR.previous_trading_day(DAY), 18),
        "LIQ names a chairman before the close": published(DAY, 15),
        "LIQ warns after the close": published(DAY, 17),
    }
    with service_engine(seeded).begin() as conn:
        for title, when in items.items():
            append_history(
                conn,
                tables.news_items,
                [{"content_hash": title, "title": title, "feed_url": "f", "published_at": when}],
            )
            doc = conn.execute(tables.news_items.select().where(tables.news_items.c.title == title)).mappings().one()
            append_history(
                conn,
                tables.document_mentions,
                [{"doc_kind": "NEWS", "doc_id": doc["id"], "symbol": "LIQ", "matched_by": "symbol"}],
            )
    run_stage("t1_analysis", DAY, settings=seeded)
    (analysis,) = stored(seeded, tables.analyses)
    assert sorted(n["title"] for n in analysis["facts"]["news"]) == [
        "LIQ names a chairman before the close",
        "LIQ wins a licence after Thursday's close",
    ]


def test_a_model_with_no_recorded_layer_1_reads_in_words(seeded: Settings) -> None:
    """The world's model, like the walk-forward models the bootstrap records for the
    validation record, has no layer-1 backend recorded: the analysis (stored, sent, served
    and shown in the notebook) says so, not "layer 1 None"."""
    run_stage("t1_analysis", DAY, settings=seeded)
    (analysis,) = stored(seeded, tables.analyses)
    assert analysis["facts"]["model"]["layer1_backend"] is None
    assert "None" not in analysis["body"]
    assert analysis["body"].endswith("; layer 1 not recorded for this model.")
