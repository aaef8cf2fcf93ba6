"""VPA objects validated as upstream VPA 1.8's admission controller does it
(pkg/admission-controller/resource/vpa/validation.go, handler.go): through the in-process
admission plugin on VPA create and update, and through the webhook over HTTPS.

Vectors: TestValidateVPA, TestAllowCPUBoost, TestAllowPerVPAConfig
(pkg/admission-controller/resource/vpa/validation_test.go)."""

from __future__ import annotations

import asyncio
import copy
import datetime
from typing import Any

import pytest

from kvert.api.errors import Invalid
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import open_store
from kvert.vpa.admission import VpaAdmissionPlugin
from kvert.vpa.features import VpaGates
from kvert.vpa.webhook import VpaWebhookServer, register_webhook, webhook_configuration

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
ALL_ON = VpaGates.all_on()


def vpa(**spec: Any) -> dict:
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "my-vpa", "namespace": "default"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "my-app"}, **spec}}


def policy(**fields: Any) -> dict:
    return {"resourcePolicy": {"containerPolicies": [{"containerName": "loot box", **fields}]}}


def boost(**cpu: Any) -> dict:
    return {"cpu": cpu}


class Api:
    """An in-process API server whose admission chain has the VPA plugin."""

    def __init__(self, gates: VpaGates) -> None:
        self.gates = gates

    async def __aenter__(self) -> Api:
        clock = WallClock()
        self.store = open_store("memory", clock=clock)
        registry = Registry(self.store, clock, default_chain(self.store, clock))
        await bootstrap(registry)
        self.client = InProcessClient(registry)
        registry.admission.plugins.append(VpaAdmissionPlugin(self.client, gates=self.gates))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.store.close()


def create(obj: dict, gates: VpaGates = VpaGates()) -> dict:
    async def go():
        async with Api(gates) as api:
            return await api.client.create(VPAS, copy.deepcopy(obj))
    return asyncio.run(go())


def refusal(obj: dict, gates: VpaGates = VpaGates()) -> str:
    """The first field error of a refused create, as upstream's test compares ``errs[0].Error()``."""
    with pytest.raises(Invalid) as refused:
        create(obj, gates)
    assert refused.value.code == 422 and refused.value.details["kind"] == "VerticalPodAutoscaler"
    cause = refused.value.causes[0]
    return f"{cause.field}: {cause.message}"


