"""``kvert vpa updater``: upstream VPA 1.8's updater flags with their defaults
(pkg/updater/config/config.go DefaultUpdaterConfig, common/flags.go), what they configure, and
the command serving /metrics and /health-check on --address against a ``kvert up``."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest

from kvert.cli.main import build_parser
from kvert.cli.vpa_updater import serve_updater, updater_options

from tests.e2e.conftest import KvertUp, free_port


def parse(*args: str):
    return build_parser().parse_args(["vpa", "updater", *args])


def test_defaults_are_upstreams():
    # upstream: DefaultUpdaterConfig (config.go) and DefaultCommonConfig (common/flags.go)
    a = parse()
    assert (a.interval, a.min_replicas, a.eviction_tolerance, a.eviction_rate_limit, a.eviction_rate_burst) == \
        (60.0, 2, 0.5, -1.0, 1)
    assert a.address == ":8943" and a.use_admission_controller_status is True
    assert a.in_place_skip_disruption_budget is False
    assert (a.admission_controller_status_lease_name, a.admission_controller_status_lease_namespace,
            a.admission_controller_status_lease_timeout) == ("vpa-admission-controller", "", 60.0)
    assert (a.pod_update_threshold, a.in_recommendation_bounds_eviction_lifetime_threshold,
            a.evict_after_oom_threshold) == (0.1, 12 * 3600.0, 600.0)
    assert (a.kube_api_qps, a.kube_api_burst, a.vpa_object_namespace, a.ignored_vpa_object_namespaces) == \
        (50.0, 100.0, "", "")
    assert a.feature_gates == ""


def test_flags_configure_the_updater(monkeypatch):
    monkeypatch.delenv("NAMESPACE", raising=False)
    a = parse("--feature-gates", "InPlace=true,CPUStartupBoost=true", "--in-place-skip-disruption-budget",
              "--use-admission-controller-status=false", "--eviction-rate-limit", "2", "--eviction-rate-burst", "3",
              "--ignored-vpa-object-namespaces", "kube-system, other", "--admission-controller-status-lease-timeout",
              "2m")
    options = updater_options(a)
    assert options["gates"].in_place and options["gates"].cpu_startup_boost and not options["gates"].per_vpa_config
    assert options["in_place_skip_disruption_budget"] is True and options["use_admission_controller_status"] is False
    assert (options["eviction_rate_limit"], options["eviction_rate_burst"]) == (2.0, 3)
    assert options["ignored_vpa_object_namespaces"] == ("kube-system", "other")
    assert options["admission_controller_status_lease_timeout"] == 120.0
    # upstream's namespace of the status Lease: the flag, else $NAMESPACE, else kube-system
    assert options["admission_controller_status_lease_namespace"] == "kube-system"
    monkeypatch.setenv("NAMESPACE", "vpa")
    assert updater_options(a)["admission_controller_status_lease_namespace"] == "vpa"
    assert updater_options(parse("--admission-controller-status-lease-namespace", "x"))[
        "admission_controller_status_lease_namespace"] == "x"


def test_bad_combinations_are_refused_with_upstreams_messages():
    # upstream: ValidateCommonConfig, ValidateUpdaterConfig
    with pytest.raises(ValueError, match="--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                                         "exclusive and can't be set together."):
        updater_options(parse("--vpa-object-namespace", "a", "--ignored-vpa-object-namespaces", "b"))
    with pytest.raises(SystemExit):                  # a duration flag refuses 0 when parsed
        parse("--admission-controller-status-lease-timeout", "0")
    with pytest.raises(SystemExit):
        parse("--use-admission-controller-status=maybe")


def test_the_command_serves_metrics_and_health(tmp_path):
    # upstream: main.go server.Initialize(healthCheck, --address), metrics_updater.Register()
    up = KvertUp(tmp_path / "cluster", args=("--nodes", "0", "--no-vpa")).start()
    port = free_port()
    try:
        args = parse("--kubeconfig", str(up.kubeconfig), "--address", f"127.0.0.1:{port}",
                     "--updater-interval", "1s", "--use-admission-controller-status=false")

        async def go():
            ready, stop = asyncio.Event(), asyncio.Event()
            task = asyncio.ensure_future(serve_updater(args, ready, stop))
            await asyncio.wait_for(ready.wait(), 20)
            await asyncio.sleep(2.5)                   # a few passes

            def fetch(path: str) -> tuple[int, str]:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                    return r.status, r.read().decode()
            metrics = await asyncio.to_thread(fetch, "/metrics")
            health = await asyncio.to_thread(fetch, "/health-check")
            stop.set()
            assert await asyncio.wait_for(task, 20) == 0
            return metrics, health
        (status, text), health = asyncio.run(go())
        assert status == 200 and 'vpa_updater_execution_latency_seconds_count{step="total"}' in text
        assert health == (200, "OK")
    finally:
        up.stop()


def test_kube_api_qps_and_burst_pace_requests():
    # client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter(qps, burst)), which upstream's
    # --kube-api-qps / --kube-api-burst configure: burst requests at once, then qps a second
    from kvert.clock import VirtualClock
    from kvert.vpa.throttle import ThrottledClient

    from tests.kubelet.test_agent_support import cluster

    async def go(clock: VirtualClock, qps: float) -> float:
        client = ThrottledClient(await cluster(clock), clock, qps, 2)
        start = clock.now()
        for _ in range(6):
            await client.list("pods", namespace="default")
        return clock.now() - start
    for qps, took in ((10.0, 0.4), (0.0, 0.0)):
        clock = VirtualClock()
        assert clock.run(go(clock, qps)) == pytest.approx(took), qps
