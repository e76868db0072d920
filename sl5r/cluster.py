"""The production shape on one machine: ``python -m sl5r.cluster`` (``make cluster``).

What is ours here is only what comes before the processes run, and the ready line:

1. It checks that PostgreSQL and Redis answer (and starts them with the machine's own
   commands when they are the local defaults and do not), creates the database if it is
   missing, migrates, collects the static files, loads the map and, unless ``--no-demo``,
   the demo tournament (output in ``<dir>/logs/setup.log``).
2. It hands over to **supervisord** (``deploy/supervisord.conf``), which runs HAProxy
   (``deploy/haproxy/haproxy.cfg``) on ``--port``, two ASGI processes (``manage.py serve
   --no-clock``, Daphne) on ``--asgi-ports``, one Celery worker (``--concurrency``) and
   exactly one Celery beat; restarts any that dies; keeps ``<dir>/logs/<name>.log``; and on
   SIGINT/SIGTERM stops the balancer, the ASGI processes, beat and the worker in that order.
   Before that it lets the processes open as many files as a full league needs, as far as
   the machine allows, and gives HAProxy the ``maxconn`` that fits (``files_limit_raise``,
   ``balancer_maxconn``).
3. supervisord's ``ready`` program (``python -m sl5r.cluster ready``) waits until the
   balancer, both ASGI processes and the worker answer, writes ``<dir>/cluster.json`` and
   prints ``cluster ready: balancer=… asgi=…``.

Everything is configured by environment variables (docs/deployment.md, "Configuration"), with
``SL5R_CLOCK=celery`` forced and production defaults: ``DEBUG`` off and a ``SECRET_KEY``
generated once and kept in ``<dir>/secret_key``; plain HTTP on 127.0.0.1, so
``SECURE_SSL_REDIRECT`` defaults to off. HAProxy connects to the ASGI processes from
127.0.0.2, the one address Django trusts for the client address it forwards.

    python -m sl5r.cluster [--dir var/cluster] [--port 8000] [--asgi-ports 8001,8002]
                           [--no-demo] [--concurrency N (default: the cores, at least 2)]
    python -m sl5r.cluster stop [--dir var/cluster]     # as supervisorctl shutdown, and waits
    .venv/bin/supervisorctl -c deploy/supervisord.conf status    # with SL5R_CLUSTER_DIR set

Only the standard library is imported at the top: no Django settings are needed before the
processes start; psycopg and redis are imported only to check the services.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import xmlrpc.client
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sl5r.cores import worker_concurrency_default

BASE_DIR = Path(__file__).resolve().parent.parent
SUPERVISORD_CONF = BASE_DIR / "deploy" / "supervisord.conf"
HAPROXY_CONF = BASE_DIR / "deploy" / "haproxy" / "haproxy.cfg"
DEFAULT_DIR = "var/cluster"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/sl5r"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
HOST = "127.0.0.1"
# HAProxy connects to the ASGI processes from this loopback address and Django trusts the
# client address in X-Forwarded-For only from it: a client on this machine connecting to an
# ASGI process directly (from 127.0.0.1) cannot name an address of his choice.
BALANCER_SOURCE = "127.0.0.2"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# The programs of deploy/supervisord.conf that keep running (``ready`` exits when done).
PROGRAMS = ("worker", "beat", "asgi-1", "asgi-2", "balancer")

# HAProxy's client connections at once (deploy/haproxy/haproxy.cfg, "maxconn", says why this
# many; tests/deploy checks the two agree), and the files it needs beside two per
# connection: its listener, stats, health checks and each thread's poller (32 on two
# cores, measured with "show info").
BALANCER_MAXCONN = 16000
BALANCER_FILES_RESERVE = 256
# Open files each process of the cluster may have, as deploy/systemd's LimitNOFILE: HAProxy
# two per connection, an ASGI process one per websocket and per connection.
FILES_WANTED = 65536

SERVICE_WAIT_SECONDS = 60.0  # for PostgreSQL or Redis started here to answer
READY_SECONDS = 120.0  # for every process to answer after supervisord starts them
POLL_SECONDS = 0.5

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2


class ClusterError(Exception):
    """A problem that stops the cluster with one line (exit 2)."""


# --- Configuration -----------------------------------------------------------------------


def secret_key_keep(directory: Path) -> str:
    """The cluster's ``SECRET_KEY``: made once, kept in ``<dir>/secret_key`` (mode 0600).

    Kept so that sessions and join links survive a restart of the cluster.
    """
    path = directory / "secret_key"
    if path.exists():
        key = path.read_text(encoding="ascii").strip()
        if key:
            return key
    key = secrets.token_urlsafe(50)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(key + "\n")
    return key


def cluster_environment(environ: Mapping[str, str], *, secret_key: str) -> dict[str, str]:
    """The environment of every process of the cluster.

    What the caller set wins, except ``SL5R_CLOCK``: the cluster's turns are resolved by
    its Celery worker and beat. ``SECURE_SSL_REDIRECT`` defaults to off because the cluster
    serves plain HTTP on 127.0.0.1 (with TLS in front, set it to 1 and
    ``SECURE_PROXY_SSL_HEADER=1``).
    """
    env = dict(environ)
    for name, default in (
        ("DATABASE_URL", DEFAULT_DATABASE_URL),
        ("REDIS_URL", DEFAULT_REDIS_URL),
        ("SECRET_KEY", secret_key),
        ("DEBUG", "0"),
        ("SECURE_SSL_REDIRECT", "0"),
        ("DJANGO_SETTINGS_MODULE", "sl5r.settings"),
    ):
        if not env.get(name, "").strip():
            env[name] = default
    env["SL5R_CLOCK"] = "celery"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def ports_parse(text: str) -> list[int]:
    """``8001,8002`` as a list of ports; 0 stays 0 (a free port is picked later)."""
    ports = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit() or not 0 <= int(item) < 65536:
            raise argparse.ArgumentTypeError(f"{item!r} is not a port number")
        ports.append(int(item))
    if len(ports) != 2:
        # deploy/haproxy/haproxy.cfg and deploy/supervisord.conf name two processes.
        raise argparse.ArgumentTypeError(f"two ports, A,B (got {len(ports)})")
    taken = [p for p in ports if p and ports.count(p) > 1]
    if taken:
        raise argparse.ArgumentTypeError(f"port {taken[0]} given twice")
    return ports


def files_limit_raise(wanted: int = FILES_WANTED) -> int:
    """Let this process, and so every process supervisord starts, open ``wanted`` files, or
    as many as the machine allows; returns the hard limit they then share.

    HAProxy raises its own limit to what its maxconn needs, which fails when that is above
    the hard limit and it may not raise that (not root, or root in a container without
    CAP_SYS_RESOURCE): it then refuses to start. Daphne raises nothing, and a shell's usual
    soft limit of 1,024 would hold an ASGI process to about a thousand websockets. No hard
    limit at all counts as ``wanted``.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    if hard != unlimited and hard < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
        except (ValueError, OSError):
            pass  # not allowed: the hard limit stays, and what follows fits under it
    target = wanted if hard == unlimited else min(wanted, hard)
    if soft != unlimited and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return wanted if hard == unlimited else hard


