"""`make demo` as a newcomer runs it: the whole day through the stage notebooks on the
embedded default, then the API serving a living world (marketintel demo).

The demo runs once for this module (`served_demo`, about four minutes on 2 cores) and
every test here reads the world it serves: the demo's own acceptance, the validation
record count it prints against the API's, and every documented example of
docs/examples/api.toml (tests/docs/test_examples.py), which run last because they write
(a deposit, a new key) as a reader pasting them would."""

import os
import re
import signal
import subprocess
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from market.settings import Settings
from models.decisions import BOOK_NAMES
from tests.conftest import as_a_terminal_starts_it
from tests.docs.test_examples import EXAMPLES, DemoServer, run_example
from tests.pipeline.test_cli import MARKETINTEL


def _first_visit_shows_no_error(browser, base: str) -> None:
    """Issue 42: a newcomer's first visits on the fresh demo. `/` was a JSON 404 and GraphiQL
    showed a raw 401 document; now `/` lands on Swagger UI's operation list, and GraphiQL
    loads and, run without a key, says how to set one. The browser logs no error."""
    from selenium.webdriver.common.by import By

    from tests.docs.test_browser import _wait

    browser.get(f"{base}/")
    _wait(
        browser,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")) >= 20,
        "Swagger UI rendered no operation list",
    )
    assert browser.current_url == f"{base}/docs"
    browser.get(f"{base}/graphql")
    run = _wait(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".graphiql-execute-button"), "GraphiQL did not load"
    )
    run[0].click()
    shown = _wait(
        browser,
        lambda d: next(
            (
                e.text
                for e in d.find_elements(By.CSS_SELECTOR, ".result-window")
                if "errors" in e.text or "data" in e.text
            ),
            None,
        ),
        "GraphiQL showed nothing",
    )
    assert "No API key yet" in shown and "Unauthorized" not in shown and "problems/" not in shown, shown
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe


class _Service:
    """What tests/api/test_contract.py's walkers call: the served demo over HTTP."""

    def __init__(self, base: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=base, timeout=60)

    def call(self, method: str, url: str, key: str, **kwargs):
        return self.http.request(method, url, headers={"X-API-Key": key}, **kwargs)


def _every_page(url: str, key: str, limit: int) -> list[dict]:
    """Every item of a paged REST list, walked by `next_cursor`."""
    items, cursor = [], None
    while True:
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        page = httpx.get(url, params=params, headers={"X-API-Key": key}, timeout=30).json()
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def _contract_violations(base: str, keys: tuple[str, str], symbol: str) -> list[str]:
    """Issue 42's contract walk (tests/api/contract.py) over every GET and GraphQL root field of the demo."""
    from tests.api.contract import violations
    from tests.api.test_contract import graphql_answers, rest_answers

    service, found = _Service(base), []
    for key in keys:
        for where, body in [*rest_answers(service, key, symbol), *graphql_answers(service, key, symbol)]:
            found += violations(body, where)
    service.http.close()
    return found


@dataclass
class ServedDemo:
    """What `marketintel demo --port 0` printed and serves, on its own store under `root`."""

    lines: list[str]
    base: str
    key: str  # the demo client's PRO key, as printed
    admin_file: Path
    settings: Settings
    env: dict[str, str]
    root: Path

    @property
    def stdout(self) -> str:
        return "\n".join(self.lines)

    @property
    def admin_key(self) -> str:
        return self.admin_file.read_text().strip()


