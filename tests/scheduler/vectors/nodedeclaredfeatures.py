"""NodeDeclaredFeatures with kube-scheduler 1.35's feature registry.

In 1.35 the registry holds only ``GuaranteedQoSPodCPUResize``, which no pod needs to be
scheduled (``InferFromCreate`` / ``InferForScheduling`` is always false): PreFilter skips the
plugin for every pod and no node is filtered, whatever it declares. The Filter itself (a
registry of mock features, as upstream's TestFilter builds) is tested directly in
``tests/scheduler/test_nodedeclaredfeatures.py``."""

from __future__ import annotations

from . import Vector

PLUGIN = "NodeDeclaredFeatures"
ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def node(name: str, *features: str) -> dict:
    status: dict = {"allocatable": dict(ALLOC)}
    if features:
        status["declaredFeatures"] = list(features)
    return {"metadata": {"name": name}, "status": status}


def guaranteed_pod(name: str) -> dict:
    res = {"cpu": "1", "memory": "1Gi"}
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c1", "image": "pause",
                                     "resources": {"requests": dict(res), "limits": dict(res)}}]}}


PLAIN = {"metadata": {"name": "test-pod", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "pause"}]}}

VECTORS = [
    # no feature is required: nodes declaring features and nodes declaring none both fit
    Vector(go_test="nodedeclaredfeatures/nodedeclaredfeatures_test.go TestPreFilter/"
                   "Pod with no requirements",
           plugin=PLUGIN, pod=PLAIN,
           nodes=[node("node-1", "FeatureA", "FeatureB"), node("node-2")],
           filtered={}),
    # a Guaranteed pod with cpu requests needs GuaranteedQoSPodCPUResize only to be resized
    Vector(go_test="nodedeclaredfeatures/features/inplacepodresize/guaranteed_cpu_resize_test.go "
                   "TestGuaranteedQoSPodCPUResizeFeature_InferFromCreate",
           plugin=PLUGIN, pod=guaranteed_pod("guaranteed"),
           nodes=[node("node-1"), node("node-2", "GuaranteedQoSPodCPUResize")],
           filtered={}),
]
