"""The installed `marketintel` entry point, run as a user would run it."""

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from market.settings import Settings
from tests.conftest import ON_SQLITE_ONLY

MARKETINTEL = str(Path(sys.executable).parent / "marketintel")


def cli(*args: str) -> subprocess.CompletedProcess:
    """The command as a user runs it. The limit only stops a hung command: `run-day` builds
    the day's model and took up to 120 s beside another test worker on a slow machine."""
    return subprocess.run([MARKETINTEL, *args], capture_output=True, text=True, timeout=300)


def test_db_upgrade_is_idempotent_and_status_lists_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    first = cli("db", "upgrade")
    assert first.returncode == 0, first.stderr
    assert "applied 0001_core_schema" in first.stdout and "applied 0002_append_only" in first.stdout
    second = cli("db", "upgrade")
    assert second.stdout.strip() == "schema is up to date; nothing to apply"
    status = cli("db", "status")
    assert re.search(r"^0001\s+core_schema\s+applied\s+\d{4}-", status.stdout, re.M)
    assert re.search(r"^0002\s+append_only\s+applied", status.stdout, re.M)


def test_db_status_hides_the_database_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", "postgresql://svc:s3cret-pw@127.0.0.1:1/none")
    result = cli("db", "status")
    assert "s3cret-pw" not in result.stdout + result.stderr


@ON_SQLITE_ONLY
def test_stage_run_prints_the_summary(settings: Settings) -> None:
    result = cli("stage", "run", "health", "--date", "2026-11-20")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("stage health for 2026-11-20: SUCCEEDED")
    summary = json.loads(result.stdout.split("\n", 1)[1])
    assert summary["healthy"] is True


@ON_SQLITE_ONLY
def test_stage_run_through_the_notebook_prints_the_output_path(settings: Settings) -> None:
    result = cli("stage", "run", "health", "--date", "2026-11-20", "--notebook")
    assert result.returncode == 0, result.stderr
    output = settings.runs_dir / "2026-11-20" / "health.ipynb"
    assert result.stdout == f"stage health for 2026-11-20: SUCCEEDED; output notebook: {output}\n"
    assert output.is_file()
    # the kernel still warns that it runs over TCP (pipeline/notebooks.py says why it is not IPC)