@pytest.fixture(scope="module")
def served_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedDemo]:
    """`marketintel demo --port 0` on a private SQLite store, as `make demo` runs it (no
    admin key configured: the demo generates one), read up to its last curl line (the API
    is up); stopped with Ctrl-C at the end of the module."""
    root = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETINTEL_")}
    env.update(
        {
            "MARKETINTEL_NO_DOTENV": "1",
            "MARKETINTEL_DATABASE_URL": f"sqlite:///{root / 'store.db'}",
            **{
                f"MARKETINTEL_{name.upper()}_DIR": str(root / name)
                for name in ("data", "models", "reports", "secrets", "runs")
            },
        }
    )
    settings = Settings(
        database_url=env["MARKETINTEL_DATABASE_URL"],
        **{f"{name}_dir": root / name for name in ("data", "models", "reports", "secrets", "runs")},
    )
    errors = open(root / "demo-stderr.log", "w+")  # a file, not a pipe nobody drains
    process = subprocess.Popen(
        [MARKETINTEL, "demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=env,
        cwd=root,
        preexec_fn=as_a_terminal_starts_it,  # the Ctrl-C at the end reaches it however pytest was started
    )
    lines: list[str] = []
    try:
        for line in process.stdout:  # type: ignore[union-attr]
            lines.append(line.rstrip())
            if "/api/market/history/" in line:  # the last curl line: the API is up
                break
        errors.seek(0)
        assert process.poll() is None, errors.read()[-3000:]
        stdout = "\n".join(lines)
        key = re.search(r"client key for 'Demo Client' \(PRO, shown once\): (svc-sk-[0-9a-f]+)", stdout).group(1)
        base = re.search(r"API serving on (http://127\.0\.0\.1:\d+)", stdout).group(1)
        admin_file = Path(re.search(r"admin key: (\S+)", stdout).group(1))
        yield ServedDemo(lines, base, key, admin_file, settings, env, root)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=90)  # Ctrl-C: the API stops, then the interpreter exits
        except subprocess.TimeoutExpired:
            # Known open defect: in clean-clone CI runs the demo has not exited within 90 s of
            # Ctrl-C (its stderr shows ZeroMQ's "pfd.revents & POLLIN" assertion); locally it
            # exits at once. (A runner started in the background, SIGINT ignored, gave the same
            # wait: the child now starts with SIGINT at its default.) What these tests check
            # is what the served world shows.
            process.send_signal(signal.SIGUSR1)  # the demo's faulthandler: every thread's stack
            time.sleep(3)
            errors.seek(0)
            warnings.warn(
                "the demo did not exit within 90 s of Ctrl-C; killed. Its stderr ends:\n" + errors.read()[-6000:],
                stacklevel=1,
            )
        finally:
            process.kill()
            errors.close()


