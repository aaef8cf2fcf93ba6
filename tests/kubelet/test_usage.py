import json

import numpy as np
import pytest

from kvert.kubelet.usage import (DEFAULT_CPU_MILLI, DEFAULT_MEMORY_BYTES, USAGE_ANNOTATION, Constant,
                                 ContainerUsage, Diurnal, Linear, Spikes, UsageBatch, UsageError,
                                 container_annotations, container_usage_spec, parse_container_usage,
                                 parse_profile, parse_usage_annotation, pod_usage, usage_at, usage_for_container,
                                 usage_many)

MI = 2**20
DAY = 86400


def test_constant_and_bare_quantities():
    u = parse_container_usage({"cpu": "250m", "memory": "128Mi"})
    assert usage_at(u, 0) == (250, 128 * MI)
    assert usage_at(u, 1e9) == (250, 128 * MI)
    assert parse_profile("cpu", 0.5) == Constant(value=500.0)
    assert parse_profile("cpu", {"profile": "constant", "value": "2"}).value == 2000


def test_diurnal():
    p = parse_profile("cpu", {"profile": "diurnal", "min": "100m", "max": "800m", "period": "24h"})
    assert isinstance(p, Diurnal) and p.anchor == "clock"
    u = ContainerUsage(cpu=p)
    assert usage_at(u, 0)[0] == 100
    assert usage_at(u, DAY / 2)[0] == 800
    assert usage_at(u, DAY / 4)[0] == 450
    assert usage_at(u, DAY)[0] == 100
    shifted = parse_profile("cpu", {"profile": "diurnal", "min": "0", "max": "1", "period": "1h", "phase": "30m"})
    assert usage_at(ContainerUsage(cpu=shifted), 0)[0] == 1000


def test_spikes():
    p = parse_profile("memory", {"profile": "spikes", "base": "100Mi", "peak": "1Gi", "every": "1h",
                                 "duration": "5m", "offset": "10m"})
    assert isinstance(p, Spikes)
    u = ContainerUsage(memory=p)
    assert usage_at(u, 0)[1] == 100 * MI
    assert usage_at(u, 600)[1] == 1024 * MI
    assert usage_at(u, 899)[1] == 1024 * MI
    assert usage_at(u, 900)[1] == 100 * MI
    assert usage_at(u, 3600 + 700)[1] == 1024 * MI


def test_linear_leak_is_anchored_at_start():
    p = parse_profile("memory", {"profile": "linear", "start": "100Mi", "rate": "1Mi/min"})
    assert isinstance(p, Linear) and p.anchor == "start" and p.rate == pytest.approx(MI / 60)
    u = ContainerUsage(memory=p)
    assert usage_at(u, 600, started_at=0)[1] == 110 * MI
    assert usage_at(u, 1600, started_at=1000)[1] == 110 * MI   # a restart starts over
    assert usage_at(u, 500, started_at=1000)[1] == 100 * MI   # before the start: the start value
    capped = parse_profile("memory", {"profile": "linear", "start": "1Mi", "rate": "1Mi/s", "max": "10Mi"})
    assert usage_at(ContainerUsage(memory=capped), 100)[1] == 10 * MI
    for text, per_second in [("10m/h", 10 / 3600), ("5Mi/30s", 5 * MI / 30), ("2Mi/d", 2 * MI / DAY),
                             ("1Mi/minute", MI / 60), (3, 3)]:
        resource = "cpu" if text in ("10m/h",) else "memory"
        got = parse_profile(resource, {"profile": "linear", "start": 0, "rate": text}).rate
        assert got == pytest.approx(per_second * (1000 if text == 3 and resource == "cpu" else 1))


def test_replay_step_linear_and_loop():
    spec = {"replay": {"samples": [[0, "100m", "100Mi"], ["1m", "200m", "200Mi"], [120, "300m", "100Mi"]]}}
    step = parse_container_usage(spec)
    assert usage_at(step, 0) == (100, 100 * MI)
    assert usage_at(step, 59) == (100, 100 * MI)
    assert usage_at(step, 60) == (200, 200 * MI)
    assert usage_at(step, 1000) == (300, 100 * MI)
    spec["replay"]["interpolation"] = "linear"
    linear = parse_container_usage(spec)
    assert usage_at(linear, 30) == (150, 150 * MI)
    assert usage_at(linear, 90) == (250, 150 * MI)
    spec["replay"]["loop"] = True
    looped = parse_container_usage(spec)
    assert usage_at(looped, 120 + 30) == (150, 150 * MI)
    objects = parse_container_usage({"replay": {"samples": [{"t": 0, "cpu": 1, "memory": "1Mi"}]}})
    assert usage_at(objects, 5) == (1000, MI)
    # anchored at the container's start by default
    assert usage_at(step, 1060, started_at=1000) == (200, 200 * MI)


