"""Fixtures for real databases.

Postgres tests use the server on 127.0.0.1:5432 (user postgres, trust auth) and create
and drop their own database; Redis tests use the server on 127.0.0.1:6379 with a key
prefix of their own, deleted afterwards. Under CI=true a missing server fails the run;
elsewhere those tests skip with the reason printed.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from market.settings import Settings, get_settings, work_environment
from store.engine import build_engine, dispose_engines
from store.migrations import upgrade

# ../shared/data beside the project; MARKETINTEL_SHARED_DATA points elsewhere (a clone in /tmp).
SHARED_DATA = Path(
    os.environ.get("MARKETINTEL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
PG_ADMIN_URL = os.environ.get("MARKETINTEL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("MARKETINTEL_TEST_REDIS", "redis://127.0.0.1:6379/0")
ADMIN_KEY = "svc-admin-" + "0123456789abcdef" * 2


def _postgres_unavailable() -> str | None:
    import psycopg

    try:
        with psycopg.connect(PG_ADMIN_URL, connect_timeout=3):
            return None
    except Exception as exc:  # noqa: BLE001 - any failure means "no server for us"
        return f"no Postgres server at {PG_ADMIN_URL}: {str(exc).strip().splitlines()[0]}"


@pytest.fixture(scope="session")
def postgres_server() -> str:
    reason = _postgres_unavailable()
    if reason:
        _required(reason)
    return PG_ADMIN_URL


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the test server, dropped afterwards."""
    import psycopg

    name = f"marketintel_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.rsplit("/", 1)[0] + f"/{name}"
    finally:
        dispose_engines()
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# this process's stores to copy from (SQLite path or Postgres name), by server and world
_MIGRATED: dict[tuple[str, str], str] = {}


def migrated_copy(url: str, world: str = "", seed: Callable[[str], None] | None = None) -> None:
    """Make the database at `url` (replacing one there, if any) an upgraded store: a copy of
    one that `upgrade` (the same migrations `marketintel db upgrade` applies) migrated once
    in this test process.
    On SQLite with sqlite3's backup API; on Postgres as a database created from it as its
    template (the service role's grants are the database's own and come along). Running
    the migrations took 0.2 s a test on SQLite and about 1 s on Postgres; the copy a few ms
    and about 0.4 s. tests/store/test_migrations.py runs `upgrade` itself on empty
    databases.

    With a `world` name and its `seed`, the store copied is the migrated one that
    `seed(url of that store)` then filled, once per process and kind of database: tests that
    start from the same world (the model monitor's 110 days and validation record, about
    15 s) each get a copy of their own to change."""
    import atexit
    import sqlite3
    import tempfile
    from contextlib import closing

    import psycopg

    sqlite = url.startswith("sqlite:///")
    server, _, name = url.rpartition("/")
    where = ("sqlite" if sqlite else server, world)
    if where not in _MIGRATED:
        if sqlite:
            folder = Path(tempfile.mkdtemp(prefix="marketintel-migrated-"))
            atexit.register(shutil.rmtree, folder, True)
            template = str(folder / "store.db")
            source = f"sqlite:///{template}"
        else:
            template = f"marketintel_migrated_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{template}"')
            atexit.register(_drop_database, template)
            source = f"{server}/{template}"
        engine = build_engine(source)
        upgrade(engine)
        engine.dispose()  # a template database must have no connection when it is copied
        if seed is not None:
            seed(source)
            dispose_engines()
        _MIGRATED[where] = template
    if sqlite:
        target = url.removeprefix("sqlite:///")
        with closing(sqlite3.connect(_MIGRATED[where])) as source, closing(sqlite3.connect(target)) as copy:
            source.backup(copy)
        return
    dispose_engines()  # no pooled connection to the test's database outlives its re-creation
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_MIGRATED[where]}"')


def _drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def as_a_terminal_starts_it() -> None:
    """`preexec_fn` for a child that a test stops with Ctrl-C (SIGINT): SIGINT and SIGQUIT at
    their defaults, as a terminal's foreground job has them. A test runner started in the
    background by a non-interactive shell inherits both ignored, and a process started with
    SIGINT ignored keeps ignoring it (Python installs no KeyboardInterrupt handler, and
    bash may not trap it), so the child would never see the Ctrl-C it is tested against."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _required(reason: str) -> None:
    """Under CI=true a missing server or data set fails the run; elsewhere the test skips."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true requires it: {reason}")
    pytest.skip(reason)


