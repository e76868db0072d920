"""The files an operator deploys (``deploy/``), checked by the tools that will read them:
``haproxy -c`` for the balancer, supervisor's own parser for ``make cluster``'s processes,
``systemd-analyze verify`` for the units of a real server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from supervisor.options import ServerOptions

from sl5r.cluster import (
    BALANCER_FILES_RESERVE,
    BALANCER_MAXCONN,
    HAPROXY_CONF,
    PROGRAMS,
    SUPERVISORD_CONF,
    process_environment,
)
from tests.service_checks import require_service

BASE_DIR = Path(__file__).resolve().parents[2]
SYSTEMD = BASE_DIR / "deploy" / "systemd"
ENV_FILES = ("sl5r.env.example", "balancer.env.example")


def tool(name: str) -> str:
    found = shutil.which(name)
    require_service(name, None if found else f"{name} is not installed")
    assert found is not None
    return found


def env_file(name: str) -> dict[str, str]:
    lines = (BASE_DIR / "deploy" / name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))


def haproxy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SL5R_")}
    return subprocess.run(
        [tool("haproxy"), "-c", "-f", str(HAPROXY_CONF)],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_balancer_configuration_passes_haproxy_check_as_make_cluster_fills_it(
    tmp_path: Path,
) -> None:
    env = process_environment(
        {}, directory=tmp_path, port=8000, asgi_ports=[8001, 8002], concurrency=2
    )

    result = haproxy_check(env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration file is valid" in result.stdout
    # Clean: HAProxy warns of what it would run differently than written.
    assert "WARNING" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_balancer_configuration_passes_haproxy_check_as_a_server_fills_it(
    tmp_path: Path,
) -> None:
    """With deploy/balancer.env.example, as Debian's haproxy.service reads it: another
    machine's ASGI processes, a port of its own and a user to run as, TLS ended with the
    site's certificate (HAProxy reads it when it checks: one is made here in its place)."""
    env = env_file("balancer.env.example")
    key, cert = tmp_path / "site.key", tmp_path / "site.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=referee.example.org"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    (tmp_path / "site.pem").write_bytes(cert.read_bytes() + key.read_bytes())
    assert env["SL5R_BALANCER_CERT"] == "/etc/haproxy/site.pem"
    env["SL5R_BALANCER_CERT"] = str(tmp_path / "site.pem")
    result = haproxy_check(env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_balancer_takes_more_asgi_processes_from_the_environment_alone() -> None:
    """A league's sizing wants about four processes: SL5R_ASGI_3 … _8 are servers of every
    backend when set (a bad one is caught in each), and nothing when not."""
    four = haproxy_check({"SL5R_ASGI_3": "127.0.0.1:8003", "SL5R_ASGI_4": "127.0.0.1:8004"})
    assert four.returncode == 0, four.stdout + four.stderr

    wrong = haproxy_check({"SL5R_ASGI_8": "not an address"})
    assert wrong.returncode != 0
    for backend in ("asgi", "asgi_writes", "asgi_ws", "asgi_reachable"):
        assert f"'server {backend}/asgi-8'" in wrong.stdout + wrong.stderr, backend


def test_a_mistake_in_the_balancer_environment_is_caught_by_the_check() -> None:
    """The check is no formality: an address that is not one fails it."""
    result = haproxy_check({"SL5R_ASGI_1": "not an address"})

    assert result.returncode != 0
    assert "asgi-1" in result.stdout + result.stderr


def test_the_process_manager_configuration_names_each_process_once_with_one_beat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """supervisor's own parser reads deploy/supervisord.conf with make cluster's
    variables: every program restarts on death and logs to its own file; exactly one beat;
    the balancer stops first and the worker last."""
    env = process_environment(
        {}, directory=tmp_path, port=8000, asgi_ports=[8001, 8002], concurrency=2
    )
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "logs").mkdir()  # made by python -m sl5r.cluster before supervisord starts
    options = ServerOptions()
    options.realize(args=["-c", str(SUPERVISORD_CONF)])
    programs = {
        process.name: process
        for group in options.process_group_configs
        for process in group.process_configs
    }

    assert sorted(programs) == sorted([*PROGRAMS, "ready"])
    assert [name for name in programs if "beat" in programs[name].command] == ["beat"]
    for name in PROGRAMS:
        assert programs[name].autorestart, name
        assert programs[name].stdout_logfile == str(tmp_path / "logs" / f"{name}.log")
    assert not programs["ready"].autorestart
    stop_order = sorted(PROGRAMS, key=lambda name: -programs[name].priority)
    assert stop_order[0] == "balancer" and stop_order[-1] == "worker"
    assert programs["asgi-1"].command.endswith("--port 8001")