@pytest.mark.slow
def test_demo_runs_the_day_through_the_notebooks_then_serves_a_living_world(served_demo: ServedDemo, browser) -> None:
    """`make demo`'s acceptance: a validation record beside its base rate (n >= 2,000),
    more than one Action among liquid names, every tercile populated, an AI portfolio whose
    60 replayed days and the demo day each have a record, its fills (if any) in the session
    after their decision with their cost parts, a track record beside both benchmarks,
    every Action saying why, suggestions for the
    printed client key whenever the day has a LONG to buy, and reports without a "Not
    available" box (but the audit trail's, when the AI portfolio never traded). The AI
    book is invested after its replay: at least five positions, and a track record that
    states its exposure and fills (issue 55)."""
    from tests.reports.pdf import read

    lines, stdout, settings = served_demo.lines, served_demo.stdout, served_demo.settings
    key, base, admin_file = served_demo.key, served_demo.base, served_demo.admin_file
    assert admin_file.is_file() and oct(admin_file.stat().st_mode & 0o777) == "0o600"
    assert f"docs: {base}/docs" in stdout and f"GraphQL: {base}/graphql" in stdout
    graph = httpx.post(
        f"{base}/graphql",
        headers={"X-API-Key": key},
        timeout=30,
        json={"query": "{ instruments(tercile: TOP) { nodes { symbol latestPrediction { score } } } }"},
    )
    assert graph.status_code == 200 and graph.json()["data"]["instruments"]["nodes"]
    curls = [line.strip() for line in lines if line.strip().startswith("curl ")]
    assert len(curls) == 3
    latest = httpx.get(f"{base}/api/market/latest", headers={"X-API-Key": key}, timeout=30)
    assert latest.status_code == 200 and len(latest.json()) >= 50  # the simulator lists 60, some not yet or no longer
    summary = httpx.get(f"{base}/api/ai-portfolio/summary", headers={"X-API-Key": key}, timeout=30)
    assert summary.status_code == 200 and summary.json()["started"] is True
    insights = httpx.get(f"{base}/api/macro_insights", headers={"X-API-Key": key}, timeout=30)
    assert insights.status_code == 200 and len(insights.json()["parameters"]) == 3
    admin_key = admin_file.read_text().strip()
    admin = httpx.get(f"{base}/api/keys", headers={"X-API-Key": admin_key}, timeout=30)
    assert [k["client_name"] for k in admin.json()["items"]] == ["Demo Client"]

    perf = httpx.get(f"{base}/api/ai/performance", headers={"X-API-Key": key}, timeout=30).json()
    binary = perf["validation"]["metrics"]["binary_accuracy"]
    assert binary["sample_size"] >= 2000 and binary["value"] > binary["base_rate"], binary
    assert perf["validation"]["label"].startswith("Validation record") and perf["live"]["label"].startswith("Live")
    screen = httpx.post(
        f"{base}/graphql",
        headers={"X-API-Key": key},
        timeout=30,
        json={
            "query": """{
        instruments(first: 100) { nodes { symbol latestPrediction { action tercile } } } }"""
        },
    ).json()
    predictions = [n["latestPrediction"] for n in screen["data"]["instruments"]["nodes"] if n["latestPrediction"]]
    liquid = [p for p in predictions if p["tercile"] != "ILLIQUID"]
    assert len({p["action"] for p in liquid}) >= 2, liquid
    assert {"TOP", "MIDDLE", "BOTTOM"} <= {p["tercile"] for p in liquid}
    quotes = latest.json()
    above = [q for q in quotes.values() if q["score"] is not None and q["score"] >= 55 and q["action"] != "LONG"]
    assert all(q["decision_reason"] for q in above), above[:3]
    days = _every_page(f"{base}/api/ai-portfolio/history", admin_key, limit=25)
    trades = [t for d in days for t in d["trades"]]
    assert len(days) >= 61  # 60 replayed days and the demo day: the equity curve's points
    decided = {d["trading_date"]: d for d in days}
    assert len(decided) == len(days) and list(decided) == sorted(decided)  # each day once, oldest first
    for t in trades:  # a fill is in the session after the day that decided it, with its costs
        assert t["rationale"]["decided_on"] < t["trading_date"] and t["rationale"]["reason"], t
        parts = {k: Decimal(v) for k, v in t["rationale"]["fill"]["costs"].items()}
        assert all(p == p.quantize(Decimal("0.01")) for p in parts.values()), parts  # money to the cent
        # each part is rounded to the cent by itself, so three of them miss the total by at most 1.5 cents
        assert abs(parts["total"] - parts["spread"] - parts["impact"] - parts["fees"]) <= Decimal("0.015"), parts
        assert any(o["symbol"] == t["symbol"] for o in decided[t["rationale"]["decided_on"]]["summary"]["pending"])
    record = httpx.get(f"{base}/api/ai-portfolio/track-record", headers={"X-API-Key": key}, timeout=30).json()
    assert record["days"] >= 61 and set(record["benchmarks"]) == {"equal_weight_liquid", "index"}
    positions = httpx.get(f"{base}/api/ai-portfolio/positions", headers={"X-API-Key": key}, timeout=30).json()
    assert len(positions) >= 5, positions  # a living book after the replay
    # slots and reserve apart: at most the mandate's names entered as slots, every one says which
    entries = Counter(p["entered_as"] for p in positions)
    assert set(entries) <= {"slot", "reserve"} and 0 < entries["slot"] <= BOOK_NAMES, entries
    assert record["average_exposure"] > 0.5 and record["fill_count"] >= 5 and not record["mostly_cash"], record
    assert record["trades"] == len(trades) and "AI portfolio track record over" in "\n".join(lines)
    pending = httpx.get(f"{base}/api/suggestions", headers={"X-API-Key": key}, timeout=30).json()["items"]
    assert all(p["state"] == "PENDING" for p in pending)
    if any(p["action"] == "LONG" and p["tercile"] == "TOP" for p in liquid):  # something to buy with the cash
        assert any(p["side"] == "BUY" for p in pending), pending
    assert _contract_violations(base, (key, admin_key), next(iter(quotes))) == []  # issue 42
    _first_visit_shows_no_error(browser, base)
    assert "backfilled 260 simulated trading days" in stdout
    assert re.search(r"validation record .* binary accuracy \d+\.\d% \(base rate \d+\.\d%, n=\d{4,}\)", stdout)
    outputs = [line.split("->")[1].strip() for line in lines if "->" in line and line.endswith(".ipynb")]
    assert [Path(o).name for o in outputs] == [
        "t0_scrape.ipynb",
        "t1_preflight.ipynb",
        "t1_ingest_text.ipynb",
        "t1_sentiment.ipynb",
        "t1_features.ipynb",
        "t1_predict.ipynb",
        "t1_monitor.ipynb",
        "t1_analysis.ipynb",
        "t1_trade.ipynb",
        "t1_reports.ipynb",
        "health.ipynb",
        "t3_macro.ipynb",
        "t2_suggestions.ipynb",
    ]
    assert "house portfolio synchronised from" in stdout and ": SYNCED, 4 changes" in stdout
    reports = [Path(line.split("->")[1].rsplit(" (", 1)[0].strip()) for line in lines if " report  ->" in line]
    assert [r.name for r in reports] == ["quant-briefing.pdf", "compliance-report.pdf"]
    assert all(r.parent == settings.reports_dir and r.read_bytes().startswith(b"%PDF-") for r in reports)
    for report in reports:
        text = read(report.read_bytes()).text
        shown = text.replace("Not available yet: the AI portfolio has not traded yet", "")
        assert "Not available" not in shown and "Validation record (walk-forward" in text, report.name
    index = settings.runs_dir / "index.md"
    assert f"index of every executed notebook: {index}" in stdout
    assert "| t1_analysis | SUCCEEDED |" in index.read_text()
    assert all(Path(o).is_file() for o in outputs)


