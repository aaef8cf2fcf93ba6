"""The volumes a node fills for its pods besides projected ones (kvert.kubelet.tokens):
secret, configMap, downwardAPI, emptyDir and hostPath, with items, modes, optional sources
and the pod's fsGroup, as pkg/volume's plugins make them; a missing secret keeps the pod
waiting with FailedMount."""

from __future__ import annotations

import base64
import os
import stat

import pytest

from kvert.api.errors import NotFound
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.kubelet.tokens import MountError, ProjectedVolumes
from kvert.registry import Registry
from kvert.store import open_store

from tests.kubelet.test_agent_support import events, pod, run_pod, running, start_agent, stop, wait_for

DATA = {"foo": b"foo", "bar": b"bar"}


class Objects:
    """A Secret and a ConfigMap of the same data, by name."""

    def __init__(self, **objects):
        self.objects = objects

    async def get(self, resource, name, namespace=""):
        if name not in self.objects:
            raise NotFound(resource, name)
        data = self.objects[name]
        if resource == "secrets":
            return {"data": {k: base64.b64encode(v).decode() for k, v in data.items()}}
        return {"data": {k: v.decode() for k, v in data.items()}}


def _mount(tmp_path, volume, **objects):
    clock = VirtualClock()
    volumes = ProjectedVolumes(Objects(**objects), clock, tmp_path)
    body = {"metadata": {"name": "p", "namespace": "test_secret_namespace", "uid": "test_pod_uid",
                         "labels": {"key1": "value1", "key2": "value2"}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "250m"}}}],
                     "volumes": [{"name": "test_volume_name", **volume}]}}
    clock.run(volumes.mount(body))
    return volumes, body


def _files(directory):
    return {str(p.relative_to(directory)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", ["secret", "configMap"])
@pytest.mark.parametrize(("items", "mode", "expected"), [
    (None, 0o644, {"foo": (b"foo", 0o644), "bar": (b"bar", 0o644)}),                        # no overrides
    ([{"key": "foo", "path": "path/to/foo.txt"}], 0o644, {"path/to/foo.txt": (b"foo", 0o644)}),   # basic 1
    ([{"key": "foo", "path": "path/to/1/2/3/foo.txt"}, {"key": "bar", "path": "another/path/to/the/esteemed/bar.bin"}],
     0o644, {"path/to/1/2/3/foo.txt": (b"foo", 0o644), "another/path/to/the/esteemed/bar.bin": (b"bar", 0o644)}),
    ([{"key": "foo", "path": "foo.txt", "mode": 0o400}, {"key": "bar", "path": "bar.bin", "mode": 0o400}],
     0o644, {"foo.txt": (b"foo", 0o400), "bar.bin": (b"bar", 0o400)}),                      # mapping with Mode
    ([{"key": "foo", "path": "foo.txt"}, {"key": "bar", "path": "bar.bin"}],
     0o644, {"foo.txt": (b"foo", 0o644), "bar.bin": (b"bar", 0o644)}),                      # with defaultMode
])
def test_keys_at_their_paths_and_modes(tmp_path, kind, items, mode, expected):
    # upstream: TestMakePayload (pkg/volume/secret/secret_test.go, pkg/volume/configmap/configmap_test.go)
    name_field = "secretName" if kind == "secret" else "name"
    source = {name_field: "s", "defaultMode": mode, **({"items": items} if items else {})}
    volumes, _ = _mount(tmp_path, {kind: source}, s=DATA)
    plugin = "kubernetes.io~secret" if kind == "secret" else "kubernetes.io~configmap"
    directory = tmp_path / "pods" / "test_pod_uid" / "volumes" / plugin / "test_volume_name"
    assert _files(directory) == expected
    assert volumes.files[("test_pod_uid", "test_volume_name")] == {k: v for k, (v, _) in expected.items()}


def test_the_default_mode_is_0644(tmp_path):
    # upstream: SetDefaults_SecretVolumeSource / ConfigMapVolumeSource (pkg/apis/core/v1/defaults.go)
    _mount(tmp_path, {"secret": {"secretName": "s"}}, s=DATA)
    directory = tmp_path / "pods" / "test_pod_uid" / "volumes" / "kubernetes.io~secret" / "test_volume_name"
    assert {mode for _, mode in _files(directory).values()} == {0o644}


@pytest.mark.parametrize(("kind", "message"), [
    ("secret", "references non-existent secret key: zab"),
    ("configMap", "configmap references non-existent config key: zab")])
def test_a_missing_key_fails_unless_optional(tmp_path, kind, message):
    # upstream: TestMakePayload "non existent key", "optional non existent key"
    # (pkg/volume/secret/secret_test.go, pkg/volume/configmap/configmap_test.go)
    name_field = "secretName" if kind == "secret" else "name"
    source = {name_field: "s", "items": [{"key": "zab", "path": "path/to/foo.txt"}]}
    with pytest.raises(MountError) as e:
        _mount(tmp_path, {kind: source}, s=DATA)
    assert str(e.value) == f'MountVolume.SetUp failed for volume "test_volume_name" : {message}'
    volumes, _ = _mount(tmp_path, {kind: {**source, "optional": True}}, s=DATA)
    assert volumes.files[("test_pod_uid", "test_volume_name")] == {}


def test_an_optional_missing_secret_is_an_empty_volume(tmp_path):
    # upstream: TestPluginOptional (pkg/volume/secret/secret_test.go)
    volumes, body = _mount(tmp_path, {"secret": {"secretName": "test_secret_name", "optional": True}})
    path = volumes.host_path(body, "test_volume_name")
    assert path is not None and path.endswith("pods/test_pod_uid/volumes/kubernetes.io~secret/test_volume_name")
    assert os.path.isdir(path) and os.listdir(path) == []
    with pytest.raises(MountError, match='^MountVolume.SetUp failed for volume "test_volume_name" : '
                                         'secret "test_secret_name" not found$'):
        _mount(tmp_path, {"secret": {"secretName": "test_secret_name"}})


def test_downward_api_volume(tmp_path):
    # upstream: TestLabels (pkg/volume/downwardapi/downwardapi_test.go) for the labels' format;
    # a container's cpu limit in millicores (TestExtractResourceValue, divisor 1m)
    volumes, body = _mount(tmp_path, {"downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}, "mode": 0o400},
        {"path": "cpu_limit", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu",
                                                   "divisor": "1m"}}]}})
    files = _files(tmp_path / "pods" / "test_pod_uid" / "volumes" / "kubernetes.io~downward-api" / "test_volume_name")
    assert files == {"labels": (b'key1="value1"\nkey2="value2"', 0o644), "name": (b"p", 0o400),
                     "cpu_limit": (b"250", 0o644)}


