import shutil
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from market.errors import MigrationError, SchemaNotReadyError
from store.engine import build_engine
from store.migrations import SQL_DIR, available_migrations, require_current_schema, status, upgrade


def test_upgrade_applies_everything_once(empty_database_url: str) -> None:
    engine = build_engine(empty_database_url)
    first = upgrade(engine)
    assert [m.version for m in first] == [m.version for m in available_migrations(engine.dialect.name)]
    assert upgrade(engine) == []
    assert all(s.state == "applied" and s.applied_at is not None for s in status(engine))
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM schema_migrations")).scalar_one() == len(first)
    require_current_schema(engine)
    engine.dispose()


def test_a_new_store_is_reported_as_not_current(empty_database_url: str) -> None:
    engine = build_engine(empty_database_url)
    with pytest.raises(SchemaNotReadyError, match="marketintel db upgrade"):
        require_current_schema(engine)
    assert {s.state for s in status(engine)} == {"pending"}
    engine.dispose()


def _upgraded_from_a_copy(url: str, tmp_path: Path) -> tuple[Engine, Path, Path]:
    """An engine on `url` upgraded by a copy of the migrations made under `tmp_path`; the
    copy's folder, and in it the folder of this dialect's files, for a test to edit."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    engine = build_engine(url)
    upgrade(engine, sql_dir)
    return engine, sql_dir, sql_dir / ("sqlite" if engine.dialect.name == "sqlite" else "postgres")


def test_an_edited_applied_migration_is_refused(empty_database_url: str, tmp_path: Path) -> None:
    engine, sql_dir, dialect_dir = _upgraded_from_a_copy(empty_database_url, tmp_path)
    first = sorted(dialect_dir.glob("0001_*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited after release\n")
    assert [s.state for s in status(engine, sql_dir)][0] == "modified"
    with pytest.raises(MigrationError, match="edited afterwards"):
        upgrade(engine, sql_dir)
    engine.dispose()


def test_a_failing_migration_leaves_nothing_behind(empty_database_url: str, tmp_path: Path) -> None:
    engine, sql_dir, dialect_dir = _upgraded_from_a_copy(empty_database_url, tmp_path)
    (dialect_dir / "0999_broken.sql").write_text("CREATE TABLE half_done (id INTEGER);\nTHIS IS NOT SQL;\n")
    with pytest.raises(MigrationError, match="0999_broken.sql failed"):
        upgrade(engine, sql_dir)
    with engine.connect() as conn:
        assert not engine.dialect.has_table(conn, "half_done")
    assert status(engine, sql_dir)[-1].state == "pending"
    engine.dispose()


def test_both_dialects_have_a_folder_of_numbered_files() -> None:
    sqlite = {m.version: m.name for m in available_migrations("sqlite")}
    postgres = {m.version: m.name for m in available_migrations("postgresql")}
    assert sqlite and postgres
    shared = set(sqlite) & set(postgres)
    assert all(sqlite[v] == postgres[v] for v in shared)
    assert set(postgres) - set(sqlite) == {3}  # the service role exists only on Postgres