@ON_SQLITE_ONLY
def test_stage_run_through_the_notebook_says_what_the_stage_recorded(settings: Settings) -> None:
    """An adversarial run: `stage run t1_preflight --date <a holiday> --notebook` printed
    "succeeded" (the notebook ran fine) while the stage recorded SKIPPED."""
    from sqlalchemy import select

    from store import tables
    from store.engine import service_engine

    result = cli("stage", "run", "t1_preflight", "--date", "2026-11-21", "--notebook")
    assert result.returncode == 0, result.stderr
    output = settings.runs_dir / "2026-11-21" / "t1_preflight.ipynb"
    assert result.stdout == (
        f"stage t1_preflight for 2026-11-21: SKIPPED (2026-11-21 is a Saturday); output notebook: {output}\n"
    )
    c = tables.stage_runs.c
    with service_engine(settings).connect() as conn:
        events = conn.execute(select(c.event).where(c.stage == "t1_preflight").order_by(c.id)).scalars().all()
    assert events == ["STARTED", "SKIPPED"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["stage", "run", "health", "--date", "2026-13-01"], "error: '2026-13-01' is not a date in YYYY-MM-DD form"),
        # an ISO week date is ten characters too, and Python's reader took it as 2026-11-20
        (["run-day", "--date", "2026-W47-5"], "error: '2026-W47-5' is not a date in YYYY-MM-DD form"),
        (["stage", "run", "nope", "--date", "2026-11-20"], "error: unknown stage 'nope'; known stages: health"),
        # an empty date (`--date "$DAY"` with DAY unset) is refused, never read as the default
        (["scrape", "--date", ""], "error: '' is not a date in YYYY-MM-DD form"),
        (["backfill", "--days", "1", "--end", ""], "error: '' is not a date in YYYY-MM-DD form"),
        (["bootstrap", "--end", ""], "error: '' is not a date in YYYY-MM-DD form"),
        (["notify", "deliver", "--date", ""], "error: '' is not a date in YYYY-MM-DD form"),
        (["serve"], "error: MARKETINTEL_ADMIN_KEY is not set"),
        # issue 39: the API's input rule holds on the CLI (a NUL cannot be in argv; the rest can)
        (
            ["portfolio", "trade", "client:acme", "buy", "LIQ\x1b[2J", "10", "52"],
            "error: symbol contains a control character (U+001B at position 3)",
        ),
        (["stage", "run", "health\x07", "--date", "2026-11-20"], "error: name contains a control character (U+0007"),
        # a byte that is not UTF-8 (0xFF: Python reads it as U+DCFF) failed at the database with a traceback
        (
            ["portfolio", "show", "client:\udcff"],
            "error: portfolio id is not UTF-8 text (the byte 0xFF at position 7); send it in UTF-8",
        ),
    ],
)
@ON_SQLITE_ONLY
def test_bad_input_is_one_line_on_stderr_and_exit_1(settings: Settings, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.returncode == 1
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_stage_against_an_unmigrated_store_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fresh.db").touch()  # an empty SQLite file: a store never upgraded
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{tmp_path / 'fresh.db'}")
    result = cli("stage", "run", "health", "--date", "2026-11-20")
    assert result.returncode == 1
    assert "run `marketintel db upgrade`" in result.stderr


def test_flags_show_no_value_placeholder() -> None:
    help_text = cli("stage", "run", "--help").stdout
    assert "--notebook " in help_text and "--date <str>" in help_text
    assert "<bool>" not in help_text
    assert "--verbose" in cli("--help").stdout


def test_new_admin_key_has_the_documented_form() -> None:
    result = cli("keys", "new-admin")
    assert re.fullmatch(r"svc-admin-[0-9a-f]{32}\n", result.stdout)


@pytest.mark.parametrize(
    "env, args, message",
    [
        (
            {"MARKETINTEL_EXCHANGE_RETRIES": "-1"},
            ["scrape"],
            "error: the settings are not valid: MARKETINTEL_EXCHANGE_RETRIES: ",
        ),
        (
            {"MARKETINTEL_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/nowhere"},
            ["stage", "run", "t1_preflight", "--date", "2026-11-20"],
            "error: the database refused: ",
        ),
        ({"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"}, ["run-day", "--date", "2026-11-20"], None),
        ({"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"}, ["monitor"], None),
        # `report` and `bootstrap` said `no such table: portfolio_days` / `predictions`
        ({"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"}, ["report", "compliance"], None),
        ({"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"}, ["bootstrap"], None),
        (
            {"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"},
            ["backfill", "--days", "1", "--end", "2026-11-20"],
            None,
        ),
        ({"MARKETINTEL_DATABASE_URL": "sqlite:///{tmp}/never-upgraded.db"}, ["portfolio", "show", "HOUSE"], None),
    ],
)
def test_what_a_command_stands_on_failing_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict, args: list[str], message: str | None
) -> None:
    """An adversarial run: a setting that does not validate printed a 55-line pydantic
    error, an unreachable database 495 lines, `run-day` and `monitor` on a store never
    upgraded 308 and 173; `report` and `bootstrap` there named a missing table, not the
    fix. Each is one line naming what to fix, exit status 1."""
    monkeypatch.setenv("MARKETINTEL_NO_DOTENV", "1")
    monkeypatch.setenv("MARKETINTEL_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("MARKETINTEL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MARKETINTEL_REPORTS_DIR", str(tmp_path / "reports"))
    monkeypatch.setenv("MARKETINTEL_MODELS_DIR", str(tmp_path / "models"))
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    result = cli(*args)
    assert result.returncode == 1, result.stdout
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr[-2000:]
    expected = message or f"error: no database at {tmp_path / 'never-upgraded.db'}; `marketintel db upgrade` creates it"
    assert result.stderr.startswith(expected), result.stderr
    assert not (tmp_path / "never-upgraded.db").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["db", "status"],
        ["portfolio", "show", "HOUSE"],
        ["stage", "run", "health", "--date", "2026-11-20"],
        ["scrape", "--date", "2026-11-20"],
        ["report", "compliance"],
    ],
)
def test_a_command_on_a_mistyped_store_path_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """A reviewer's run: a read command on a mistyped SQLite path made the file and its
    folders, then said `run marketintel db upgrade` (which would make the typo a real,
    empty store); `db status` listed every migration pending, exit status 0. Only `db
    upgrade` (and the demo) make a store: the others refuse in one line and make nothing."""
    for name in ("RUNS", "DATA", "REPORTS", "MODELS"):
        monkeypatch.setenv(f"MARKETINTEL_{name}_DIR", str(tmp_path / name.lower()))
    monkeypatch.setenv("MARKETINTEL_NO_DOTENV", "1")
    typo = tmp_path / "typo" / "deeper" / "store.db"
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{typo}")
    result = cli(*args)
    assert result.returncode == 1, result.stdout
    assert result.stderr == f"error: no database at {typo}; `marketintel db upgrade` creates it\n"
    assert not (tmp_path / "typo").exists()
    created = cli("db", "upgrade")
    assert created.returncode == 0, created.stderr
    assert typo.is_file()