BAD = [
    ("no update mode", vpa(updatePolicy={}), VpaGates(),
     "spec.updatePolicy.updateMode: Required value: updateMode is required if UpdatePolicy is used"),
    ("bad update mode", vpa(updatePolicy={"updateMode": "bad"}), VpaGates(),
     'spec.updatePolicy.updateMode: Unsupported value: "bad": supported values: "InPlace", "InPlaceOrRecreate", '
     '"Initial", "Off", "Recreate"'),
    ("zero minReplicas", vpa(updatePolicy={"updateMode": "Off", "minReplicas": 0}), VpaGates(),
     "spec.updatePolicy.minReplicas: Invalid value: 0: minReplicas has to be positive"),
    ("no policy name", vpa(resourcePolicy={"containerPolicies": [{"mode": "Auto"}]}), VpaGates(),
     "spec.resourcePolicy.containerPolicies[0].containerName: Required value"),
    ("invalid scaling mode", vpa(**policy(mode="bad")), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].mode: Unsupported value: "bad": supported values: "Auto", "Off"'),
    ("more than one recommender", vpa(recommenders=[{"name": "test1"}, {"name": "test2"}]), VpaGates(),
     "spec.recommenders: Too many: 2: must have at most 1 item"),
    ("bad limits", vpa(**policy(minAllowed={"cpu": "100"}, maxAllowed={"cpu": "10"})), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].maxAllowed[cpu]: Invalid value: "10": max resource for cpu is lower '
     'than min of "100"'),
    ("bad minAllowed cpu value", vpa(**policy(minAllowed={"cpu": "187500u"})), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].minAllowed[cpu]: Invalid value: "187500u": must be a whole number '
     "of milli CPUs"),
    ("bad minAllowed memory value", vpa(**policy(minAllowed={"memory": "100m"})), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].minAllowed[memory]: Invalid value: "100m": must be a whole number '
     "of bytes"),
    ("bad maxAllowed memory value", vpa(**policy(maxAllowed={"memory": "500m"})), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].maxAllowed[memory]: Invalid value: "500m": must be a whole number '
     "of bytes"),
    ("scaling off with controlled values requests and limits",
     vpa(**policy(mode="Off", controlledValues="RequestsAndLimits")), VpaGates(),
     "spec.resourcePolicy.containerPolicies[0].controlledValues: Forbidden: controlledValues shouldn't be "
     "specified if container scaling mode is off"),
    ("top-level startupBoost with feature gate disabled", vpa(startupBoost=boost(type="Factor", factor=2)),
     VpaGates(), "spec.startupBoost: Forbidden: in order to use startupBoost, you must enable feature gate "
                 "CPUStartupBoost in the admission-controller args"),
    ("container startupBoost with feature gate disabled", vpa(**policy(startupBoost=boost(type="Factor", factor=2))),
     VpaGates(), "spec.resourcePolicy.containerPolicies[0].startupBoost: Forbidden: in order to use startupBoost, "
                 "you must enable feature gate CPUStartupBoost in the admission-controller args"),
    ("top-level startupBoost with bad factor", vpa(startupBoost=boost(type="Factor", factor=0)), ALL_ON,
     "spec.startupBoost.cpu.factor: Invalid value: 0: must be >= 1 for type Factor"),
    ("container startupBoost with bad factor", vpa(**policy(startupBoost=boost(type="Factor", factor=0))), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].startupBoost.cpu.factor: Invalid value: 0: must be >= 1 for type "
     "Factor"),
    ("top-level startupBoost with bad quantity", vpa(startupBoost=boost(type="Quantity", quantity="187500u")), ALL_ON,
     'spec.startupBoost.cpu.quantity: Invalid value: "187500u": must be a whole number of milli CPUs'),
    ("top-level startupBoost with bad type", vpa(startupBoost=boost(type="bad", factor=2)), ALL_ON,
     'spec.startupBoost.cpu.type: Unsupported value: "bad": supported values: "Factor", "Quantity"'),
    ("top-level startupBoost with empty type", vpa(startupBoost=boost(factor=2)), ALL_ON,
     "spec.startupBoost.cpu.type: Required value: must be either Factor or Quantity"),
    ("Invalid oomBumpUpRatio (negative value)", vpa(**policy(oomBumpUpRatio=-1)), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio: Invalid value: -1: must be greater than or equal "
     "to 1.0"),
    ("Invalid oomBumpUpRatio (less than 1)", vpa(**policy(oomBumpUpRatio="0.5")), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio: Invalid value: 0.5: must be greater than or equal "
     "to 1.0"),
    ("Invalid oomMinBumpUp (negative value)", vpa(**policy(oomMinBumpUp=-1)), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].oomMinBumpUp: Invalid value: -1: must be greater than or equal to 0"),
    ("per-vpa config disabled and used", vpa(**policy(oomMinBumpUp="10Mi")), VpaGates(),
     "spec.resourcePolicy.containerPolicies[0].oomMinBumpUp: Forbidden: not supported when feature flag "
     "PerVPAConfig is disabled"),
    ("per-vpa config disabled with MemoryAggregationIntervalSeconds",
     vpa(**policy(memoryAggregationIntervalSeconds=3600)), VpaGates(),
     "spec.resourcePolicy.containerPolicies[0].memoryAggregationIntervalSeconds: Forbidden: not supported when "
     "feature flag PerVPAConfig is disabled"),
    ("per-vpa config disabled with MemoryAggregationIntervalCount",
     vpa(**policy(memoryAggregationIntervalCount=8)), VpaGates(),
     "spec.resourcePolicy.containerPolicies[0].memoryAggregationIntervalCount: Forbidden: not supported when "
     "feature flag PerVPAConfig is disabled"),
    ("invalid MemoryAggregationIntervalSeconds zero", vpa(**policy(memoryAggregationIntervalSeconds=0)), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].memoryAggregationIntervalSeconds: Invalid value: 0: must be "
     "greater than or equal to 1"),
    ("invalid MemoryAggregationIntervalCount negative", vpa(**policy(memoryAggregationIntervalCount=-3)), ALL_ON,
     "spec.resourcePolicy.containerPolicies[0].memoryAggregationIntervalCount: Invalid value: -3: must be "
     "greater than or equal to 1"),
    ("creating VPA with InPlace update mode not allowed by disabled feature gate",
     vpa(updatePolicy={"updateMode": "InPlace"}), VpaGates(),
     "spec.updatePolicy.updateMode: Forbidden: in order to use UpdateMode InPlace, you must enable feature gate "
     "InPlace in the admission-controller args"),
    ("evictAfterOOMSeconds with PerVPAConfig disabled",
     vpa(updatePolicy={"updateMode": "Recreate", "evictAfterOOMSeconds": 300}), VpaGates(),
     "spec.updatePolicy.evictAfterOOMSeconds: Forbidden: not supported when feature flag PerVPAConfig is disabled"),
    ("unsupported controlledResources entry rejected on create",
     vpa(**policy(controlledResources=["cpu", "broken"])), VpaGates(),
     'spec.resourcePolicy.containerPolicies[0].controlledResources[1]: Unsupported value: "broken": supported '
     'values: "cpu", "memory"'),
]


