"""A throwaway PostgreSQL server for tests: Debian's binaries, a fresh cluster, loopback only.

``postgres_server()`` is a context manager yielding a connection string
(``postgresql://postgres@127.0.0.1:PORT/postgres``). It runs ``initdb`` into a new temporary
directory, starts ``postgres`` on a free 127.0.0.1 port, waits until the server accepts
connections, and on exit stops it with ``pg_ctl stop -m immediate`` and deletes the directory.
Nothing is shared with a system cluster Debian's package may have started: own directory, own
port, own socket directory, trust authentication.

``initdb`` and ``postgres`` refuse to run as root. As root (CI containers) both run as the
``postgres`` user Debian's package creates, or ``nobody`` when there is none, with the temporary
directory handed to that user; as anyone else they run as the current user.

The binaries are found in ``/usr/lib/postgresql/<version>/bin`` (the highest version), or in the
directory named by ``NBAGENTS_PG_BIN``. When they are missing, ``find_bin_dir()`` raises
:class:`PostgresNotFound`, which the ``postgres_url`` fixture turns into a skip (a failure in CI).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

DEBIAN_ROOT = Path("/usr/lib/postgresql")
BIN_ENV = "NBAGENTS_PG_BIN"
SUPERUSER = "postgres"
# Under root, the users initdb and postgres run as, in order of preference.
SERVER_USERS = ("postgres", "nobody")
NEEDED = ("initdb", "pg_ctl", "postgres")

# Settings for a disposable cluster (startup is mostly initdb, which --no-sync spares its fsyncs):
# nothing is ever flushed to disk (the data is deleted afterwards, so a crash loses nothing that
# matters), little shared memory and few connections (tests need little; the defaults reserve
# 128 MB), and no JIT compiling, which only makes short test queries slower.
FAST_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "16MB",
    "max_connections": "50",
    "jit": "off",
}
START_ATTEMPTS = 3  # a free port can be taken by someone else between choosing and binding it
LOG_TAIL_LINES = 30

IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


class PostgresNotFound(RuntimeError):
    """The PostgreSQL server binaries are not installed (or not where NBAGENTS_PG_BIN says)."""


class PostgresError(RuntimeError):
    """The server could not be set up, started or stopped; the message carries its log."""


def unavailable(reason: str) -> NoReturn:
    """Skip outside CI; fail in CI, where a missing install is a broken set-up, not a pass."""
    if IN_CI:
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def _version_key(directory: Path) -> tuple[int, ...]:
    # "9.6" < "15" < "16": compare numerically, not as text.
    return tuple(int(part) for part in directory.name.split("."))


def find_bin_dir() -> Path:
    """The directory holding initdb, pg_ctl and postgres: NBAGENTS_PG_BIN, else Debian's newest."""
    override = os.environ.get(BIN_ENV)
    if override:
        candidates = [Path(override)]
        where = f"{BIN_ENV}={override}"
    else:
        versions = [d for d in DEBIAN_ROOT.glob("*") if re.fullmatch(r"\d+(\.\d+)*", d.name)]
        candidates = [d / "bin" for d in sorted(versions, key=_version_key, reverse=True)]
        where = f"{DEBIAN_ROOT}/*/bin"
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in NEEDED):
            return directory
    raise PostgresNotFound(
        f"PostgreSQL server binaries ({', '.join(NEEDED)}) not found in {where}: install Debian's "
        f"`postgresql` package (scripts/system-deps.sh does), or set {BIN_ENV} to their directory"
    )


def require_bin_dir() -> Path:
    """``find_bin_dir()``, or skip the test (fail it in CI) when the binaries are missing."""
    try:
        return find_bin_dir()
    except PostgresNotFound as missing:
        reason = str(missing)
    # Outside the except block, so a failure in CI does not chain the PostgresNotFound above.
    unavailable(reason)


def _server_user() -> pwd.struct_passwd | None:
    """Whom to run initdb and postgres as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in SERVER_USERS:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PostgresError(
        f"running as root, and none of the users {', '.join(SERVER_USERS)} exists to run "
        "initdb and postgres as (they refuse to run as root)"
    )


def _as_user(user: pwd.struct_passwd | None) -> dict[str, Any]:
    """Popen arguments that drop root for the child: its uid, its gid, and no other groups."""
    if user is None:
        return {}
    # extra_groups=[] drops root's supplementary groups too, so the server cannot use them.
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def _check_reachable(directory: Path, user: pwd.struct_passwd) -> None:
    """Fail early and clearly if ``user`` cannot get through the parents of ``directory``.

    (For example TMPDIR under /root: initdb would fail later with a bare "Permission denied".)
    """
    for parent in directory.parents:
        mode = parent.stat()
        if mode.st_uid == user.pw_uid:
            ok = bool(mode.st_mode & stat.S_IXUSR)
        elif mode.st_gid == user.pw_gid:
            ok = bool(mode.st_mode & stat.S_IXGRP)
        else:
            ok = bool(mode.st_mode & stat.S_IXOTH)
        if not ok:
            raise PostgresError(
                f"the server runs as {user.pw_name!r}, who cannot enter {parent} (mode "
                f"{stat.filemode(mode.st_mode)}); point TMPDIR to a directory others can reach"
            )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return f"(no log: {error})"
    return "\n".join(text.splitlines()[-lines:]) or "(the log is empty)"


def _child_env(home: Path) -> dict[str, str]:
    """The environment of initdb, postgres and pg_ctl.

    Without the caller's PG* variables (PGDATA, PGPORT, PGOPTIONS would point the tools at another
    cluster or change its settings), with the C locale (present everywhere, and the log stays in
    English), and HOME in the temporary directory (root's HOME is not the server user's).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({"LC_ALL": "C", "LANG": "C", "HOME": str(home)})
    return env


