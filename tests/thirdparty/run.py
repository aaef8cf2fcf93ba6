"""Run a third-party client suite against a fresh ``kvert up`` (see the package docstring).

``python -m tests.thirdparty.run [SUITE] [--source DIR] [TEST_ID ...] [-- PYTEST_OPTION ...]``
prints one ``OUTCOME test-id`` line per test and exits non-zero when any test failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_CACHE = REPO / ".venv" / "thirdparty"

KR8S_VERSION = "0.20.15"
# What the suites import, pinned so that a measured count stays comparable.
REQUIREMENTS = (
    f"kr8s=={KR8S_VERSION}", "pytest==9.2.0", "pytest-asyncio==1.5.0", "pytest-timeout==2.4.0",
    "trio==0.35.0", "kubernetes==37.0.2", "lightkube==1.0.1", "pykube-ng==23.6.0",
    "kubernetes-asyncio==36.1.0", "kubernetes-validate==1.37.0",
)
SUITES = ("kr8s", "python-client", "lightkube")


class Unavailable(Exception):
    """A suite's sources or dependencies could not be had (no network, no checkout)."""


@dataclass
class SuiteResult:
    # node id (relative to the suite's test directory) -> passed|failed|error|skipped|xfailed
    outcomes: dict[str, str] = field(default_factory=dict)
    output: str = ""

    def failed(self) -> list[str]:
        return [t for t, o in self.outcomes.items() if o in ("failed", "error")]


def _pip(python: Path, *args: str) -> None:
    result = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise Unavailable(f"pip {' '.join(args)} failed:\n{result.stderr[-2000:]}")


def prepare_venv(cache: Path = DEFAULT_CACHE) -> Path:
    """The suites' virtualenv with REQUIREMENTS, made once; its python."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    stamp = venv / "kvert-requirements.txt"
    wanted = "\n".join(REQUIREMENTS)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    made = subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--clear",
                           str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        raise Unavailable(f"no virtualenv for the suites: {made.stderr[-2000:]}")
    _pip(python, "install", *REQUIREMENTS)
    stamp.write_text(wanted)
    return python


def fetch_kr8s(cache: Path = DEFAULT_CACHE, python: Path | None = None) -> Path:
    """kr8s' sdist (which holds its tests) downloaded and unpacked once; its directory."""
    root = cache / f"kr8s-{KR8S_VERSION}"
    if (root / "kr8s" / "tests").is_dir():
        return root
    sdist = cache / f"kr8s-{KR8S_VERSION}.tar.gz"
    if not sdist.exists():
        _pip(python or Path(sys.executable), "download", "--no-deps", "--no-binary", ":all:",
             f"kr8s=={KR8S_VERSION}", "-d", str(cache))
    with tarfile.open(sdist) as tar:
        # the "data" filter (no links out, no absolute paths) where this Python has it
        tar.extractall(cache, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return root


def _python_client_dir(source: Path, python: Path) -> Path:
    """kubernetes/e2e_test imports itself as ``kubernetes.e2e_test``: it is linked into the
    installed package of the suites' virtualenv."""
    tests = source / "kubernetes" / "e2e_test"
    if not tests.is_dir():
        raise Unavailable(f"{tests} not found (--source is a kubernetes-client/python checkout)")
    package = Path(subprocess.check_output(
        [str(python), "-c", "import kubernetes, os; print(os.path.dirname(kubernetes.__file__))"],
        text=True).strip())
    link = package / "e2e_test"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(tests.resolve(), target_is_directory=True)
    return link


def pytest_command(suite: str, source: Path, python: Path, ini: Path) -> tuple[list[str], Path]:
    """The pytest command line running ``suite`` from ``source``, and its working directory."""
    base = [str(python), "-m", "pytest", "-c", str(ini), "-p", "kvert_cluster_plugin",
            "-p", "no:cacheprovider", "-rfE", "--tb=short"]
    if suite == "kr8s":
        # --confcutdir leaves out the sdist's top-level conftest.py (a kind cluster)
        tests = source / "kr8s" / "tests"
        return base + ["--rootdir", str(tests), "--confcutdir", str(source / "kr8s"),
                       str(tests)], source
    if suite == "python-client":
        # its tests read their YAML files relative to the checkout's root
        tests = _python_client_dir(source, python)
        return base + ["--rootdir", str(tests), str(tests)], source
    tests = source / "e2e-tests"
    if not tests.is_dir():
        raise Unavailable(f"{tests} not found (--source is a gtsystem/lightkube checkout)")
    return base + ["--rootdir", str(tests), str(tests)], tests


def run_suite(suite: str, source: Path, kubeconfig: Path, kubectl: str, python: Path,
              tests: list[str] = (), options: list[str] = (), timeout: int = 60) -> SuiteResult:
    """Run ``suite`` (only ``tests`` when given: pytest ids relative to its test directory)
    with pytest ``options`` against the cluster of ``kubeconfig``."""
    with tempfile.TemporaryDirectory(prefix="kvert-thirdparty-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\nasyncio_mode = auto\nxfail_strict = true\n"
                       f"timeout = {timeout}\n")
        outcomes = Path(tmp) / "outcomes.json"
        command, cwd = pytest_command(suite, source, python, ini)
        if tests:
            command = command[:-1] + [str(Path(command[-1]) / t) for t in tests]
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KVERT_KUBECTL": kubectl,
               "KVERT_OUTCOMES": str(outcomes), "PYTHONPATH": str(HERE), "HOME": tmp}
        proc = subprocess.run(command + list(options), cwd=cwd, env=env,
                              capture_output=True, text=True)
        result = SuiteResult(output=proc.stdout + proc.stderr)
        if outcomes.exists():
            result.outcomes = json.loads(outcomes.read_text())
        return result