@ON_SQLITE_ONLY
def test_import_refuses_a_currency_that_is_not_a_code_and_stores_nothing(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: `import prices.csv --currency zz` stored the instruments in 'zz';
    `--currency ''` took the format's currency."""
    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    prices = tmp_path / "prices.csv"
    prices.write_text("symbol,date,close,volume\nZZZ,2026-11-20,10.5,100\n")
    for currency in ("zz", "", "JMD ", "dollars"):
        result = cli("import", str(prices), "--currency", currency)
        assert (result.returncode, result.stdout) == (1, ""), result.stdout
        assert result.stderr == f"error: the currency must be a code of three capitals like JMD, not {currency!r}\n"
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.instruments)).scalar_one() == 0
    given = cli("import", str(prices), "--currency", "USD")
    assert given.returncode == 0
    assert given.stdout.startswith(
        "ohlcv: 1 files, 1 rows read, 1 inserted, 0 changed, 1 instruments in USD (1 new or changed)"
    )


@pytest.mark.parametrize(
    "args",
    [["db", "status"], ["stage", "run", "health", "--date", "2026-11-20"], ["report", "compliance"]],
)
def test_a_store_that_is_not_a_database_is_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """An adversarial run: MARKETINTEL_DATABASE_URL at a file that is not a database printed
    a 458-line traceback ending `DatabaseError: file is not a database`. One line naming the
    file and the cause, exit status 1, and the file is left as it was."""
    notdb = tmp_path / "notdb.db"
    notdb.write_text("not a database\n" * 200)
    monkeypatch.setenv("MARKETINTEL_NO_DOTENV", "1")
    monkeypatch.setenv("MARKETINTEL_DATABASE_URL", f"sqlite:///{notdb}")
    for folder in ("RUNS", "DATA", "REPORTS"):
        monkeypatch.setenv(f"MARKETINTEL_{folder}_DIR", str(tmp_path / folder.lower()))
    result = cli(*args)
    assert result.returncode == 1, result.stdout
    assert result.stderr == f"error: the database refused: file is not a database (database file {notdb})\n"
    assert notdb.read_text() == "not a database\n" * 200