@pytest.mark.parametrize("name,obj,gates,message", BAD, ids=[b[0] for b in BAD])
def test_refused_as_upstream(name, obj, gates, message):
    assert refusal(obj, gates) == message


GOOD = [
    ("InPlaceOrRecreate update mode set", vpa(updatePolicy={"updateMode": "InPlaceOrRecreate"}), VpaGates()),
    ("all valid", vpa(updatePolicy={"updateMode": "Off", "minReplicas": 1},
                      **policy(mode="Auto", minAllowed={"cpu": "10"}, maxAllowed={"cpu": "100"})), VpaGates()),
    ("top-level startupBoost with valid factor", vpa(startupBoost=boost(type="Factor", factor=2)), ALL_ON),
    ("container startupBoost with valid quantity", vpa(**policy(startupBoost=boost(type="Quantity", quantity="100m"))),
     ALL_ON),
    ("per-vpa config active and used", vpa(**policy(oomBumpUpRatio="2", oomMinBumpUp="100Mi")), ALL_ON),
    ("per-vpa config active and used evictOOMThreshold",
     vpa(updatePolicy={"updateMode": "Recreate", "evictAfterOOMSeconds": 300}), ALL_ON),
    ("InPlace update mode with minReplicas", vpa(updatePolicy={"updateMode": "InPlace", "minReplicas": 1}), ALL_ON),
]


@pytest.mark.parametrize("name,obj,gates", GOOD, ids=[g[0] for g in GOOD])
def test_admitted_as_upstream(name, obj, gates):
    created = create(obj, gates)
    assert created["spec"]["targetRef"]["name"] == "my-app"


def test_deprecated_auto_is_admitted_with_upstream_warning():
    # upstream: TestValidateVPA "deprecated Auto update mode set"
    async def go():
        async with Api(VpaGates()) as api:
            plugin = api.client.registry.admission.plugins[-1]
            return plugin.admission.review_vpa(vpa(updatePolicy={"updateMode": "Auto"}))
    ops, warnings = asyncio.run(go())
    assert ops == []
    assert warnings == ['spec.updatePolicy: "Auto" mode is deprecated and will be removed in a future API version. '
                        "Use explicit update modes like: [InPlace InPlaceOrRecreate Initial Off Recreate]. See "
                        "https://github.com/kubernetes/autoscaler/issues/8424 for more details."]