def test_noise_is_deterministic_and_bounded():
    u = parse_container_usage({"cpu": {"profile": "constant", "value": "1", "noise": 0.2, "noiseInterval": "10s"}},
                              name="app")
    t = np.arange(0, 10_000, 5.0)
    cpu, _ = UsageBatch([u]).evaluate(t)
    assert cpu.min() >= 800 - 1e-9 and cpu.max() <= 1200 + 1e-9
    assert cpu.std() > 50                                 # it does vary
    assert np.all(cpu[0, ::2] == cpu[0, 1::2])            # constant within a 10s interval
    again, _ = UsageBatch([parse_container_usage(
        {"cpu": {"profile": "constant", "value": "1", "noise": 0.2, "noiseInterval": "10s"}}, name="app")]).evaluate(t)
    assert np.array_equal(cpu, again)
    other, _ = UsageBatch([parse_container_usage(
        {"cpu": {"profile": "constant", "value": "1", "noise": 0.2, "noiseInterval": "10s"}}, name="db")]).evaluate(t)
    assert not np.array_equal(cpu, other)


def test_vectorized_matches_scalar():
    usages = [
        parse_container_usage({"cpu": {"profile": "diurnal", "min": "100m", "max": "900m", "period": "1h"},
                               "memory": {"profile": "linear", "start": "10Mi", "rate": "1Mi/min"}}),
        parse_container_usage({"cpu": "50m", "memory": {"profile": "spikes", "base": "5Mi", "peak": "50Mi",
                                                        "every": "10m", "duration": "1m"}}),
        parse_container_usage({"replay": {"samples": [[0, 1, "1Mi"], [100, 2, "2Mi"]], "interpolation": "linear"}}),
        ContainerUsage(),
    ]
    started = np.array([0.0, 100.0, 50.0, 0.0])
    times = np.array([0.0, 123.0, 777.0, 3000.0])
    cpu, memory = usage_many(usages, times, started)
    assert cpu.shape == memory.shape == (4, 4)
    for i, u in enumerate(usages):
        for j, t in enumerate(times):
            assert usage_at(u, t, started[i]) == (round(cpu[i, j]), round(memory[i, j]))
    cpu1, memory1 = usage_many(usages, 777.0, started)
    assert cpu1.shape == (4,) and np.allclose(cpu1, cpu[:, 2]) and np.allclose(memory1, memory[:, 2])


@pytest.mark.parametrize("spec, message", [
    ({"cpu": {"profile": "sawtooth"}}, "unknown profile"),
    ({"cpu": {"profile": "diurnal", "min": "1", "max": "2", "perid": "1h"}}, "unknown field"),
    ({"cpu": {"profile": "diurnal", "min": "2", "max": "1"}}, "max must not be below min"),
    ({"cpu": {"profile": "diurnal", "max": "1"}}, "min is required"),
    ({"memory": {"profile": "linear", "start": "1Mi", "rate": "1Mi/fortnight"}}, "rate"),
    ({"memory": "lots"}, "memory"),
    ({"memory": "-1Mi"}, "must not be negative"),
    ({"cpu": "1", "replay": {"samples": [[0, 1, 1]]}}, "replay gives both"),
    ({"replay": {"samples": []}}, "non-empty"),
    ({"replay": {"samples": [[5, 1, 1], [5, 1, 1]]}}, "must increase"),
    ({"replay": {"samples": [[0, 1, 1]], "interpolation": "cubic"}}, "interpolation"),
    ({"cpu": {"profile": "constant", "value": 1, "noise": 2}}, "noise"),
    ({"cpu": {"profile": "constant", "value": 1, "anchor": "boot"}}, "anchor"),
    ({"gpu": "1"}, "unknown field"),
    ({"cpu": "1", "exitCode": 300}, "exitCode"),
    ({"cpu": "1", "exitAfter": "soon"}, "exitAfter"),
])
def test_parse_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        parse_container_usage(spec, "app")