def test_empty_dir_is_world_writable_and_kept_across_mounts(tmp_path):
    # upstream: the emptyDir plugin makes its directory 0777 (pkg/volume/emptydir/empty_dir.go
    # setupDir; TestPluginEmptyRootContext checks the mode)
    volumes, body = _mount(tmp_path, {"emptyDir": {}})
    path = volumes.host_path(body, "test_volume_name")
    assert path.endswith("pods/test_pod_uid/volumes/kubernetes.io~empty-dir/test_volume_name")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o777
    with open(os.path.join(path, "kept"), "w") as f:
        f.write("x")
    VirtualClock().run(volumes.mount(body))     # a restarted node mounts it again
    assert os.listdir(path) == ["kept"]


def test_host_path_types(tmp_path):
    # upstream: the hostPath type checker's messages (pkg/volume/hostpath/host_path.go checkType)
    made = tmp_path / "made" / "here"
    volumes, body = _mount(tmp_path, {"hostPath": {"path": str(made), "type": "DirectoryOrCreate"}})
    assert made.is_dir() and volumes.host_path(body, "test_volume_name") == str(made)
    with pytest.raises(MountError, match=f"hostPath type check failed: {tmp_path / 'nope'} is not a directory$"):
        _mount(tmp_path, {"hostPath": {"path": str(tmp_path / "nope"), "type": "Directory"}})


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's group to the pod's fsGroup needs root")
def test_fs_group_owns_and_reads_the_volume(tmp_path):
    # upstream: SetVolumeOwnership (pkg/volume/volume_linux.go): the group is fsGroup, read-only
    # volumes gain group read (0440), directories setgid
    clock = VirtualClock()
    volumes = ProjectedVolumes(Objects(s=DATA), clock, tmp_path)
    body = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
            "spec": {"securityContext": {"fsGroup": 2000, "runAsUser": 65534},
                     "containers": [{"name": "c"}],
                     "volumes": [{"name": "v", "secret": {"secretName": "s", "defaultMode": 0o600}},
                                 {"name": "t", "projected": {"sources": [{"secret": {"name": "s"}}]}}]}}
    clock.run(volumes.mount(body))
    secret = tmp_path / "pods" / "u" / "volumes" / "kubernetes.io~secret" / "v"
    foo = (secret / "foo").stat()
    assert (foo.st_gid, stat.S_IMODE(foo.st_mode)) == (2000, 0o640)
    assert secret.stat().st_mode & stat.S_ISGID
    # projected files are the user every container runs as (FsUserFrom), so a non-root
    # container reads its token
    projected = (tmp_path / "pods" / "u" / "volumes" / "kubernetes.io~projected" / "t" / "foo").stat()
    assert (projected.st_uid, projected.st_gid, stat.S_IMODE(projected.st_mode)) == (65534, 2000, 0o640)


def test_a_missing_secret_volume_keeps_the_pod_waiting(tmp_path):
    # upstream: the kubelet's volume manager waits for a pod's volumes; the event is
    # "MountVolume.SetUp failed for volume ..." (pkg/volume/util/operationexecutor)
    clock = VirtualClock()

    async def main():
        store = open_store("memory", clock=clock)
        registry = Registry(store, clock, default_chain(store, clock), seed=1)
        await bootstrap(registry)
        client = InProcessClient(registry)
        agent, task = await start_agent(client, clock, checkpoint_dir=tmp_path)
        body = pod("web", volumes=[{"name": "tls-certs", "secret": {"secretName": "vpa-tls-certs"}}])
        body["spec"]["containers"][0]["volumeMounts"] = [{"name": "tls-certs", "mountPath": "/etc/tls-certs"}]
        await run_pod(client, body)
        failed = await wait_for(clock, lambda: events(client, "web", "FailedMount"), what="event")
        assert failed[0]["message"] == ('MountVolume.SetUp failed for volume "tls-certs" : '
                                        'secret "vpa-tls-certs" not found')
        assert (await client.get("pods", "web", "default"))["status"]["phase"] == "Pending"
        await client.create("secrets", {"metadata": {"name": "vpa-tls-certs"},
                                        "data": {"caCert.pem": base64.b64encode(b"ca").decode()}},
                            namespace="default")
        await running(client, clock, "web")
        uid = next(iter(agent.pods))
        assert (tmp_path / "pods" / uid / "volumes" / "kubernetes.io~secret" / "tls-certs" / "caCert.pem"
                ).read_bytes() == b"ca"
        await stop(agent, task)

    clock.run(main())
