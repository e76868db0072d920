"""The phones' host as the tests drive it: ``tests.hosts.phone`` running there, asked over its
standard input, answered on its standard output."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from typing import IO, Any

from tests.hosts.deployment import ROOT, SITE, Deployment, base_env

ANSWER_SECONDS = 180.0


class Phones:
    """The phones' host: ``tests.hosts.phone`` running there, asked over its stdin."""

    def __init__(self, deployment: Deployment) -> None:
        network = deployment.network
        network.names_resolve("phones", {SITE: network["balancer"].address})
        self.process = subprocess.Popen(
            network["phones"].command(
                [sys.executable, "-m", "tests.hosts.phone", f"https://{SITE}",
                 str(deployment.certificate)]
            ),
            env=base_env(), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.ids = itertools.count(1)
        self.answers: dict[int, dict[str, Any]] = {}
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        for line in stdout:
            answer = json.loads(line)
            with self.arrived:
                self.answers[answer.pop("id")] = answer
                self.arrived.notify_all()
        with self.arrived:
            self.arrived.notify_all()

    def send(self, op: str, **arguments: Any) -> int:
        ident = next(self.ids)
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps({"id": ident, "op": op, **arguments}) + "\n")
        stdin.flush()
        return ident

    def answer(self, ident: int, timeout: float = ANSWER_SECONDS) -> dict[str, Any]:
        with self.arrived:
            done = self.arrived.wait_for(
                lambda: ident in self.answers or self.process.poll() is not None, timeout
            )
            if ident in self.answers:
                answer = self.answers.pop(ident)
                assert "error" not in answer, answer["error"]
                return answer
        stderr = self.process.stderr.read() if self.process.poll() is not None else ""  # type: ignore[union-attr]
        raise AssertionError(f"the phones did not answer ({done=}): {stderr}")

    def ask(self, op: str, timeout: float = ANSWER_SECONDS, **arguments: Any) -> dict[str, Any]:
        return self.answer(self.send(op, **arguments), timeout)

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