def _ready(data: Path, port: int) -> bool:
    """Whether the server accepts connections on 127.0.0.1:port.

    Line 8 of postmaster.pid says "ready" once the server accepts connections (what
    ``pg_ctl start -w`` waits for); the TCP connect proves it listens where the URL points.
    """
    try:
        lines = (data / "postmaster.pid").read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    if len(lines) < 8 or lines[7].strip() != "ready":
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _initdb(bin_dir: Path, root: Path, user: pwd.struct_passwd | None) -> Path:
    data = root / "data"
    log = root / "initdb.log"
    command = [
        str(bin_dir / "initdb"),
        *("-D", str(data)),
        *("-U", SUPERUSER),
        *("-A", "trust"),
        *("-E", "UTF8"),
        "--locale=C",
        # Skip fsync of the new files: the cluster lives for one test session.
        "--no-sync",
    ]
    with log.open("wb") as out:
        result = subprocess.run(
            command,
            cwd=root,
            env=_child_env(root),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
            **_as_user(user),
        )
    if result.returncode != 0:
        raise PostgresError(
            f"initdb failed (exit code {result.returncode}); the end of its output:\n{_tail(log)}"
        )
    return data


def _start(
    bin_dir: Path, root: Path, data: Path, user: pwd.struct_passwd | None, timeout: float
) -> tuple[subprocess.Popen[bytes], int]:
    """Start postgres on a free loopback port; return the process and the port once it is ready.

    Retries with another port only when the one chosen was taken before the server bound it.
    """
    settings = {
        **FAST_SETTINGS,
        "listen_addresses": "127.0.0.1",
        # The socket directory is ours: never /var/run/postgresql, where a system cluster lives.
        "unix_socket_directories": str(root),
    }
    for attempt in range(1, START_ATTEMPTS + 1):
        port = _free_port()
        log = root / f"server-{attempt}.log"
        options = [
            arg for k, v in {**settings, "port": str(port)}.items() for arg in ("-c", f"{k}={v}")
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(bin_dir / "postgres"), "-D", str(data), *options],
                cwd=root,
                env=_child_env(root),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                # A session of its own: a Ctrl-C at the terminal reaches pytest, whose clean-up
                # then stops the server, instead of reaching the server too and racing it.
                start_new_session=True,
                **_as_user(user),
            )
        deadline = time.monotonic() + timeout
        try:
            while True:
                if process.poll() is not None:
                    text = _tail(log)
                    if "could not bind" in text and attempt < START_ATTEMPTS:
                        break  # the port went to someone else: try another
                    raise PostgresError(
                        f"postgres exited with code {process.returncode} while starting on "
                        f"127.0.0.1:{port}; the end of its log:\n{text}"
                    )
                if _ready(data, port):
                    return process, port
                if time.monotonic() > deadline:
                    raise PostgresError(
                        f"postgres did not accept connections on 127.0.0.1:{port} within "
                        f"{timeout} s; the end of its log:\n{_tail(log)}"
                    )
                time.sleep(0.02)
        except BaseException:
            # Timed out, or interrupted (Ctrl-C) while waiting: never leave a server behind.
            _stop(bin_dir, data, process, root, user)
            raise
    raise AssertionError("unreachable")  # the last attempt returns or raises


def _stop(
    bin_dir: Path,
    data: Path,
    process: subprocess.Popen[bytes],
    root: Path,
    user: pwd.struct_passwd | None,
) -> None:
    """``pg_ctl stop -m immediate``: no checkpoint, the data is about to be deleted anyway.

    If pg_ctl fails, signal the server ourselves (SIGQUIT is the same immediate shutdown), then
    kill it if it still runs; either way reap it, it is our child.
    """
    if process.poll() is None:
        stopped = subprocess.run(
            [str(bin_dir / "pg_ctl"), "stop", "-D", str(data), "-m", "immediate", "-w", "-t", "10"],
            cwd=root,
            env=_child_env(root),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            **_as_user(user),
        )
        if stopped.returncode != 0 and process.poll() is None:
            process.send_signal(signal.SIGQUIT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def postgres_server(bin_dir: Path | None = None, *, timeout: float = 30.0) -> Iterator[str]:
    """A fresh PostgreSQL server on 127.0.0.1 for the duration of the ``with`` block.

    Yields ``postgresql://postgres@127.0.0.1:PORT/postgres`` (trust authentication, so no
    password). ``timeout`` bounds the wait for the server to accept connections; past it, or if
    the server exits, :class:`PostgresError` carries the tail of its log. Raises
    :class:`PostgresNotFound` when no binaries are found and ``bin_dir`` is not given.
    """
    bin_dir = bin_dir or find_bin_dir()
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="nbagents-pg-"))
    try:
        if user is not None:
            _check_reachable(root, user)
            # initdb creates data/ inside root as the server user, so root must be that user's.
            os.chown(root, user.pw_uid, user.pw_gid)
        data = _initdb(bin_dir, root, user)
        process, port = _start(bin_dir, root, data, user, timeout)
        try:
            yield f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
        finally:
            _stop(bin_dir, data, process, root, user)
    finally:
        # The server user's files: root may delete them, and so may their owner (ourselves).
        shutil.rmtree(root)
