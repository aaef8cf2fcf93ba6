"""Replaying your own cluster: kvert scenario import's time and memory, and an imported week's simulation.

How long ``kvert scenario import`` takes on a big Prometheus history, and how fast an imported
1 000-node week simulates next to the synthetic one. Prints figures; asserts nothing.

1. **Import**: ``kvert scenario import`` of ``--containers`` (2 000) containers x ``--days``
   (7) at ``--step`` (1 minute) from a local real Prometheus (``/usr/bin/prometheus``), run as
   a child process and timed; aim: at most 5 minutes and 2 GiB. The history is generated here,
   lean: cAdvisor's ``container_cpu_usage_seconds_total`` and
   ``container_memory_working_set_bytes`` scraped every step with only the labels the reader
   needs (job, instance, namespace, pod, container), and kube-state-metrics'
   ``kube_pod_owner`` / ``kube_replicaset_owner`` every 4 minutes (Prometheus' 5-minute
   lookback keeps a gauge current). The OpenMetrics file is streamed to disk series by series,
   backfilled with ``promtool tsdb create-blocks-from openmetrics`` and removed; the TSDB and
   the matching snapshot (a v1 List of Nodes and Deployments of 10 replicas whose pods the
   history names ``web-NNNN-<hash>-<suffix>``) are cached under ``--cache`` (one subdirectory
   per size), so a second run skips the generation.
2. **Simulation**: the imported equivalent of ``sim_bench.large_scenario`` (``--nodes``
   1 000 nodes of 16 CPU / 64Gi, ``--pods`` 20 000 pods: Deployments of 10 replicas requesting
   100m / 128Mi, diurnal CPU 50m-300m, memory ~150Mi with 5% noise, 1-minute steps over a
   week) built without Prometheus: a ``RecordedHistory`` made with numpy in memory and
   ``kvert.sim.importer.import_scenario``; its ``scenario.yaml`` is then cut to the one policy
   ``InPlaceOrRecreate`` (tick and sample interval 60 s, as ``large_scenario``). Both
   scenarios run their first ``--hours`` simulated hours (``sim_bench.measure``) and project
   the week; aim: the imported one within 1.5x of the synthetic one.

Every measured step runs in its own child process; its peak memory is the ``ru_maxrss`` that
``os.wait4`` returns for it (the largest resident set of the child and the processes it
waited for, as ``/usr/bin/time`` reports it). ``--memory-limit GIB`` caps each measured kvert
process' address space (it then fails with a MemoryError instead of calling the kernel's OOM
killer onto a shared machine): building the imported 1 000-node directory takes about 12 GiB,
its simulation about 7 GiB (2026-12). Generating the import's history once takes about 2
minutes, 7.6 GiB of disk for a while and ``promtool`` about 9 GiB of memory (it holds the
week's one block).

usage: python benchmarks/replay_bench.py [--quick] [--skip-import] [--skip-simulate]
           [--containers N] [--days D] [--step S] [--cache DIR]
           [--nodes N] [--pods P] [--hours H] [--memory-limit GIB]
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

MI = 2**20
GI = 2**30
START = 1714953600              # 2024-05-06T00:00:00Z (tests.support.promhistory.START)
KSM_EVERY = 240                 # seconds between kube-state-metrics samples (under the 5-minute lookback)
REPLICAS = 10
PODS_PER_NODE = 20
NAMESPACE = "default"
CADVISOR_JOB = "kubernetes-cadvisor"
KSM_JOB = "kube-state-metrics"
KSM_INSTANCE = "10.0.0.9:8080"
GENERATOR = 1                   # bump when the generated history changes (a new cache entry)
AIM_IMPORT_SECONDS = 300.0
AIM_IMPORT_BYTES = 2 * GI
AIM_SIM_RATIO = 1.5
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"       # Kubernetes' name generator's letters


# -- the cluster: names, usage and the snapshot ------------------------------------------------------------

def _name(rng: np.random.Generator, n: int) -> str:
    return "".join(ALPHABET[i] for i in rng.integers(0, len(ALPHABET), n))


def cluster_names(deployments: int, replicas: int, prefix: str, seed: int = 7) -> list[tuple[str, str, list[str]]]:
    """[(deployment, replicaset, [pod names])]: ``prefix-NNNN``, ``prefix-NNNN-<hash>``,
    ``prefix-NNNN-<hash>-<suffix>``, deterministic from ``seed``."""
    rng = np.random.default_rng(seed)
    width = max(4, len(str(deployments - 1)))
    out = []
    for i in range(deployments):
        d = f"{prefix}-{i:0{width}d}"
        rs = f"{d}-{_name(rng, 10)}"
        out.append((d, rs, [f"{rs}-{_name(rng, 5)}" for _ in range(replicas)]))
    return out


def node_names(nodes: int) -> list[str]:
    width = max(4, len(str(nodes - 1)))
    return [f"node-{i:0{width}d}" for i in range(nodes)]


def usage(pod_index: int, times: np.ndarray, seed: int = 11) -> tuple[np.ndarray, np.ndarray]:
    """One pod's CPU (cores) and working set (bytes) at ``times`` (seconds from the start): the
    usage of ``large_scenario`` (diurnal 50m-300m with 10% noise, 150Mi with 5% noise)."""
    rng = np.random.default_rng((seed, pod_index))
    diurnal = 0.5 + 0.5 * np.sin(2 * np.pi * times / 86400.0)
    cpu = (0.05 + 0.25 * diurnal) * (1 + rng.normal(0, 0.1, times.size))
    memory = 150 * MI * (1 + rng.normal(0, 0.05, times.size))
    return np.clip(cpu, 0.001, None), np.round(np.clip(memory, MI, None))


def snapshot_objects(nodes: int, names: list[tuple[str, str, list[str]]], *,
                     vpa_mode: str | None) -> dict[str, list[dict]]:
    """kind -> objects (as ``ClusterSnapshot.objects``): the Nodes (16 CPU / 64Gi), one Deployment
    of ``len(pods)`` replicas requesting 100m / 128Mi per entry of ``names``, and a VPA on each
    when ``vpa_mode`` is given."""
    node_objs = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n,
                                                     "node.kubernetes.io/instance-type": "bench-16x64"}},
                  "spec": {},
                  "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                             "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}
                 for n in node_names(nodes)]
    deployments, vpas = [], []
    for d, _, pods in names:
        labels = {"app": d}
        deployments.append({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": d, "namespace": NAMESPACE},
            "spec": {"replicas": len(pods), "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                         "name": "app", "image": "registry.example/app:1",
                         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}}})
        if vpa_mode:
            vpas.append({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                         "metadata": {"name": d, "namespace": NAMESPACE},
                         "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": d},
                                  "updatePolicy": {"updateMode": vpa_mode}}})
    out = {"Node": node_objs, "Deployment": deployments}
    if vpas:
        out["VerticalPodAutoscaler"] = vpas
    return out


# -- child processes and their peak memory -------------------------------------------------------------------

MEMORY_LIMIT = 0                 # bytes of address space a kvert child may take (--memory-limit; 0: no limit)


def _limit_memory() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_child(argv: list[str], *, limited: bool = True, **popen) -> tuple[int, float, int]:
    """Run ``argv``; (exit status, wall seconds, peak RSS bytes from ``os.wait4``). A kvert
    child (``limited``) gets at most ``MEMORY_LIMIT`` bytes of address space (a MemoryError
    then, not the kernel's OOM killer on a shared machine)."""
    if limited and MEMORY_LIMIT:
        popen["preexec_fn"] = _limit_memory
    started = time.perf_counter()
    proc = subprocess.Popen(argv, **popen)
    _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, rusage.ru_maxrss * 1024          # Linux: kilobytes


def self_child(mode: str, *args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", mode, *args]


def fmt_bytes(n: float) -> str:
    return f"{n / GI:.2f} GiB" if n >= GI else f"{n / MI:.0f} MiB"


def fmt_seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{s:.0f} s ({s / 60:.1f} min)"


# -- 1. the Prometheus history ---------------------------------------------------------------------------------

def write_openmetrics(path: Path, names: list[tuple[str, str, list[str]]], nodes: list[str], *, days: float,
                      step: int) -> int:
    """Stream the lean history to ``path`` (see the module docstring); returns the samples written.
    Scrapes ``0 .. n`` (``n = days * 86400 / step``), both ends, so every step of the window
    ``[START, START + n * step)`` has its two CPU samples."""
    n = round(days * 86400 / step)
    offsets = np.arange(n + 1, dtype=np.int64) * step
    times = offsets.astype(np.float64)
    ts = (START + offsets).tolist()
    cpu_tail = [f"e-3 {t}\n" for t in ts]            # the counter in milliseconds: 12345e-3 is 12.345
    mem_tail = [f" {t}\n" for t in ts]
    ksm_ts = list(range(START, START + n * step + KSM_EVERY, KSM_EVERY))
    ksm_tail = [f" {t}\n" for t in ksm_ts]
    pods = [(d, rs, pod) for d, rs, ps in names for pod in ps]
    samples = 0

    def labels(i: int, pod: str) -> str:
        return (f'{{container="app",instance="{nodes[i % len(nodes)]}",job="{CADVISOR_JOB}",'
                f'namespace="{NAMESPACE}",pod="{pod}"}} ')

    with open(path, "w", encoding="ascii", buffering=8 * MI) as f:
        f.write("# TYPE container_cpu_usage_seconds counter\n")
        for i, (_, _, pod) in enumerate(pods):
            cpu, _ = usage(i, times)
            ms = np.round(cpu[:-1] * step * 1000).astype(np.int64)
            counter = np.concatenate([[0], np.cumsum(ms)]) + (i * 7919) % 10**7     # it ran before the window
            head = "container_cpu_usage_seconds_total" + labels(i, pod)
            f.write(head + head.join(map(operator.add, map(str, counter.tolist()), cpu_tail)))
            samples += counter.size
        f.write("# TYPE container_memory_working_set_bytes gauge\n")
        for i, (_, _, pod) in enumerate(pods):
            _, memory = usage(i, times)
            head = "container_memory_working_set_bytes" + labels(i, pod)
            f.write(head + head.join(map(operator.add, map(str, memory.astype(np.int64).tolist()), mem_tail)))
            samples += memory.size
        f.write("# TYPE kube_pod_owner gauge\n")
        for _, rs, pod in pods:
            head = (f'kube_pod_owner{{instance="{KSM_INSTANCE}",job="{KSM_JOB}",namespace="{NAMESPACE}",'
                    f'owner_is_controller="true",owner_kind="ReplicaSet",owner_name="{rs}",pod="{pod}"}} 1')
            f.write(head + head.join(ksm_tail))
            samples += len(ksm_tail)
        f.write("# TYPE kube_replicaset_owner gauge\n")
        for d, rs, _ in names:
            head = (f'kube_replicaset_owner{{instance="{KSM_INSTANCE}",job="{KSM_JOB}",namespace="{NAMESPACE}",'
                    f'owner_is_controller="true",owner_kind="Deployment",owner_name="{d}",replicaset="{rs}"}} 1')
            f.write(head + head.join(ksm_tail))
            samples += len(ksm_tail)
        f.write("# EOF\n")
    return samples


def snapshot_yaml(objects: dict[str, list[dict]]) -> str:
    import yaml
    items = [o for kind in ("Node", "Deployment", "VerticalPodAutoscaler") for o in objects.get(kind, [])]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump({"apiVersion": "v1", "kind": "List", "items": items}, Dumper=dumper, sort_keys=False)


def prepare_history(cache: Path, containers: int, days: float, step: int) -> Path:
    """The cached TSDB and snapshot of this size (generated and backfilled when not cached)."""
    entry = cache / f"{containers}c-{days:g}d-{step}s-v{GENERATOR}"
    meta_file = entry / "meta.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        print(f"  history: cached in {entry} ({meta['samples']:,} samples; generated in "
              f"{fmt_seconds(meta['write_seconds'])} + backfilled in {fmt_seconds(meta['backfill_seconds'])}, "
              f"promtool peak {fmt_bytes(meta['promtool_peak_bytes'])})", flush=True)
        return entry
    deployments = max(1, containers // REPLICAS)
    names = cluster_names(deployments, REPLICAS, "web")
    nodes = node_names(max(1, -(-deployments * REPLICAS // PODS_PER_NODE)))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=cache))
    try:
        om = tmp / "history.om"
        print(f"  history: writing {len(names) * REPLICAS} containers x {days:g} days every {step} s "
              f"to {om} ...", flush=True)
        t0 = time.perf_counter()
        samples = write_openmetrics(om, names, nodes, days=days, step=step)
        write_seconds = time.perf_counter() - t0
        size = om.stat().st_size
        print(f"  history: {samples:,} samples, {fmt_bytes(size)} of OpenMetrics in {fmt_seconds(write_seconds)} "
              f"({1e9 * write_seconds / samples:.0f} ns a sample); backfilling ...", flush=True)
        # promtool reads the file once per block: 30-day blocks make a week one block
        rc, backfill_seconds, promtool_peak = run_child(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet", "--max-block-duration=720h",
             str(om), str(tmp / "tsdb")], stdout=subprocess.DEVNULL, limited=False)
        if rc != 0:
            raise RuntimeError(f"promtool failed ({rc})")
        om.unlink()
        print(f"  history: backfilled in {fmt_seconds(backfill_seconds)} ({1e6 * backfill_seconds / samples:.1f} µs "
              f"a sample), promtool peak {fmt_bytes(promtool_peak)}, TSDB {fmt_bytes(_du(tmp / 'tsdb'))}", flush=True)
        (tmp / "cluster.yaml").write_text(snapshot_yaml(snapshot_objects(len(nodes), names, vpa_mode="Off")))
        meta = {"containers": len(names) * REPLICAS, "days": days, "step": step, "samples": samples,
                "openmetrics_bytes": size, "write_seconds": write_seconds, "backfill_seconds": backfill_seconds,
                "promtool_peak_bytes": promtool_peak, "nodes": len(nodes), "deployments": len(names)}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        if entry.exists():
            shutil.rmtree(entry)
        tmp.rename(entry)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return entry


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def bench_import(args: argparse.Namespace) -> dict:
    from tests.support.promhistory import PrometheusServer, have_prometheus

    print(f"import: kvert scenario import of {args.containers} containers x {args.days:g} days every "
          f"{args.step} s from a real Prometheus", flush=True)
    reason = have_prometheus()
    if reason:
        print(f"  skipped: {reason}")
        return {}
    entry = prepare_history(args.cache, args.containers, args.days, args.step)
    meta = json.loads((entry / "meta.json").read_text())
    # Prometheus writes its WAL and lock into the TSDB directory: serve a copy of the blocks' links
    work = Path(tempfile.mkdtemp(prefix="kvert-replay-bench-"))
    try:
        tsdb = work / "tsdb"
        shutil.copytree(entry / "tsdb", tsdb, copy_function=os.link)
        t0 = time.perf_counter()
        with PrometheusServer(tsdb, ready_timeout=300) as prom:
            print(f"  prometheus: ready in {time.perf_counter() - t0:.1f} s at {prom.url}", flush=True)
            end = START + round(args.days * 86400 / args.step) * args.step
            out = work / "replay"
            argv = [sys.executable, "-m", "kvert.cli.main", "scenario", "import", str(entry / "cluster.yaml"),
                    "--prometheus", prom.url, "--from", str(START), "--to", str(end), "--step", f"{args.step}s",
                    "--no-progress", "-o", str(out)]
            print(f"  running: {' '.join(argv[1:])}", flush=True)
            stderr = work / "import.stderr"
            with stderr.open("w") as err:
                rc, wall, peak = run_child(argv, stderr=err, cwd=ROOT)
            prom_peak = _vm_hwm(prom.proc.pid)
        warnings = [line for line in stderr.read_text().splitlines() if line.startswith("warning:")]
        if rc != 0:
            print(f"  import FAILED ({rc}):\n{stderr.read_text()[-3000:]}")
            return {}
        samples = 2 * meta["containers"] * round(args.days * 86400 / args.step)
        print(f"  import: {fmt_seconds(wall)}, peak RSS {fmt_bytes(peak)} (os.wait4 ru_maxrss of the kvert process); "
              f"{samples / wall:,.0f} grid values (cpu + memory) a second; {len(warnings)} warnings; "
              f"scenario directory {fmt_bytes(_du(out))}", flush=True)
        for w in warnings[:5]:
            print(f"    {w[:200]}")
        print(f"  aim: <= {AIM_IMPORT_SECONDS / 60:g} min and <= {fmt_bytes(AIM_IMPORT_BYTES)}: "
              f"{wall / AIM_IMPORT_SECONDS:.2f}x the time, {peak / AIM_IMPORT_BYTES:.2f}x the memory"
              + ("  (within the aim)" if wall <= AIM_IMPORT_SECONDS and peak <= AIM_IMPORT_BYTES
                 else "  <-- over the aim"),
              flush=True)
        print(f"  prometheus: peak RSS {fmt_bytes(prom_peak)} (VmHWM of the server)", flush=True)
        return {"import_seconds": wall, "import_peak_bytes": peak, "prometheus_peak_bytes": prom_peak,
                "write_seconds": meta["write_seconds"], "backfill_seconds": meta["backfill_seconds"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- 2. the imported scenario, in memory -------------------------------------------------------------------

def build_imported(out: Path, nodes: int, pods: int, days: float) -> dict:
    """The imported equivalent of ``large_scenario(nodes, pods, days)`` in ``out`` (the child of
    ``bench_simulate``): a RecordedHistory made with numpy, ``import_scenario``, and the
    scenario cut to the one policy InPlaceOrRecreate."""
    import yaml

    from kvert.sim.importer import SCENARIO_FILE, import_scenario
    from kvert.sim.recorded import ContainerSeries, PodRecord, RecordedHistory

    figures: dict[str, float] = {}
    t0 = time.perf_counter()
    step = 60.0
    steps = round(days * 86400 / step)
    names = cluster_names(max(1, pods // REPLICAS), REPLICAS, "app")
    all_pods = [(d, pod) for d, _, ps in names for pod in ps]
    times = np.arange(steps, dtype=np.float64) * step
    cpu = np.empty((len(all_pods), steps))
    memory = np.empty((len(all_pods), steps))
    nodes_list = node_names(nodes)
    containers, records = [], {}
    for i, (d, pod) in enumerate(all_pods):
        cpu[i], memory[i] = usage(i, times)
        containers.append(ContainerSeries(NAMESPACE, pod, "app", cpu[i], memory[i]))
        records[(NAMESPACE, pod)] = PodRecord(NAMESPACE, pod, "Deployment", d, nodes_list[i % nodes])
    history = RecordedHistory(float(START), step, steps, containers, records, source="replay_bench (in memory)")
    objects = snapshot_objects(nodes, names, vpa_mode="InPlaceOrRecreate")
    figures["history_seconds"] = time.perf_counter() - t0
    figures["history_bytes"] = float(cpu.nbytes + memory.nbytes)
    t1 = time.perf_counter()
    result = import_scenario(objects, history, out, name=f"imported-{nodes}n-{pods}p")
    figures["import_seconds"] = time.perf_counter() - t1
    figures["warnings"] = len(result.warnings)
    del history, containers, cpu, memory
    t2 = time.perf_counter()
    path = out / SCENARIO_FILE
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    doc = yaml.load(path.read_text(), Loader=loader)
    doc["policies"] = [p for p in doc["policies"] if p["name"] == "InPlaceOrRecreate"]
    doc["tick"] = doc["sampleInterval"] = "60s"
    path.write_text(yaml.dump(doc, Dumper=dumper, sort_keys=False, width=120))
    figures["edit_seconds"] = time.perf_counter() - t2
    figures["directory_bytes"] = float(_du(out))
    return figures


def bench_simulate(args: argparse.Namespace) -> dict:
    from sim_bench import large_scenario

    nodes, pods, hours = args.nodes, args.pods, args.hours
    print(f"simulation: {nodes} nodes, {pods} pods, a week, first {hours:g} simulated hours "
          f"(InPlaceOrRecreate), imported next to synthetic", flush=True)
    work = Path(tempfile.mkdtemp(prefix="kvert-replay-sim-"))
    try:
        imported = work / "imported"
        result = work / "build.json"
        rc, wall, peak = run_child(self_child("build", str(imported), str(nodes), str(pods), f"{args.sim_days:g}",
                                              str(result)))
        if rc != 0:
            print(f"  building the imported directory FAILED ({rc})")
            return {}
        b = json.loads(result.read_text())
        print(f"  building the imported directory: {fmt_seconds(wall)} (history in memory "
              f"{fmt_seconds(b['history_seconds'])}, {fmt_bytes(b['history_bytes'])} of cpu + memory arrays; "
              f"import_scenario {fmt_seconds(b['import_seconds'])}; cutting the policies "
              f"{fmt_seconds(b['edit_seconds'])}), peak RSS {fmt_bytes(peak)}; directory "
              f"{fmt_bytes(b['directory_bytes'])}, {b['warnings']:.0f} warnings", flush=True)
        synthetic = large_scenario(nodes, pods, args.sim_days, work / f"large-{nodes}.yaml")
        figures: dict[str, dict] = {}
        for label, path in (("synthetic", synthetic), ("imported", imported / "scenario.yaml")):
            out = work / f"{label}.json"
            rc, wall, peak = run_child(self_child("measure", f"{label} ({nodes} nodes, {pods} pods)", str(path),
                                                  f"{hours:g}", str(out)))
            if rc != 0:
                print(f"  {label}: FAILED ({rc})")
                return {}
            figures[label] = {**json.loads(out.read_text()), "wall": wall, "peak": peak}
            print(f"  {'':<40} child process {fmt_seconds(wall)}, peak RSS {fmt_bytes(peak)}", flush=True)
        s, i = figures["synthetic"], figures["imported"]
        for f in (s, i):
            if f.get("projected_seconds") is not None:
                f["total"] = f["load"] + f["projected_seconds"]
        print(f"  {'':<30} {'synthetic':>10} {'imported':>10}   cost ratio (imported / synthetic)")
        rows = [("reading the scenario (s)", "load", 1, "{:,.1f}", False),
                ("start-up (s)", "startup", 1, "{:,.1f}", False),
                ("steady sim s / wall s", "steady", 1, "{:,.0f}", True),
                ("projected week (min)", "projected_seconds", 1 / 60, "{:,.1f}", False),
                ("  with the reading (min)", "total", 1 / 60, "{:,.1f}", False),
                ("peak RSS (GiB)", "peak", 1 / GI, "{:,.2f}", False)]
        for title, key, scale, f, inverse in rows:
            a, b_ = s.get(key), i.get(key)
            if a is None or b_ is None:
                continue
            ratio = (a / b_ if inverse else b_ / a) if a and b_ else float("nan")
            print(f"  {title:<30} {f.format(a * scale):>10} {f.format(b_ * scale):>10}   {ratio:5.2f}x")
        if s.get("total") and i.get("total"):
            ratio = i["total"] / s["total"]
            print(f"  aim: the imported week (read, started and run) within {AIM_SIM_RATIO:g}x of the synthetic one: "
                  f"{ratio:.2f}x{'  (within the aim)' if ratio <= AIM_SIM_RATIO else '  <-- over the aim'}", flush=True)
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the children -------------------------------------------------------------------------------------------

def child(argv: list[str]) -> int:
    mode, *rest = argv
    if mode == "build":
        out, nodes, pods, days, result = rest
        figures = build_imported(Path(out), int(nodes), int(pods), float(days))
        Path(result).write_text(json.dumps(figures))
        return 0
    if mode == "measure":
        import sim_bench
        label, path, hours, result = rest
        load, timed = sim_bench.load_scenario, {}

        def load_timed(p):              # measure's start-up begins after the scenario is read
            t = time.perf_counter()
            scn = load(p)
            timed["load"] = time.perf_counter() - t
            return scn

        sim_bench.load_scenario = load_timed
        figures = sim_bench.measure(label, Path(path), float(hours))
        Path(result).write_text(json.dumps({**figures, **timed}))
        return 0
    raise SystemExit(f"unknown child mode {mode!r}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--containers", type=int, default=2000, help="import: containers (pods of one container)")
    parser.add_argument("--days", type=float, default=7.0, help="import: days of history")
    parser.add_argument("--step", type=int, default=60, help="import: the scrape interval and step, seconds")
    parser.add_argument("--cache", type=Path, default=HERE / ".cache" / "replay-tsdb",
                        help="where the generated TSDBs are kept (one subdirectory per size)")
    parser.add_argument("--nodes", type=int, default=1000, help="simulation: nodes")
    parser.add_argument("--pods", type=int, default=20000, help="simulation: pods (Deployments of 10)")
    parser.add_argument("--sim-days", type=float, default=7.0, help="simulation: the scenarios' days")
    parser.add_argument("--hours", type=float, default=4.0, help="simulation: simulated hours run (then projected)")
    parser.add_argument("--memory-limit", type=float, default=0, metavar="GIB",
                        help="the address space each measured kvert process may take (default: no limit)")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--skip-simulate", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="200 containers x 1 day for the import, 100 nodes / 2 000 pods for the simulation")
    args = parser.parse_args(argv)
    global MEMORY_LIMIT
    MEMORY_LIMIT = int(args.memory_limit * GI)
    if args.quick:
        args.containers, args.days, args.nodes, args.pods = 200, 1.0, 100, 2000
    if not args.skip_import:
        bench_import(args)
    if not args.skip_simulate:
        bench_simulate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
