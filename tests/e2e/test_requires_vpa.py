"""The requires-VPA hold through ``kvert up``'s VPA admission webhook: in a namespace
annotated ``vpa.kvert.io/requires-vpa: "true"`` a Deployment gets no pods
(``FailedCreate``: the webhook's denial) until a VPA for it exists."""

from __future__ import annotations

import json

from .conftest import wait_for

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": "held"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hamster"}},
                       "template": {"metadata": {"labels": {"app": "hamster"}},
                                    "spec": {"containers": [{"name": "hamster", "image": "busybox"}]}}}}
VPA = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
       "metadata": {"name": "hamster-vpa", "namespace": "held"},
       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"}}}


def test_pods_wait_for_their_vpa(kubectl):
    kubectl("create", "namespace", "held")
    kubectl("annotate", "namespace", "held", "vpa.kvert.io/requires-vpa=true")
    kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))

    def denied():
        events = kubectl.json("get", "events", "-n", "held", "--field-selector", "reason=FailedCreate")["items"]
        return [e["message"] for e in events]

    messages = wait_for(denied, timeout=60)
    assert any('admission webhook "vpa.k8s.io" denied the request: pod hamster-' in m
               and "requires a VerticalPodAutoscaler (vpa.kvert.io/requires-vpa) and none in a mode "
                   "other than Off matches it" in m for m in messages), messages
    assert kubectl.json("get", "pods", "-n", "held")["items"] == []
    kubectl("create", "-f", "-", input=json.dumps(VPA))
    wait_for(lambda: kubectl.json("get", "pods", "-n", "held")["items"], timeout=120)