def balancer_maxconn(files: int) -> int:
    """HAProxy's maxconn under a hard limit of ``files`` open files: ``BALANCER_MAXCONN``,
    or the most that fits (two files a connection, and its own)."""
    return max(1, min(BALANCER_MAXCONN, (files - BALANCER_FILES_RESERVE) // 2))


def port_free() -> int:
    """A port nobody listens on now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# --- The services: PostgreSQL and Redis ---------------------------------------------------


def _is_local_default(url: str, port: int) -> bool:
    parts = urlsplit(url)
    return (parts.hostname or HOST) in LOCAL_HOSTS and (parts.port or port) == port


def postgres_problem(url: str) -> str | None:
    """``None`` when the database at ``url`` accepts a connection, else the reason."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        lines = str(error).strip().splitlines()
        return lines[0] if lines else type(error).__name__
    return None


def postgres_database_create(url: str) -> bool:
    """Create the database ``url`` names when the server answers but it is missing.

    True when it was created. Raises ClusterError when the server does not answer.
    """
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    try:
        with psycopg.connect(maintenance, connect_timeout=3, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if found:
                return False
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as error:
        lines = str(error).strip().splitlines()
        raise ClusterError(
            f"PostgreSQL at {redacted(url)}: {lines[0] if lines else type(error).__name__}"
        ) from error
    return True


def redis_problem(url: str) -> str | None:
    """``None`` when Redis at ``url`` answers PING, else the reason."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        return str(error) or type(error).__name__
    finally:
        client.close()
    return None


def _postgres_start() -> list[str]:
    versions = sorted(
        (p.name for p in Path("/etc/postgresql").glob("*") if p.is_dir()),
        key=lambda v: [int(x) if x.isdigit() else 0 for x in v.split(".")],
    )
    if not versions or shutil.which("pg_ctlcluster") is None:
        raise ClusterError(
            "PostgreSQL is not answering at 127.0.0.1:5432 and this machine has no "
            "pg_ctlcluster to start it; start it, or set DATABASE_URL"
        )
    return ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"]


def _redis_start(directory: Path) -> list[str]:
    if shutil.which("redis-server") is None:
        raise ClusterError(
            "Redis is not answering at 127.0.0.1:6379 and this machine has no redis-server "
            "to start it; start it, or set REDIS_URL"
        )
    data = directory / "redis"
    data.mkdir(parents=True, exist_ok=True)
    return [
        "redis-server",
        "--daemonize",
        "yes",
        "--bind",
        "127.0.0.1",
        "-::1",
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(data),
        "--logfile",
        str(directory / "logs" / "redis-server.log"),
    ]


def _tcp_answers(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or HOST, parts.port or default_port), 3):
            return True
    except OSError:
        return False


def services_ensure(env: Mapping[str, str], directory: Path, say: Callable[[str], None]) -> None:
    """PostgreSQL and Redis answer, and the database exists; else ClusterError.

    A server that does not answer at its local default address (127.0.0.1:5432,
    127.0.0.1:6379) is started with the machine's commands, as ``.ci/run`` does, and left
    running afterwards; anywhere else the cluster stops and says so.
    """
    database_url, redis_url = env["DATABASE_URL"], env["REDIS_URL"]
    if urlsplit(database_url).scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ClusterError(
            f"DATABASE_URL: the cluster runs on PostgreSQL (postgres://…), got "
            f"{redacted(database_url)}"
        )
    if urlsplit(redis_url).scheme not in {"redis", "rediss"}:
        raise ClusterError(f"REDIS_URL: expected redis://host:port/db, got {redacted(redis_url)}")

    if not _tcp_answers(database_url, 5432):
        if not _is_local_default(database_url, 5432):
            raise ClusterError(f"PostgreSQL at {redacted(database_url)} is not answering")
        _service_start("PostgreSQL", _postgres_start(), directory, say)
        _service_wait("PostgreSQL", lambda: None if _tcp_answers(database_url, 5432) else "")
    problem = postgres_problem(database_url)
    if problem is not None:
        try:
            created = postgres_database_create(database_url)
        except ClusterError:
            created = False
        if created:
            say(f"created the database {urlsplit(database_url).path.lstrip('/')}")
        problem = postgres_problem(database_url)
    if problem is not None:
        raise ClusterError(f"PostgreSQL at {redacted(database_url)}: {problem}")

    if not _tcp_answers(redis_url, 6379):
        if not _is_local_default(redis_url, 6379):
            raise ClusterError(f"Redis at {redacted(redis_url)} is not answering")
        _service_start("Redis", _redis_start(directory), directory, say)
        _service_wait("Redis", lambda: redis_problem(redis_url))
    problem = redis_problem(redis_url)
    if problem is not None:
        raise ClusterError(f"Redis at {redacted(redis_url)}: {problem}")


def _service_start(name: str, argv: list[str], directory: Path, say: Callable[[str], None]) -> None:
    say(f"{name} is not answering; starting it: {' '.join(argv)} (it stays up afterwards)")
    with (directory / "logs" / "services.log").open("ab") as out:
        code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        raise ClusterError(f"could not start {name}: {argv[0]} exited {code} (logs/services.log)")


def _service_wait(name: str, problem: Callable[[], str | None]) -> None:
    end = time.monotonic() + SERVICE_WAIT_SECONDS
    last = problem()
    while last is not None and time.monotonic() < end:
        time.sleep(0.5)
        last = problem()
    if last is not None:
        raise ClusterError(f"{name} started but not answering after {SERVICE_WAIT_SECONDS:g} s")


# --- Before the processes: the set-up -------------------------------------------------------


class _Stopped(Exception):
    """SIGTERM during the set-up (Ctrl-C raises KeyboardInterrupt)."""


def _stop_setup(_signum: int, _frame: FrameType | None) -> None:
    raise _Stopped


def manage(env: Mapping[str, str], directory: Path, *args: str, show: bool = False) -> None:
    """Run ``manage.py args`` to its end; ClusterError when it fails."""
    log = directory / "logs" / "setup.log"
    print(f"cluster: manage.py {' '.join(args)}", flush=True)
    # subprocess.run kills the command if a stop interrupts the wait.
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    printed = (result.stdout + result.stderr).decode("utf-8", errors="replace")
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ manage.py {' '.join(args)}\n{printed}")
    if result.returncode != 0:
        tail = "\n".join(printed.splitlines()[-15:])
        raise ClusterError(
            f"manage.py {args[0]} failed (exit {result.returncode}); see {log}:\n{tail}"
        )
    if show:
        print(printed, end="" if printed.endswith("\n") else "\n", flush=True)


def process_environment(
    env: Mapping[str, str],
    *,
    directory: Path,
    port: int,
    asgi_ports: Sequence[int],
    concurrency: int,
    maxconn: int = BALANCER_MAXCONN,
) -> dict[str, str]:
    """``env`` with the variables deploy/supervisord.conf and haproxy.cfg read.

    ``maxconn`` is HAProxy's (``balancer_maxconn``), unless ``env`` names one.
    """
    first, second = asgi_ports
    full = dict(env)
    full.setdefault("SL5R_TRUSTED_PROXIES", BALANCER_SOURCE)
    full.update(
        SL5R_CLUSTER_DIR=str(directory),
        SL5R_BASE_DIR=str(BASE_DIR),
        SL5R_PYTHON=sys.executable,
        # Unique on the machine: two clusters (or a test's) never share a worker's name.
        SL5R_CLUSTER_NAME=str(port),
        SL5R_WORKER_CONCURRENCY=str(concurrency),
        SL5R_ASGI_HOST=HOST,
        SL5R_ASGI_1_PORT=str(first),
        SL5R_ASGI_2_PORT=str(second),
        SL5R_ASGI_1=f"{HOST}:{first}",
        SL5R_ASGI_2=f"{HOST}:{second}",
        SL5R_BALANCER_BIND=f"{HOST}:{port}",
        SL5R_BALANCER_SOURCE=full.get("SL5R_BALANCER_SOURCE") or BALANCER_SOURCE,
        SL5R_BALANCER_MAXCONN=full.get("SL5R_BALANCER_MAXCONN", "").strip() or str(maxconn),
    )
    return full


def executable(name: str, hint: str) -> str:
    """``name`` from the venv (beside this Python) or the PATH; ClusterError if neither."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise ClusterError(f"{name} is not installed: {hint}")
    return found


def supervisor(directory: Path) -> Any:
    """supervisord's XML-RPC interface on its socket in ``directory``."""
    from supervisor.xmlrpc import SupervisorTransport

    transport = SupervisorTransport(None, None, f"unix://{directory / 'supervisor.sock'}")
    return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport).supervisor


def supervisor_running(directory: Path) -> bool:
    try:
        supervisor(directory).getState()
    except (OSError, xmlrpc.client.Error):
        return False
    return True


def start(args: argparse.Namespace) -> int:
    directory = Path(args.dir).resolve()
    (directory / "logs").mkdir(parents=True, exist_ok=True)

    def say(text: str) -> None:
        print(f"cluster: {text}", flush=True)

    if supervisor_running(directory):
        say(
            f"a cluster is already running in {directory}; "
            f"stop it with: python -m sl5r.cluster stop --dir {args.dir}"
        )
        return EXIT_CONFIG
    signal.signal(signal.SIGTERM, _stop_setup)
    try:
        supervisord = executable("supervisord", "make install (requirements.txt)")
        executable("haproxy", "apt-get install haproxy (make cluster does, as root)")
        secret_key = os.environ.get("SECRET_KEY", "").strip() or secret_key_keep(directory)
        env = cluster_environment(os.environ, secret_key=secret_key)
        port = args.port or port_free()
        asgi_ports = [p or port_free() for p in args.asgi_ports]
        files = files_limit_raise()
        maxconn = balancer_maxconn(files)
        if maxconn < BALANCER_MAXCONN and not env.get("SL5R_BALANCER_MAXCONN", "").strip():
            say(
                f"HAProxy admits {maxconn} connections at once, not {BALANCER_MAXCONN}: a "
                f"process here may open {files} files (ulimit -Hn), and it needs two a "
                f'connection (docs/deployment.md, "The balancer")'
            )
        env = process_environment(
            env,
            directory=directory,
            port=port,
            asgi_ports=asgi_ports,
            concurrency=args.concurrency,
            maxconn=maxconn,
        )
        services_ensure(env, directory, say)
        manage(env, directory, "migrate", "--noinput")
        manage(env, directory, "collectstatic", "--noinput")
        manage(env, directory, "loadmap")
        if not args.no_demo:
            manage(env, directory, "loaddemo", "--base-url", f"http://{HOST}:{port}", show=True)
    except ClusterError as error:
        print(f"cluster: {error}", file=sys.stderr, flush=True)
        return EXIT_CONFIG
    except (KeyboardInterrupt, _Stopped):
        say("stopped during the set-up")
        return EXIT_OK
    (directory / "cluster.json").unlink(missing_ok=True)
    say(
        f"starting supervisord -c {SUPERVISORD_CONF.relative_to(BASE_DIR)} (its log: "
        f"{directory / 'logs' / 'supervisord.log'}); Ctrl-C stops the cluster"
    )
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.stdout.flush()
    os.execve(supervisord, [supervisord, "-c", str(SUPERVISORD_CONF)], env)


# --- After: the ready line ------------------------------------------------------------------


def _healthz(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _worker_answers(node: str) -> bool:
    """The worker named ``node`` answers a Celery ping on the broker."""
    from sl5r.celery import app

    try:
        return bool(app.control.ping(destination=[node], timeout=1.0))
    except Exception:  # the broker not answering yet is "not yet"
        return False


def ready(args: argparse.Namespace) -> int:
    """Run by supervisord: wait until every part answers, then say so once."""
    directory = Path(args.dir).resolve()
    env = os.environ
    balancer = f"http://{env['SL5R_BALANCER_BIND']}"
    asgi = [f"http://{env['SL5R_ASGI_1']}", f"http://{env['SL5R_ASGI_2']}"]
    node = f"sl5r-{env['SL5R_CLUSTER_NAME']}@{socket.gethostname()}"
    rpc = supervisor(directory)
    checks: list[tuple[str, Callable[[], bool]]] = [
        *((f"asgi-{n}", lambda url=url: _healthz(url)) for n, url in enumerate(asgi, 1)),
        ("balancer", lambda: _healthz(balancer)),
        ("worker", lambda: _worker_answers(node)),
    ]
    deadline = time.monotonic() + READY_SECONDS
    waiting = [name for name, _ in checks]
    while waiting:
        waiting = [name for name, answers in checks if name in waiting and not answers()]
        if waiting and time.monotonic() > deadline:
            print(
                f"cluster: not ready after {READY_SECONDS:g} s: {', '.join(waiting)} "
                f"(see {directory / 'logs'}); stopping",
                flush=True,
            )
            rpc.shutdown()
            return EXIT_FAILED
        if waiting:
            time.sleep(POLL_SECONDS)
    pids = {info["name"]: info["pid"] for info in rpc.getAllProcessInfo()}
    state = {
        "balancer": balancer,
        "asgi": asgi,
        "database_url": env["DATABASE_URL"],
        "redis_url": env["REDIS_URL"],
        "pids": {name: pids.get(name) for name in PROGRAMS},
        "logs": {name: str(directory / "logs" / f"{name}.log") for name in PROGRAMS},
        "supervisord": os.getppid(),
    }
    path = directory / "cluster.json"
    temporary = path.with_suffix(".json.tmp")
    # It may hold the database password: readable by its owner only.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(state, out, indent=2)
        out.write("\n")
    os.replace(temporary, path)
    print(f"cluster ready: balancer={balancer} asgi={','.join(asgi)}", flush=True)
    return EXIT_OK


def stop(args: argparse.Namespace) -> int:
    """``supervisorctl shutdown`` for the cluster in ``--dir``, waiting until it has exited."""
    directory = Path(args.dir).resolve()
    try:
        pid = int((directory / "supervisord.pid").read_text().strip())
        supervisor(directory).shutdown()
    except (OSError, ValueError, xmlrpc.client.Error):
        print(f"cluster: no cluster is running in {directory}", file=sys.stderr)
        return EXIT_FAILED
    end = time.monotonic() + args.timeout
    while process_alive(pid):
        if time.monotonic() > end:
            print(f"cluster: pid {pid} still running after {args.timeout:g} s", file=sys.stderr)
            return EXIT_FAILED
        time.sleep(0.2)
    print(f"cluster: stopped (pid {pid})")
    return EXIT_OK


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped) is not running; /proc says so.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["stop"], ["ready"]):
        parser = argparse.ArgumentParser(
            prog=f"python -m sl5r.cluster {argv[0]}",
            description="Stop a running cluster."
            if argv[0] == "stop"
            else "Wait until the cluster answers and say so (run by supervisord).",
        )
        parser.add_argument(
            "--dir", default=DEFAULT_DIR, help=f"its folder (default {DEFAULT_DIR})"
        )
        parser.add_argument(
            "--timeout", type=float, default=120.0, help="seconds to wait (default 120)"
        )
        sub = parser.parse_args(argv[1:])
        return stop(sub) if argv[0] == "stop" else ready(sub)
    parser = argparse.ArgumentParser(
        prog="python -m sl5r.cluster",
        description="Run the production shape on this machine: PostgreSQL, Redis, HAProxy "
        "in front of two ASGI processes, a Celery worker and one beat, kept by supervisord. "
        "`stop` stops it.",
    )
    parser.add_argument(
        "--dir", default=DEFAULT_DIR, help=f"state, logs and secret key (default {DEFAULT_DIR})"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        help="the balancer's port; 0 picks a free one (default 8000)",
    )
    parser.add_argument(
        "--asgi-ports",
        type=ports_parse,
        default=[8001, 8002],
        metavar="A,B",
        help="the two ASGI processes' ports; 0 picks a free one (default 8001,8002)",
    )
    parser.add_argument("--no-demo", action="store_true", help="do not load the demo tournament")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=worker_concurrency_default(),
        help="the Celery worker's processes, each resolving one tournament at a time "
        f"(default: one per core, at least 2; here {worker_concurrency_default()})",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port < 65536:
        parser.error(f"--port: {args.port} is not a port number")
    if args.concurrency < 1:
        parser.error("--concurrency: at least 1")
    return start(args)


if __name__ == "__main__":
    sys.exit(main())
