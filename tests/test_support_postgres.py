"""The throwaway PostgreSQL server of ``support/postgres.py``: found, started, stopped, cleaned up.

Each test here starts a server of its own (under a second each) to watch its whole life; the
session-wide one behind ``postgres_url`` is left alone.
"""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import pytest
from support.postgres import (
    PostgresError,
    PostgresNotFound,
    find_bin_dir,
    postgres_server,
    require_bin_dir,
)

pytestmark = pytest.mark.server  # starts PostgreSQL servers

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def bin_dir() -> Path:
    return require_bin_dir()


def data_directory(url: str) -> Path:
    with psycopg.connect(url) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    return Path(row[0])


def test_missing_binaries_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NBAGENTS_PG_BIN", str(tmp_path))
    with pytest.raises(PostgresNotFound, match="postgresql") as raised:
        find_bin_dir()
    assert str(tmp_path) in str(raised.value)


def test_server_is_stopped_and_its_directory_removed(bin_dir: Path) -> None:
    with postgres_server(bin_dir) as url:
        cluster = data_directory(url).parent
        assert cluster.is_dir()
    assert not cluster.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)


def test_a_port_taken_before_the_server_binds_it_is_replaced(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support import postgres

    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        ports = iter([taken])
        real_free_port = postgres._free_port
        monkeypatch.setattr(postgres, "_free_port", lambda: next(ports, None) or real_free_port())

        with postgres_server(bin_dir) as url:
            assert f":{taken}/" not in url
            assert data_directory(url).is_dir()


def test_a_server_that_is_not_ready_in_time_is_an_error_and_is_cleaned_up(
    bin_dir: Path,
) -> None:
    before = set(Path(tempfile.gettempdir()).glob("nbagents-pg-*"))
    with (
        pytest.raises(PostgresError, match="did not accept connections") as raised,
        postgres_server(bin_dir, timeout=0),
    ):
        pytest.fail("the server cannot be ready in no time")
    assert "the end of its log" in str(raised.value)
    assert set(Path(tempfile.gettempdir()).glob("nbagents-pg-*")) <= before