def test_a_vpa_without_update_policy_gets_upstreams_default():
    # upstream: handler.go GetPatches: no updatePolicy -> {updateMode: Recreate} (Auto's deprecation)
    assert create(vpa())["spec"]["updatePolicy"] == {"updateMode": "Recreate"}


def test_an_update_keeps_what_the_old_object_already_used():
    # upstream: TestAllowCPUBoost "feature disabled but top-level StartupBoost.CPU set returns true" /
    # "... container StartupBoost set ...", TestAllowPerVPAConfig "feature disabled but
    # EvictAfterOOMSeconds set returns true" / "... OOMBumpUpRatio set ...", allowInPlace, and
    # TestValidateVPA "unsupported controlledResources entry allowed when present in old VPA"
    # (with its warning): made while the gates were on, such VPAs stay updatable with them off
    old = vpa(updatePolicy={"updateMode": "InPlace", "evictAfterOOMSeconds": 300},
              startupBoost=boost(type="Factor", factor=2),
              **policy(oomBumpUpRatio="2", startupBoost=boost(type="Factor", factor=3)))

    async def go():
        async with Api(ALL_ON) as api:
            created = await api.client.create(VPAS, copy.deepcopy(old))
        async with Api(VpaGates()) as api:
            plugin = VpaAdmissionPlugin(api.client, gates=VpaGates())
            updated = copy.deepcopy(created)
            updated["spec"]["updatePolicy"]["minReplicas"] = 3
            assert plugin.admission.review_vpa(updated, created) == ([], [])
            with pytest.raises(Invalid):                      # the same object as a new one
                plugin.admission.review_vpa(updated, None)
            bare = vpa(updatePolicy={"updateMode": "Recreate"})
            with pytest.raises(Invalid) as refused:            # an old object without them allows nothing
                plugin.admission.review_vpa(updated, bare)
            fields = [c.field for c in refused.value.causes]
            assert fields == ["spec.updatePolicy.updateMode", "spec.updatePolicy.evictAfterOOMSeconds",
                              "spec.resourcePolicy.containerPolicies[0].oomBumpUpRatio",
                              "spec.resourcePolicy.containerPolicies[0].startupBoost", "spec.startupBoost"]
            broken = vpa(**policy(controlledResources=["cpu", "broken"]))
            return plugin.admission.review_vpa(broken, broken)
    ops, warnings = asyncio.run(go())
    assert warnings == ['spec.resourcePolicy.containerPolicies[0].controlledResources[1]: unsupported value "broken" '
                        'is allowed only because it is present in the existing VPA object; supported values: "cpu", '
                        '"memory"']


def test_the_webhook_refuses_a_vpa_over_https(tmp_path):
    # upstream: logic/server.go admit(): a handler that disallows incorrect objects answers
    # allowed=false with the Invalid status; kube-apiserver hands it to the client
    async def go():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        registry = Registry(store, clock, default_chain(store, clock))
        await bootstrap(registry)
        client = InProcessClient(registry)
        pki = ensure_pki(tmp_path / "pki", datetime.datetime.now(datetime.UTC), ("127.0.0.1", "localhost"))
        server = VpaWebhookServer(client, clock, ssl_context=pki.server_context())
        await server.run()
        try:
            await register_webhook(client, webhook_configuration(server.url, pki.ca_pem()))
            with pytest.raises(Invalid) as refused:
                await client.create(VPAS, vpa(updatePolicy={"updateMode": "InPlace"}))
            created = await client.create(VPAS, vpa())
            return str(refused.value), created
        finally:
            await server.stop()
            store.close()
    message, created = asyncio.run(go())
    assert "spec.updatePolicy.updateMode: Forbidden: in order to use UpdateMode InPlace, you must enable feature " \
           "gate InPlace in the admission-controller args" in message
    assert created["spec"]["updatePolicy"] == {"updateMode": "Recreate"}