@pytest.mark.parametrize(
    "args",
    [
        ["stage", "run", "health", "--date", "0001-01-01"],
        ["stage", "run", "t3_macro", "--date", "0001-01-01"],
        ["stage", "run", "health", "--date", "1899-12-31", "--notebook"],
        ["run-day", "--date", "0001-01-03"],
        ["scrape", "--date", "9999-12-31"],
    ],
)
@ON_SQLITE_ONLY
def test_a_date_outside_the_supported_dates_is_refused_before_anything_runs(
    settings: Settings, args: list[str]
) -> None:
    """An adversarial run: `stage run health --date 0001-01-01` recorded a year-1 STARTED and
    FAILED and said `OverflowError: date value out of range`. The CLI's dates are held to the
    API's range (market/clock.py SUPPORTED_DATES): one line naming it, nothing recorded, no
    notebook run."""
    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    day = args[args.index("--date") + 1]
    result = cli(*args)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: {day} is outside the supported dates 1900-01-01 to 2199-12-31\n"
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.stage_runs)).scalar_one() == 0
    assert not (settings.runs_dir / day).exists()


@pytest.mark.parametrize("notebook", [[], ["--notebook"]])
@ON_SQLITE_ONLY
def test_an_unhealthy_store_is_exit_2_with_the_summary_recorded(settings: Settings, notebook: list[str]) -> None:
    """An adversarial run: `stage run health` the day after a half-run day printed
    `"healthy": false` and exited 0, so a cron job or a shell saw nothing. It exits 2 (as
    `monitor --check` does) with one line naming the failed check; the stage SUCCEEDED and
    its checks and summary are recorded."""
    from datetime import date

    from sqlalchemy import select

    from pipeline.health import PIPELINE_STAGES
    from store import tables
    from store.engine import service_engine
    from tests.pipeline.test_runner import _ran

    _ran(settings, date(2026, 11, 18), dict.fromkeys(PIPELINE_STAGES, "SUCCEEDED"))
    _ran(settings, date(2026, 11, 19), {"t0_scrape": "FAILED"})
    result = cli("stage", "run", "health", "--date", "2026-11-20", *notebook)
    assert result.returncode == 2, result.stderr
    assert result.stdout.startswith("stage health for 2026-11-20: SUCCEEDED")
    assert result.stderr.strip().splitlines()[-1] == (
        "error: the store is not healthy on 2026-11-20: failed checks previous_day "
        "(2026-11-19: failed t0_scrape; not run " + ", ".join(PIPELINE_STAGES[1:]) + ")"
    )
    c = tables.stage_runs.c
    with service_engine(settings).connect() as conn:
        recorded = conn.execute(select(c.detail).where(c.stage == "health", c.event == "SUCCEEDED")).scalar_one()
        checks = conn.execute(select(tables.health_checks.c.check_name)).scalars().all()
    assert recorded["summary"]["healthy"] is False and recorded["summary"]["failed_checks"] == ["previous_day"]
    assert recorded["alarm"].startswith("the store is not healthy on 2026-11-20")
    assert "previous_day" in checks


@ON_SQLITE_ONLY
def test_an_argument_holding_a_line_break_is_still_one_error_line(settings: Settings) -> None:
    """A line feed is text to the input rule, and the error quoting the argument printed it
    raw: `portfolio trade HOUSE buy $'ZZ\\nerror: injected second line' 10 5` wrote two
    `error:` lines, the second the caller's (a portfolio id, a quantity the same). The line is
    escaped: stderr is one line."""
    from typer.testing import CliRunner

    from cli.main import app

    for where in (2, 5):  # the portfolio id, the quantity
        args = ["portfolio", "trade", "HOUSE", "buy", "LIQ", "10", "5"]
        args[where] += "\nerror: injected\rsecond"
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 1, result.output
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith("error: ") and "\\nerror: injected\\rsecond" in result.stderr, result.stderr