def test_annotation_errors_name_the_path():
    with pytest.raises(UsageError, match=r"kvert.io/usage\]\.app\.cpu"):
        parse_usage_annotation(json.dumps({"app": {"cpu": "x"}}))
    with pytest.raises(UsageError, match="not valid JSON"):
        parse_usage_annotation("{")
    with pytest.raises(UsageError, match="keyed by container name"):
        parse_usage_annotation("[1]")


def make_pod(annotation=None):
    meta = {"name": "p", "namespace": "default"}
    if annotation is not None:
        meta["annotations"] = {USAGE_ANNOTATION: json.dumps(annotation)}
    return {"metadata": meta, "spec": {
        "initContainers": [{"name": "init", "image": "busybox"},
                           {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
        "containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                       {"name": "bare", "image": "x"}]}}


def test_defaults_without_annotation():
    p = make_pod()
    assert usage_at(usage_for_container(p, "app"), 0) == (250, 512 * MI)
    assert usage_at(usage_for_container(p, "bare"), 0) == (DEFAULT_CPU_MILLI, DEFAULT_MEMORY_BYTES)
    assert usage_for_container(p, "init").exit_after == 1.0            # regular init containers finish
    assert usage_for_container(p, "proxy").exit_after is None          # sidecars keep running
    assert usage_at(usage_for_container(p, "proxy"), 0) == (50, 32 * MI)
    assert set(pod_usage(p)) == {"init", "proxy", "app", "bare"}


def test_annotation_lookup_and_wildcard():
    p = make_pod({"app": {"cpu": "700m", "memory": "300Mi"}, "*": {"cpu": "1m", "memory": "1Mi"}})
    assert usage_at(usage_for_container(p, "app"), 0) == (700, 300 * MI)
    assert usage_at(usage_for_container(p, "bare"), 0) == (1, MI)
    assert usage_for_container(p, "init").exit_after == 1.0
    assert parse_usage_annotation(p["metadata"]["annotations"][USAGE_ANNOTATION])["app"].cpu.value == 700
    # a pod template has the same shape
    template = {"metadata": p["metadata"], "spec": p["spec"]}
    assert usage_at(usage_for_container(template, "app"), 0) == (700, 300 * MI)


def test_container_annotations_round_trip():
    p = make_pod({"app": {"memory": {"profile": "linear", "start": "100Mi", "rate": "1Mi/min"}}})
    ann = container_annotations(p, "app")
    assert set(ann) == {USAGE_ANNOTATION}
    spec = json.loads(ann[USAGE_ANNOTATION])
    assert spec == container_usage_spec(p, "app")
    u = parse_container_usage(ann[USAGE_ANNOTATION], "app")
    assert usage_at(u, 60)[1] == 101 * MI
    default = json.loads(container_annotations(make_pod(), "app")[USAGE_ANNOTATION])
    assert default == {"cpu": "250m", "memory": "512Mi"}
    init = json.loads(container_annotations(make_pod(), "init")[USAGE_ANNOTATION])
    assert init["exitAfter"] == 1.0


def _noisy_pod(name, cpu_profile):
    pod = make_pod({"app": {"cpu": cpu_profile, "memory": "100Mi"}})
    pod["metadata"]["name"] = name
    return pod


def _cpu_series(pod):
    u = parse_container_usage(container_annotations(pod, "app")[USAGE_ANNOTATION], "app")
    return [usage_at(u, 60 * k)[0] for k in range(30)]


def test_replicas_get_their_own_noise_and_an_explicit_seed_is_shared():
    noisy = {"profile": "constant", "value": "500m", "noise": 0.2}
    a, b = _cpu_series(_noisy_pod("web-1", noisy)), _cpu_series(_noisy_pod("web-2", noisy))
    assert a != b                                           # two replicas, two sequences
    assert a == _cpu_series(_noisy_pod("web-1", noisy))     # the same pod name repeats exactly
    assert all(400 <= v <= 600 for v in a + b)
    seeded = {**noisy, "seed": 7}
    assert _cpu_series(_noisy_pod("web-1", seeded)) == _cpu_series(_noisy_pod("web-2", seeded))
    # the seed travels in the annotation the runtime parses, and the pod's own view agrees
    spec = json.loads(container_annotations(_noisy_pod("web-1", noisy), "app")[USAGE_ANNOTATION])
    assert spec["cpu"]["seed"] == container_usage_spec(_noisy_pod("web-1", noisy), "app")["cpu"]["seed"]
    assert spec["memory"] == "100Mi"                        # no noise, nothing added
