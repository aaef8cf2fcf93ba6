"""Upstream kube-scheduler unit-test vectors through ``kvert schedule -o json``.

Every ``VECTORS`` list of the modules in ``tests/scheduler/vectors/`` (format and modes:
``vectors/__init__.py``) becomes one test: the vector's nodes, existing pods, other objects
and the pod to schedule are written as a ``kind: List`` snapshot, the profile as a
KubeSchedulerConfiguration file, and the ``kvert schedule`` command's JSON for that pod is
compared with upstream's expected values (the Go test each vector names).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import pkgutil
from pathlib import Path

import pytest
import yaml

from kvert.cli.main import main
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.framework import Handle, implements
from kvert.scheduler.plugins import REGISTRY

from . import vectors as vectors_pkg
from .vectors import Vector

BASE = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]


def _all_vectors() -> list[tuple[str, Vector]]:
    out = []
    for info in sorted(pkgutil.iter_modules(vectors_pkg.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{vectors_pkg.__name__}.{info.name}")
        for v in getattr(module, "VECTORS", ()):
            out.append((info.name, v))
    return out


VECTORS = _all_vectors()


def profile_config(v: Vector) -> dict:
    """The KubeSchedulerConfiguration a vector runs under."""
    if v.mode == "schedule":
        return v.config or {"apiVersion": "kubescheduler.config.k8s.io/v1",
                            "kind": "KubeSchedulerConfiguration"}
    plugin = REGISTRY[v.plugin](v.args or {}, Handle(NodeCache()))
    plugins: dict = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": list(BASE)}}
    if v.mode == "filter":
        plugins["multiPoint"]["enabled"].append({"name": v.plugin})
    elif v.mode == "score":
        for point in ("preScore", "score"):
            if implements(plugin, point):
                plugins[point] = {"enabled": [{"name": v.plugin}]}
    else:
        raise ValueError(f"unknown vector mode {v.mode!r}")
    profile: dict = {"schedulerName": "default-scheduler", "plugins": plugins}
    if v.args is not None:
        profile["pluginConfig"] = [{"name": v.plugin, "args": v.args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


def run_schedule(objects: list[dict], config: dict | None, tmp: Path) -> dict:
    """``kvert schedule SNAPSHOT [--config CONFIG] -o json``, in-process; the parsed report."""
    snapshot = tmp / "cluster.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    argv = ["schedule", str(snapshot), "-o", "json"]
    if config is not None:
        cfg = tmp / "scheduler.yaml"
        cfg.write_text(yaml.safe_dump(config))
        argv += ["--config", str(cfg)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def _pending(pod: dict) -> dict:
    pod = json.loads(json.dumps(pod))
    pod.setdefault("apiVersion", "v1")
    pod.setdefault("kind", "Pod")
    (pod.get("spec") or {}).pop("nodeName", None)
    return pod


def _with_kind(objs: list[dict], kind: str) -> list[dict]:
    return [{"apiVersion": "v1", "kind": kind, **o} if "kind" not in o else o for o in objs]


@pytest.mark.parametrize("module,vector", VECTORS,
                         ids=[f"{m}:{v.id}" for m, v in VECTORS])
def test_upstream_vector(module: str, vector: Vector, tmp_path: Path) -> None:
    v = vector
    pod = _pending(v.pod)
    objects = _with_kind(v.nodes, "Node") + _with_kind(v.pods, "Pod") + list(v.objects) + [pod]
    report = run_schedule(objects, profile_config(v), tmp_path)
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace") or "default", meta["name"]
    [got] = [p for p in report["pods"] if (p["namespace"], p["name"]) == (ns, name)]
    if v.filtered is not None:
        assert got["filtered"] == v.filtered
    if v.scores is not None:
        if v.mode == "score":
            assert {n: s.get(v.plugin) for n, s in got["scores"].items()} == v.scores
        else:
            assert got["scores"] == v.scores
    if v.message is not None:
        assert got["message"] == v.message
    if v.node is not ...:
        assert got["node"] == v.node
    if v.nominated is not ...:
        assert got["nominatedNode"] == v.nominated
    if v.victims is not None:
        assert sorted(got["victims"]) == sorted(v.victims)


def test_every_vector_names_its_upstream_test() -> None:
    for module, v in VECTORS:
        assert "Test" in v.go_test and "_test.go" in v.go_test, (module, v.go_test)
        assert v.filtered is not None or v.scores is not None or v.message is not None \
            or v.node is not ... or v.victims is not None, f"{v.go_test}: checks nothing"
