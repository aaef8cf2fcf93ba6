"""PodSecurity admission as the attack it stops: a privileged pod in a namespace labelled
``pod-security.kubernetes.io/enforce=restricted`` is refused with upstream's message
(admission.go EvaluatePod: ``violates PodSecurity %q: %s``; kube-apiserver's plugin returns
403 Forbidden), warn/audit only report, unlabelled namespaces stay privileged."""

from __future__ import annotations

import asyncio

import pytest

from kvert.api.errors import ApiError
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.registry.admission import collecting_warnings
from kvert.store import open_store

PRIVILEGED_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                  "spec": {"containers": [{"name": "c", "image": "nginx",
                                           "securityContext": {"privileged": True}}]}}


def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {f"pod-security.kubernetes.io/{k.replace('_', '-')}": v
                                                   for k, v in labels.items()}}}


def pod(ns):
    return {**PRIVILEGED_POD, "metadata": {"name": "x", "namespace": ns}}


def run(body):
    async def main():
        clock = VirtualClock()
        store = open_store("memory", clock=clock)
        registry = Registry(store, clock, default_chain(store, clock), seed=1)
        await bootstrap(registry)
        await body(registry)
    asyncio.run(main())


def test_a_privileged_pod_is_refused_in_a_restricted_namespace():
    async def body(registry):
        await registry.create("namespaces", namespace("r", enforce="restricted"))
        with pytest.raises(ApiError) as err:
            await registry.create("pods", pod("r"))
        assert err.value.code == 403
        assert str(err.value) == (
            'pods "x" is forbidden: violates PodSecurity "restricted:latest": '
            'privileged (container "c" must not set securityContext.privileged=true), '
            'allowPrivilegeEscalation != false (container "c" must set '
            'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
            '(container "c" must set securityContext.capabilities.drop=["ALL"]), '
            'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
            'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to '
            '"RuntimeDefault" or "Localhost")')
    run(body)


def test_unlabelled_and_system_namespaces_stay_privileged():
    async def body(registry):
        for ns in ("default", "kube-system"):
            with collecting_warnings() as warnings:
                await registry.create("pods", pod(ns))
            assert warnings == []
    run(body)


def test_warn_only_warns_and_templates_are_never_enforced():
    async def body(registry):
        await registry.create("namespaces", namespace("w", warn="baseline", enforce="baseline",
                                                      enforce_version="v1.0"))
        with pytest.raises(ApiError):
            await registry.create("pods", pod("w"))
        await registry.create("namespaces", namespace("v", warn="baseline"))
        with collecting_warnings() as warnings:
            await registry.create("pods", pod("v"))
        assert warnings == ['would violate PodSecurity "baseline:latest": privileged '
                            '(container "c" must not set securityContext.privileged=true)']
        await registry.create("namespaces", namespace("t", enforce="restricted", warn="baseline"))
        deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "d", "namespace": "t"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}},
                                        "spec": PRIVILEGED_POD["spec"]}}}
        with collecting_warnings() as warnings:
            await registry.create("apps/deployments", deploy)
        assert warnings == ['would violate PodSecurity "baseline:latest": privileged '
                            '(container "c" must not set securityContext.privileged=true)']
    run(body)


def test_invalid_labels_are_refused_and_a_stricter_enforce_level_checks_existing_pods():
    async def body(registry):
        with pytest.raises(ApiError) as err:
            await registry.create("namespaces", namespace("bad", enforce="foo"))
        assert err.value.code == 422
        assert str(err.value) == ('Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/'
                                  'enforce]: Invalid value: "foo": must be one of privileged, baseline, '
                                  'restricted')
        await registry.create("namespaces", namespace("e"))
        await registry.create("pods", pod("e"))
        with collecting_warnings() as warnings:
            await registry.patch("namespaces", "e", {"metadata": {"labels": {
                "pod-security.kubernetes.io/enforce": "baseline"}}})
        assert warnings == ['existing pods in namespace "e" violate the new PodSecurity enforce level '
                            '"baseline:latest"', "x: privileged"]
    run(body)
