"""The VPA components' gates, metrics and health endpoint (kvert.vpa.features, .instruments,
.serving) against upstream VPA 1.8's definitions."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.api.prometheus import parse_exposition
from kvert.clock import VirtualClock
from kvert.vpa.features import VPA_GATES, FeatureGateError, VpaGates, gates_help
from kvert.vpa.instruments import AdmissionMetrics, HealthCheck, RecommenderMetrics, UpdaterMetrics, vpa_size_log2
from kvert.vpa.serving import MetricsServer, parse_address


def test_gates_have_upstreams_names_and_defaults():
    # upstream: pkg/features/versioned_features.go (all three alpha, default false) and
    # docs/flags.md's feature-gates row (AllAlpha, AllBeta, CPUStartupBoost, InPlace, PerVPAConfig)
    assert {name: (default, stage) for name, (default, stage, _) in VPA_GATES.items()} == {
        "CPUStartupBoost": (False, "alpha"), "InPlace": (False, "alpha"), "PerVPAConfig": (False, "alpha")}
    assert gates_help() == ("AllAlpha=true|false (ALPHA - default=false), AllBeta=true|false (BETA - default=false), "
                            "CPUStartupBoost=true|false (ALPHA - default=false), "
                            "InPlace=true|false (ALPHA - default=false), PerVPAConfig=true|false (ALPHA - default=false)")
    gates = VpaGates()
    assert not (gates.in_place or gates.cpu_startup_boost or gates.per_vpa_config)


def test_all_alpha_turns_on_alpha_gates_unless_one_is_set_by_name():
    gates = VpaGates.parse("AllAlpha=true,InPlace=false")
    assert gates.cpu_startup_boost and gates.per_vpa_config and not gates.in_place
    assert not VpaGates.parse("AllBeta=true").in_place


def test_gate_errors_name_the_entry():
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: InPlaceOrRecreate"):
        VpaGates.parse("InPlaceOrRecreate=true")    # GA in 1.6, its gate removed upstream
    with pytest.raises(FeatureGateError, match="missing bool value for InPlace"):
        VpaGates.parse("InPlace")
    with pytest.raises(FeatureGateError, match=r"invalid value of InPlace=yes"):
        VpaGates.parse("InPlace=yes")


@given(st.dictionaries(st.sampled_from(sorted(VPA_GATES)), st.booleans()))
def test_flag_value_round_trips(gates):
    parsed = VpaGates.parse(VpaGates(gates).flag_value())
    assert all(parsed.enabled(name) == gates.get(name, False) for name in VPA_GATES)


@pytest.mark.parametrize("pods,log2", [(0, "0"), (1, "0"), (2, "1"), (5, "2"), (10, "3"), (20, "4"),
                                       (1 << 25, "20")])
def test_vpa_size_log2(pods, log2):
    # upstream: TestAddEvictedPod, TestRecordFailedEviction (pkg/utils/metrics/updater/updater_test.go):
    # 5 -> "2", 10 -> "3", 2 -> "1", 20 -> "4"; GetVpaSizeLog2 caps at MaxVpaSizeLog = 20
    assert vpa_size_log2(pods) == log2


def _names(metrics) -> set[str]:
    return {s.name for s in parse_exposition(metrics.exposition().decode())}


def test_metric_names_as_upstream():
    # upstream: pkg/utils/metrics/{updater,recommender,admission}/*.go (namespace vpa_<component>)
    upd = UpdaterMetrics()
    upd.evicted_pods.labels("2", "Recreate", "vpa-5", "vpa-ns-5").inc()
    upd.in_place_updated_pods.labels("2", "vpa-5", "vpa-ns-5").inc(0)
    upd.failed_in_place_update_attempts.labels("1", "some_reason", "vpa-2", "vpa-2-ns").inc()
    upd.in_place_updatable_pods.labels("2").set(3)
    names = _names(upd)
    assert {"vpa_updater_evicted_pods_total", "vpa_updater_in_place_updated_pods_total",
            "vpa_updater_failed_in_place_update_attempts_total", "vpa_updater_in_place_updatable_pods_total"} <= names
    assert not any(n.endswith("_created") for n in names)     # client_golang writes none
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in parse_exposition(upd.exposition().decode())}
    assert samples[("vpa_updater_evicted_pods_total", (("update_mode", "Recreate"), ("vpa_name", "vpa-5"),
                                                       ("vpa_namespace", "vpa-ns-5"), ("vpa_size_log2", "2")))] == 1
    # upstream: TestInitCountersAreZero: a counter initialised is there at 0
    assert samples[("vpa_updater_in_place_updated_pods_total", (("vpa_name", "vpa-5"), ("vpa_namespace", "vpa-ns-5"),
                                                               ("vpa_size_log2", "2")))] == 0

    rec = RecommenderMetrics()
    rec.vpa_objects.labels("Recreate", "true", "v1", "true", "false").set(1)
    rec.aggregate_container_states.set(4)
    assert {"vpa_recommender_vpa_objects_count", "vpa_recommender_aggregate_container_states_count"} <= _names(rec)

    adm = AdmissionMetrics()
    clock = VirtualClock(100.0)
    with adm.admission(clock, "Pod") as status:
        status[0] = "applied"
    adm.admission_pods.labels("true").inc()
    names = _names(adm)
    assert {"vpa_admission_controller_admission_pods_total",
            "vpa_admission_controller_admission_latency_seconds_count"} <= names


def test_registries_are_per_instance():
    a, b = UpdaterMetrics(), UpdaterMetrics()
    a.evicted_pods.labels("0", "Recreate", "x", "y").inc()
    assert "vpa_updater_evicted_pods_total" not in _names(b)


def test_health_check_times_out_only_once_monitoring():
    # upstream: metrics.HealthCheck (healthy until StartMonitoring, then within activityTimeout)
    clock = VirtualClock(0.0)
    health = HealthCheck(clock, 60.0)
    clock.advance(3600)
    assert health.check()[0]
    health.start_monitoring()
    clock.advance(59)
    assert health.check()[0]
    clock.advance(2)
    healthy, ago = health.check()
    assert not healthy and ago == 61
    health.update_last_activity()
    assert health.check()[0]


def test_parse_address():
    assert parse_address(":8942") == ("0.0.0.0", 8942)
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:8943") == ("::1", 8943)
    with pytest.raises(ValueError, match="--address '8942'"):
        parse_address("8942")


def test_metrics_server_serves_metrics_and_health():
    async def main():
        clock = VirtualClock(0.0)
        health = HealthCheck(clock, 10.0)
        metrics = UpdaterMetrics()
        metrics.in_place_updatable_pods.labels("1").set(2)
        server = MetricsServer(metrics, health, "127.0.0.1:0")
        await server.start()
        try:
            async with aiohttp.ClientSession() as s:
                base = f"http://127.0.0.1:{server.port}"
                async with s.get(base + "/metrics") as r:
                    text = await r.text()
                    assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                assert 'vpa_updater_in_place_updatable_pods_total{vpa_size_log2="1"} 2.0' in text
                async with s.get(base + "/health-check") as r:
                    assert (r.status, await r.text()) == (200, "OK")
                health.start_monitoring()
                clock.advance(90)
                async with s.get(base + "/health-check") as r:
                    assert r.status == 500
                    assert (await r.text()).startswith("Error: last activity more than 1m30s ago")
        finally:
            await server.stop()
    asyncio.run(main())