@ON_SQLITE_ONLY
def test_a_locked_store_is_one_error_line(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write command on a store another connection holds locked printed a ~120-line
    traceback ending `sqlite3.OperationalError: database is locked` (the BEGIN IMMEDIATE
    runs on the driver's connection, store/engine.py, out of SQLAlchemy's error wrapping).
    It is one line naming the store, exit status 1."""
    import sqlite3

    from typer.testing import CliRunner

    from cli.main import app
    from store import engine as engines

    monkeypatch.setattr(engines, "SQLITE_BUSY_TIMEOUT_SECONDS", 0.05)
    engines.dispose_engines()
    holder = sqlite3.connect(settings.database_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = CliRunner().invoke(app, ["portfolio", "open", "--house"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: the database refused: database is locked"), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


@ON_SQLITE_ONLY
def test_import_adjust_implied_without_a_limit_names_the_setting(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reviewer's run: `import FILE --adjust-implied` without a limit said it `needs the
    limit (--price-limit)`, an option of the benchmarks, not of this command. It names the
    setting the import reads, as its report's line without a limit does."""
    monkeypatch.delenv("MARKETINTEL_DAILY_PRICE_LIMIT", raising=False)
    prices = tmp_path / "prices.csv"
    prices.write_text("symbol,date,close,volume\nZZZ,2026-11-20,10.5,100\n")
    result = cli("import", str(prices), "--adjust-implied")
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    assert result.stderr == (
        "error: adjusting for moves beyond the daily price limit needs the limit (MARKETINTEL_DAILY_PRICE_LIMIT)\n"
    )
    listed = cli("import", str(prices))
    assert "no limit stated (MARKETINTEL_DAILY_PRICE_LIMIT);" in listed.stdout, listed.stdout


@ON_SQLITE_ONLY
def test_report_refuses_an_empty_out(settings: Settings) -> None:
    """A reviewer's run: `report compliance --out ''` (`--out "$FILE"`, FILE unset) wrote
    the PDF to the default path, as if no --out was given. Only an option not given is the
    default: an empty one is one error line, and nothing is written."""
    result = cli("report", "compliance", "--out", "")
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    assert result.stderr == "error: --out must name the PDF file to write, not ''\n"
    assert not settings.reports_dir.exists() or list(settings.reports_dir.iterdir()) == []


STALE_EX_DATE = """symbol,date,close,volume
AAA,2021-03-01,10.00,100
BBB,2021-03-01,4.00,500
AAA,2021-03-02,10.10,100
BBB,2021-03-02,4.10,500
AAA,2021-03-03,10.20,100
BBB,2021-03-03,4.10,0
AAA,2021-03-04,10.30,100
BBB,2021-03-04,2.06,800
AAA,2021-03-05,10.40,100
BBB,2021-03-05,2.08,800
"""


def test_import_applies_a_split_from_the_first_row_on_the_new_count(settings: Settings, tmp_path: Path) -> None:
    """An adversarial run: a file that lists an untraded name at its last close (volume 0)
    carries the old count's close on a split's ex-date. Stored on that row, a holder of 100
    shares was valued at 200 x 4.10 on it, and the history read +100% then -50%. The split
    is applied from BBB's first row on the new count (its trade on 03-04), and said so."""
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows
    from store.panels import price_panel
    from store.splits import factor_between, stored_splits

    (tmp_path / "prices.csv").write_text(STALE_EX_DATE)
    (tmp_path / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n")
    result = cli("import", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "applied from 2021-03-04, BBB's first row on the new count" in result.stdout, result.stdout
    assert "does not explain" not in result.stdout and "beyond T0's band" in result.stdout
    assert "a session that no action explains: 0 " in result.stdout
    with service_engine(settings).connect() as conn:
        splits = stored_splits(conn)
        stored = {
            r["trading_date"]: float(r["close"]) for r in current_rows(conn, tables.eod_prices) if r["symbol"] == "BBB"
        }
        panel = price_panel(conn, date(2021, 3, 5))
    held = {d: 100 * factor_between(splits, "BBB", date(2021, 3, 2), d) * close for d, close in stored.items()}
    assert held[date(2021, 3, 3)] == pytest.approx(410.0)  # untraded at the old close: the old count's 100
    assert held[date(2021, 3, 4)] == pytest.approx(412.0)  # 200 at the new count's 2.06
    history = panel[panel["symbol"] == "BBB"].sort_values("date").set_index("date")["close"].astype(float)
    assert history.pct_change().abs().max() < 0.05  # no +100% then -50%


def test_an_import_stored_before_its_bars_failed_says_so_and_exits_0(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import commits, then the store fails the daily bars' refresh (a locked SQLite
    file): the command reports what it stored, warns with the fix, and exits 0, since what
    was written is never answered as an error (a second import stores nothing and so would
    not rebuild them). In process, with the refresh made to fail as a locked store does."""
    from sqlalchemy.exc import OperationalError
    from typer.testing import CliRunner

    from cli.main import app
    from desk import Desk
    from store import tables
    from store.engine import service_engine

    def locked(self: Desk, every: bool = False) -> int:
        raise OperationalError("UPDATE daily_bars", {}, Exception("database is locked"))

    monkeypatch.setattr(Desk, "refresh_bars", locked)
    (tmp_path / "prices.csv").write_text(STALE_EX_DATE)
    ran = CliRunner().invoke(app, ["import", str(tmp_path / "prices.csv")])
    assert ran.exit_code == 0, ran.output
    assert ran.stdout.startswith("ohlcv: 1 files, 10 rows read, 10 inserted"), ran.stdout
    warning = ran.stdout.strip().splitlines()[-1]
    assert warning.startswith("warning: the import is stored, but the API's daily bars were not rebuilt"), ran.stdout
    assert "database is locked" in warning and "marketintel db rebuild-bars" in warning
    with service_engine(settings).connect() as conn:
        assert len(conn.execute(tables.eod_prices.select()).fetchall()) == 10


def test_follow_up_imports_store_one_split_on_the_first_row_on_the_new_count(
    settings: Settings, tmp_path: Path
) -> None:
    """The nightly files one after another: the ex-date's file (BBB untraded at the old
    close of the stored day before) applies no split yet and says so, the next day's (its
    first trade) applies it from that trade, and that file sent again stores no second
    split and warns of nothing."""
    from store.engine import service_engine
    from store.splits import stored_splits

    rows = STALE_EX_DATE.splitlines()
    for name, days in (("before", rows[1:5]), ("ex_date", rows[5:7]), ("trade", rows[7:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prices.csv").write_text("\n".join([rows[0], *days]) + "\n")
        if name != "before":
            (tmp_path / name / "corporate_actions.csv").write_text(
                "symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n"
            )
    assert cli("import", str(tmp_path / "before")).returncode == 0
    ex_date = cli("import", str(tmp_path / "ex_date"))
    assert "BBB 2021-03-03 split 2 for 1: not applied yet" in ex_date.stdout, ex_date.stdout
    for _ in range(2):
        trade = cli("import", str(tmp_path / "trade"))
        assert trade.returncode == 0, trade.stderr
        assert "applied from 2021-03-04" in trade.stdout and "warning" not in trade.stdout, trade.stdout
        assert "a session that no action explains: 0 " in trade.stdout
    with service_engine(settings).connect() as conn:
        assert [(s.symbol, s.ex_date, s.factor) for s in stored_splits(conn)] == [("BBB", date(2021, 3, 4), 2.0)]


def test_a_split_stored_on_its_ex_date_before_its_rows_is_re_dated_not_stored_again(
    settings: Settings, tmp_path: Path
) -> None:
    """The actions file imported ahead of the ex-date (no row of BBB on or after it: the
    split is stored on its ex-date), then the files from the ex-date on with it: the later
    import re-dates the stored split to BBB's first row on the new count, once (stored
    beside it, a holder's 100 shares became 400; left alone, a holder of 100 was valued at
    200 x the old close on the untraded ex-date), and says so; run again, it changes nothing."""
    from store.engine import service_engine
    from store.splits import stored_splits

    rows = STALE_EX_DATE.splitlines()
    for name, days in (("ahead", rows[1:5]), ("after", rows[5:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prices.csv").write_text("\n".join([rows[0], *days]) + "\n")
        (tmp_path / name / "corporate_actions.csv").write_text(
            "symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n"
        )
    assert cli("import", str(tmp_path / "ahead")).returncode == 0
    after = cli("import", str(tmp_path / "after"))
    assert after.returncode == 0, after.stderr
    assert (
        "re-dated: BBB 2021-03-03 SPLIT 2 as stored: withdrawn, BBB's rows are on the old count that day; "
        f"{tmp_path / 'after' / 'corporate_actions.csv'}:2 (BBB 2021-03-03 split 2 for 1): applied from 2021-03-04"
    ) in after.stdout.splitlines(), after.stdout
    assert "does not explain" not in after.stdout and "warning: the store holds" not in after.stdout
    again = cli("import", str(tmp_path / "after"))
    assert "re-dated" not in again.stdout and "corporate actions stored" not in again.stdout, again.stdout
    with service_engine(settings).connect() as conn:
        assert [(s.symbol, s.ex_date, s.factor) for s in stored_splits(conn)] == [("BBB", date(2021, 3, 4), 2.0)]


def test_a_split_an_older_import_stored_on_an_untraded_ex_date_is_re_dated(settings: Settings, tmp_path: Path) -> None:
    """A store built before the first-row rule: the import stored BBB's split on its ex-date,
    03-03, where the file lists BBB untraded at the old close (a holder of 100 valued at
    820 that day for 410). The same files imported again re-date it to 03-04."""
    from store import tables
    from store.engine import service_engine
    from store.history import append_history
    from store.splits import factor_between, stored_splits

    (tmp_path / "prices.csv").write_text(STALE_EX_DATE)
    assert cli("import", str(tmp_path / "prices.csv")).returncode == 0
    with service_engine(settings).begin() as conn:  # what the import stored before the rule
        old = {"symbol": "BBB", "action_date": date(2021, 3, 3), "kind": "SPLIT", "amount": 2.0}
        append_history(conn, tables.corporate_actions, [{**old, "detail": {}, "source": "import:ohlcv"}])
    (tmp_path / "corporate_actions.csv").write_text("symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n")
    result = cli("import", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "re-dated: BBB 2021-03-03 SPLIT 2 as stored: withdrawn" in result.stdout, result.stdout
    with service_engine(settings).connect() as conn:
        splits = stored_splits(conn)
    assert [(s.symbol, s.ex_date, s.factor) for s in splits] == [("BBB", date(2021, 3, 4), 2.0)]
    assert 100 * factor_between(splits, "BBB", date(2021, 3, 2), date(2021, 3, 3)) * 4.10 == pytest.approx(410.0)


def test_a_split_stored_ahead_of_untraded_rows_is_withdrawn_until_the_first_trade(
    settings: Settings, tmp_path: Path
) -> None:
    """Stored on its ex-date ahead of BBB's rows, then the ex-date's file (BBB untraded at
    the old close, no row on the new count yet): the stored split is withdrawn and the
    file's is not applied yet, as one import of both files reads them; the file with the
    first trade stores it on that day."""
    from store.engine import service_engine
    from store.splits import stored_splits

    rows = STALE_EX_DATE.splitlines()
    for name, days in (("ahead", rows[1:5]), ("ex_date", rows[5:7]), ("trade", rows[7:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prices.csv").write_text("\n".join([rows[0], *days]) + "\n")
        (tmp_path / name / "corporate_actions.csv").write_text(
            "symbol,ex_date,kind,ratio\nBBB,2021-03-03,split,2 for 1\n"
        )
    assert cli("import", str(tmp_path / "ahead")).returncode == 0
    ex_date = cli("import", str(tmp_path / "ex_date"))
    assert "re-dated: BBB 2021-03-03 SPLIT 2 as stored: withdrawn" in ex_date.stdout, ex_date.stdout
    assert "(BBB 2021-03-03 split 2 for 1): not applied yet" in ex_date.stdout
    with service_engine(settings).connect() as conn:
        assert stored_splits(conn) == []
    assert cli("import", str(tmp_path / "trade")).returncode == 0
    with service_engine(settings).connect() as conn:
        assert [(s.symbol, s.ex_date, s.factor) for s in stored_splits(conn)] == [("BBB", date(2021, 3, 4), 2.0)]