@pytest.fixture
def redis_url() -> Iterator[tuple[str, str]]:
    """(URL, key prefix) on the test Redis; every key under the prefix is deleted afterwards."""
    from limits.storage import storage_from_string

    prefix = f"marketintel-test-{uuid.uuid4().hex[:12]}"
    storage = storage_from_string(REDIS_TEST_URL, key_prefix=prefix)
    if not storage.check():
        _required(f"no Redis server answers at {REDIS_TEST_URL}")
    try:
        yield REDIS_TEST_URL, prefix
    finally:
        storage.reset()


# A test of what the database does not change (a PDF's layout, a CLI's printed lines and
# exit status, a notebook's output path) runs on SQLite only: its Postgres run repeated what
# the same reads and writes already prove on Postgres in the store, API and stage tests
# (the list is in docs/testing.md, "What keeps the suite quick").
ON_SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's database of each supported kind goes, one test run per kind; not made
    yet (a Postgres one is dropped afterwards if it was). Whoever fills it makes it in one
    step: `settings` as a migrated copy, tests/api/world.py `build` as a copy of the seeded
    world, `empty_database_url` empty. On Postgres each database made is a few hundred
    files created and then deleted; making one only to replace it at once cost the Postgres
    tests about a tenth of their time (docs/benchmarks.md, "The test suite", gives the
    figures and the command)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    server = request.getfixturevalue("postgres_server")
    name = f"marketintel_test_{uuid.uuid4().hex[:12]}"

    def drop() -> None:
        dispose_engines()
        _drop_database(name)

    request.addfinalizer(drop)
    return server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def empty_database_url(database_url: str) -> str:
    """An empty database of each supported kind (on SQLite an empty file: only `upgrade`
    makes a missing one, store/migrations.py `require_store`)."""
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).touch()
    else:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{database_url.rpartition("/")[2]}"')
    return database_url


@pytest.fixture
def settings(unmade_settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """Settings for an upgraded, empty store, also exported to the environment so that
    notebooks and subprocesses started by the test see the same store."""
    if "api" in request.fixturenames:
        pytest.fail("a test with the `api` fixture reads its store's settings as api.world.settings")
    migrated_copy(unmade_settings.database_url)
    return unmade_settings


@pytest.fixture
def unmade_settings(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """`settings` before its store is made: for a test that fills its store from a world of
    its own in one step (tests/api/world.py `build`, `migrated_copy` with a world), rather
    than over a migrated copy made for nothing. Exported to the environment as `settings`."""
    for key, value in work_environment(tmp_path, url=database_url).items():
        monkeypatch.setenv(key, value)
    # the tests' feeds and simulators serve their disclosure PDFs from 127.0.0.1 (the tests of
    # internal addresses in tests/ingest/test_text_sources.py turn this off)
    monkeypatch.setenv("MARKETINTEL_ALLOW_PRIVATE_ENCLOSURES", "true")
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
    dispose_engines()


@pytest.fixture(scope="session")
def nse_data() -> Path:
    """../shared/data/nse-kenya: required under CI=true, skipped elsewhere when absent."""
    folder = SHARED_DATA / "nse-kenya"
    if not (folder / "daily").is_dir():
        _required(f"the NSE data set is not at {folder} (it lives beside the project, in ../shared/data)")
    return folder


CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
WAIT_SECONDS = 60  # a shared 2-core machine: Swagger UI parses a 1.5 MB bundle and the schema


@pytest.fixture
def browser() -> Iterator[object]:
    """Debian's headless chromium, driven by selenium through its chromedriver (no browser
    download); its console log is kept, so a test can assert nothing failed to load."""
    if not (CHROMIUM and CHROMEDRIVER):
        _required("Debian's chromium and chromium-driver are not installed (`make install-browser` as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console and CSP violations
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--disable-gpu",
        "--no-first-run",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()