def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    """The units of deploy/systemd as a server would install them (with this venv's
    Python in place of /srv/sl5r's, which this machine does not have)."""
    verify = tool("systemd-analyze")
    units = []
    for unit in [*SYSTEMD.glob("*.service"), *SYSTEMD.glob("*.target")]:
        text = unit.read_text().replace("/srv/sl5r/.venv/bin/python", sys.executable)
        (tmp_path / unit.name).write_text(text)
        units.append(tmp_path / unit.name.replace("@.service", "@8001.service"))
    (tmp_path / "sl5r-asgi@8001.service").write_text((tmp_path / "sl5r-asgi@.service").read_text())

    result = subprocess.run(
        [verify, "verify", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=120,
    )

    problems = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        # The sl5r user and /srv/sl5r exist on the server, not on this machine.
        if line.strip() and "sl5r" in line and "/srv/sl5r" not in line
    ]
    assert result.returncode == 0 and not problems, result.stdout + result.stderr


def test_the_example_environment_files_name_only_settings_that_exist() -> None:
    """Every variable in the examples is one sl5r/settings.py, haproxy.cfg or a unit reads."""
    read = (
        (BASE_DIR / "sl5r" / "settings.py").read_text()
        + (BASE_DIR / "sl5r" / "env.py").read_text()
        + HAPROXY_CONF.read_text()
        + "".join(unit.read_text() for unit in SYSTEMD.glob("*.service"))
    )

    unknown = [
        name
        for env in ENV_FILES
        for name in env_file(env)
        if name != "CONFIG" and f'"{name}"' not in read and f"${{{name}" not in read
    ]

    assert unknown == []


def limit_nofile(unit: Path) -> int:
    found = re.findall(r"^LimitNOFILE=(\d+)$", unit.read_text(), re.MULTILINE)
    assert len(found) == 1, f"{unit.name}: one LimitNOFILE"
    return int(found[0])


def test_the_units_give_the_balancer_and_the_asgi_processes_the_files_a_league_needs() -> None:
    """haproxy.cfg's maxconn is the one make cluster sizes for; HAProxy needs two files a
    connection (it refuses to start without them), and an ASGI process one per websocket
    and connection, all of them while the other process restarts."""
    maxconn = re.findall(
        r'^\s*maxconn "\$\{SL5R_BALANCER_MAXCONN-(\d+)\}"$', HAPROXY_CONF.read_text(), re.MULTILINE
    )

    assert maxconn == [str(BALANCER_MAXCONN)]
    haproxy_files = limit_nofile(SYSTEMD / "haproxy.service.d" / "sl5r.conf")
    assert haproxy_files >= 2 * BALANCER_MAXCONN + BALANCER_FILES_RESERVE
    assert limit_nofile(SYSTEMD / "sl5r-asgi@.service") >= BALANCER_MAXCONN


def test_the_worker_unit_leaves_its_processes_to_the_app_default() -> None:
    """Without --concurrency, sl5r/celery.py gives the worker a process per core (at least
    two); a number written in the unit would hold a bigger machine to it."""
    unit = (SYSTEMD / "sl5r-worker.service").read_text()
    command = next(line for line in unit.splitlines() if line.startswith("ExecStart="))

    assert " worker " in command
    assert "--concurrency" not in command and " -c " not in command