def _start_system_pod(kubeconfig: Path, kubectl: str) -> None:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    for args in (("run", "system-stand-in", "--image=registry.k8s.io/pause:3.10"),
                 ("wait", "--for=condition=Ready", "pod/system-stand-in", "--timeout=60s")):
        subprocess.run([kubectl, "-n", "kube-system", *args], env=env, check=True,
                       capture_output=True)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import KvertUp, kubectl_path

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suite", nargs="?", default="kr8s", choices=SUITES)
    p.add_argument("--source", type=Path, help="checkout holding the suite (python-client: "
                   "kubernetes/e2e_test; lightkube: e2e-tests); kr8s: default its sdist")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                   help=f"where the virtualenv and sdist are kept (default {DEFAULT_CACHE})")
    p.add_argument("--timeout", type=int, default=60, help="per-test timeout in seconds")
    p.add_argument("--kvert-arg", action="append", default=[], help="extra `kvert up` argument")
    p.add_argument("--stand-in-system-pods", action="store_true",
                   help="run a pause pod in kube-system first, as kind's system pods are, to "
                   "measure the tests that only need some pod there (not done in CI)")
    p.add_argument("tests", nargs="*", help="test ids relative to the suite's test directory; "
                   "pytest options follow a `--`")
    argv = sys.argv[1:] if argv is None else argv
    pytest_options = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_intermixed_args(argv[:argv.index("--")] if "--" in argv else argv)

    kubectl = kubectl_path()
    if kubectl is None:
        p.error("kubectl not found")
    args.cache.mkdir(parents=True, exist_ok=True)
    try:
        python = prepare_venv(args.cache)
        source = args.source or (fetch_kr8s(args.cache, python) if args.suite == "kr8s" else None)
        if source is None:
            raise Unavailable(f"the {args.suite} suite is not packaged: pass --source DIR")
    except Unavailable as e:
        print(e, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kvert-up-") as data:
        up = KvertUp(Path(data), args=tuple(args.kvert_arg)).start()
        try:
            if args.stand_in_system_pods:
                _start_system_pod(up.kubeconfig, kubectl)
            result = run_suite(args.suite, source, up.kubeconfig, kubectl, python,
                               args.tests, pytest_options, args.timeout)
        finally:
            up.stop()
    print(result.output)
    for test, outcome in sorted(result.outcomes.items()):
        print(f"{outcome.upper():8} {test}")
    counts = {o: list(result.outcomes.values()).count(o) for o in sorted(set(result.outcomes.values()))}
    print(f"{args.suite}: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    return 1 if result.failed() or not result.outcomes else 0


if __name__ == "__main__":
    sys.exit(main())