def test_the_demo_prints_the_validation_record_count_the_api_serves(served_demo: ServedDemo) -> None:
    """The demo printed the stored count of the record's predictions, the API and the
    reports the count with an outcome (the record's last HORIZON + 1 days have none yet).
    The printed figure is the API's, from the same function (`views.performance`), and the
    difference is named."""
    from sqlalchemy import create_engine, func, select

    from models.decisions import HORIZON
    from store import tables

    printed = next(line for line in served_demo.lines if line.startswith("validation record"))
    record = httpx.get(
        f"{served_demo.base}/api/ai/performance", headers={"X-API-Key": served_demo.key}, timeout=30
    ).json()["validation"]
    assert record["predictions"] > 0 and record["reason"] is None
    count = int(re.search(r": ([\d,]+) out-of-sample predictions", printed).group(1).replace(",", ""))
    assert count == record["predictions"], printed
    binary = record["metrics"]["binary_accuracy"]
    assert f"n={binary['sample_size']})" in printed and f"{binary['value']:.1%}" in printed
    assert f"{record['period_start']} to {record['period_end']}" in printed and "GET /api/ai/performance" in printed
    unscored = int(re.search(r"; ([\d,]+) more are stored without an outcome", printed).group(1).replace(",", ""))
    engine = create_engine(served_demo.settings.database_url)
    with engine.connect() as conn:
        c = tables.validation_predictions.c
        stored = conn.execute(select(func.count()).select_from(tables.validation_predictions)).scalar()
        last_days = sorted(d for (d,) in conn.execute(select(c.trading_date).distinct()))[-(HORIZON + 1) :]
        without = conn.execute(select(func.count()).where(c.trading_date.in_(last_days))).scalar()
    engine.dispose()
    # the record's last HORIZON + 1 days: their label (the close HORIZON + 1 sessions on) is not known yet
    assert count + unscored == stored and unscored == without


def _documented(served_demo: ServedDemo) -> DemoServer:
    """The demo as tests/docs/test_examples.py's runner sees it: the printed client key, the
    generated admin key, the CLI examples on the demo's store and folder."""
    return DemoServer(
        served_demo.base, served_demo.env, {"client": served_demo.key, "admin": served_demo.admin_key}, served_demo.root
    )


def test_a_wrong_expectation_fails(served_demo: ServedDemo) -> None:
    """The examples' checks can fail: a field the answer does not have, a status it does not give."""
    from api.doc_examples import Example

    demo = _documented(served_demo)
    latest = next(e for e in EXAMPLES if e.id == "market-latest")
    with pytest.raises(AssertionError, match="NOSUCH"):
        run_example(demo, Example(**{**latest.__dict__, "expect": {"status": 200, "fields": ["NOSUCH/close"]}}))
    with pytest.raises(AssertionError, match="401"):
        run_example(demo, Example(**{**latest.__dict__, "key": "none"}))
    demo.http.close()


def test_every_documented_example_runs_against_the_demo(served_demo: ServedDemo) -> None:
    """Every example of docs/examples/api.toml, in the file's order, against the served demo:
    later examples see what earlier ones wrote (a deposit, a new key), as a reader pasting
    them one after another would. Last in this module, since it writes."""
    demo, failures = _documented(served_demo), []
    for example in EXAMPLES:
        try:
            run_example(demo, example)
        except AssertionError as error:
            failures.append(str(error))
    demo.http.close()
    assert not failures, "\n".join(failures)
