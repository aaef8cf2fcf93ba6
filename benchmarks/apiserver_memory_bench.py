"""API server memory under issue 27's hostile load: the resident memory of a real ``kvert
apiserver`` process (its own process, default limits: --max-requests-inflight 400,
--max-mutating-requests-inflight 200) while 50 watchers stop reading and 1 200 LISTs of 300
ConfigMaps arrive at once. The issue's target: the peak stays below 1 GiB. Prints figures;
asserts nothing (exit 1 only when the setup fails).

usage: python benchmarks/apiserver_memory_bench.py [--lists N] [--objects N] [--watchers N]
           [--writes N] [--object-bytes N] [--settle SECONDS] [--rounds N] [--store URL]
           [--timeline FILE.csv]

What runs, in order, against the one server over HTTPS:
1. 300 ConfigMaps of about 1 KiB of data in namespace ``membench`` (as the admin);
2. 50 watchers on them that send their request over TLS and then never read (a 4 KiB receive
   buffer), as an RBAC-bound ordinary user, the one the in-flight limits apply to (a member
   of system:masters is served over them);
3. 3 000 updates (merge patches, as the admin), so the stalled watchers' sockets and
   buffers fill and the server cuts them off (``apiserver_terminated_watchers_total``);
4. 1 200 LISTs of the namespace's ConfigMaps by that user: 1 200 TLS connections opened
   first, then every request written at once, every answer read (and dropped) as it comes.
   429s are what --max-requests-inflight answers over the limit: counted, not retried.

The server's VmRSS (``/proc/PID/status``) is sampled every 50 ms from a thread throughout;
VmHWM (the kernel's high-water mark) is read at the end too, so a peak between two samples
is not missed.

Measured 2026-12-02 on 2 cores (a test suite running alongside): baseline 99 MiB, peak
551 MiB (0.54x the target), 422 MiB after settling; every LIST answered 200 (answers of
421 KiB fit in loopback's socket buffers, so no slot is held long enough for a 429), 50 of 50
watchers cut off. Most of the peak is per connection, not per LIST: 1 200 LISTs of one
object peak at 441 MiB too. Each TLS connection costs the server about 285 KiB, 256 KiB of
it asyncio's read buffer (``asyncio.sslproto.SSLProtocol.max_size``, a ``bytearray`` made
and zeroed per connection); what stays after settling is glibc keeping the freed buffers
(``MALLOC_MMAP_THRESHOLD_=131072`` gives 133 MiB), reused by the next flood (``--rounds 2``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import json
import socket
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from aiohttp import ClientSession, TCPConnector

from kvert.auth.tokens import TokenAuthenticator

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
from tests.e2e.conftest import KvertUp  # noqa: E402

GIB = 1 << 30
MIB = 1 << 20
TARGET = 1 * GIB
NAMESPACE = "membench"
USER = "membench-user"
SAMPLE_SECONDS = 0.05
WRITERS = 16


# -- the server process --------------------------------------------------------------------------------------

class Server(KvertUp):
    """``kvert apiserver`` (the tests' ``KvertUp``) with the default in-flight limits; its
    output is drained by a thread once it has started (a full pipe would stall the server
    during the load) and kept for a failure's report."""

    def __init__(self, data_dir: Path, store: str):
        super().__init__(data_dir, store, args=("--max-requests-inflight", "400",
                                                "--max-mutating-requests-inflight", "200"), command="apiserver")

    def start(self, timeout: float = 60.0) -> Server:
        super().start(timeout)
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self) -> None:
        proc = self.proc
        if proc is not None and proc.stdout is not None:
            for line in proc.stdout:
                self.output.append(line)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


def proc_status(pid: int, field: str) -> int:
    """``field`` (VmRSS, VmHWM) of /proc/PID/status in bytes; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024     # kB
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


class Sampler(threading.Thread):
    """VmRSS every ``SAMPLE_SECONDS``, the highest per phase."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.phase = "baseline"
        self.peaks: dict[str, int] = {}
        self.samples = 0
        self.timeline: list[tuple[float, str, int]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            rss = proc_status(self.pid, "VmRSS")
            self.samples += 1
            self.timeline.append((time.perf_counter(), self.phase, rss))
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), rss)

    def stop(self) -> None:
        self._done.set()
        self.join()

    @property
    def peak(self) -> int:
        return max(self.peaks.values(), default=0)


def mib(n: float) -> str:
    return f"{n / MIB:.0f} MiB"


# -- clients ---------------------------------------------------------------------------------------------------

def configmap(i: int, size: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:03d}", "namespace": NAMESPACE},
            "data": {"payload": "x" * size}}


def stalled_watch(host: str, port: int, context: ssl.SSLContext, token: str, rv: str) -> ssl.SSLSocket:
    """A watch that sends its request over TLS and then never reads (a tiny receive window)."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(30)
    raw.connect((host, port))
    sock = context.wrap_socket(raw, server_hostname=host)
    sock.sendall((f"GET /api/v1/namespaces/{NAMESPACE}/configmaps?watch=true&resourceVersion={rv} HTTP/1.1\r\n"
                  f"Host: {host}:{port}\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    return sock


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, int]:
    """The status and body size of one HTTP/1.1 answer, its body read and dropped as it comes."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    size = 0
    if "content-length" in headers:
        left = int(headers["content-length"])
        while left:
            chunk = await reader.read(min(left, 1 << 16))
            if not chunk:
                raise ConnectionError("short body")
            left -= len(chunk)
            size += len(chunk)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            n = int((await reader.readline()).split(b";")[0], 16)
            size += len(await reader.readexactly(n + 2)) - 2
            if n == 0:
                break
    return status, size


async def flood(host: str, port: int, context: ssl.SSLContext, token: str, n: int) -> dict:
    """``n`` LISTs at once: connections opened (TLS included) first, 100 at a time, then every
    request written together and every answer read."""
    request = (f"GET /api/v1/namespaces/{NAMESPACE}/configmaps HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Authorization: Bearer {token}\r\nAccept: application/json\r\nConnection: close\r\n\r\n").encode()
    opening = asyncio.Semaphore(100)
    codes: collections.Counter[str] = collections.Counter()
    sizes: dict[int, int] = {}
    started = time.perf_counter()

    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            async with opening:
                return await asyncio.open_connection(host, port, ssl=context, server_hostname=host, limit=1 << 17)
        except OSError as e:
            codes[f"connect failed ({type(e).__name__})"] += 1
            return None

    async def ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(request)      # every task writes before any awaits: all sent at once
            await writer.drain()
            status, size = await read_answer(reader)
            codes[str(status)] += 1
            if status == 200:
                sizes[size] = sizes.get(size, 0) + 1
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            codes[f"error ({type(e).__name__})"] += 1
        finally:
            writer.close()

    connections = [c for c in await asyncio.gather(*(connect() for _ in range(n))) if c is not None]
    sent = time.perf_counter()
    await asyncio.gather(*(ask(reader, writer) for reader, writer in connections))
    timing = {"connected": sent - started, "answered": time.perf_counter() - sent}
    return {"codes": codes, "sizes": sizes, "timing": timing}


async def terminated_watchers(http: ClientSession, base: str) -> int:
    async with http.get(f"{base}/metrics") as r:
        text = await r.text()
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith("apiserver_terminated_watchers_total{") and 'resource="configmaps"' in line)


async def run(server: Server, args: argparse.Namespace) -> None:
    kubeconfig = yaml.safe_load((server.data_dir / "kubeconfig").read_text())
    ca = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    admin = kubeconfig["users"][0]["user"]["token"]
    context = ssl.create_default_context(cadata=ca)
    base = server.url
    host, port = urlsplit(base).hostname or "127.0.0.1", urlsplit(base).port or 443
    # an ordinary user, so --max-requests-inflight applies: its token added to tokens.csv (the
    # server reads the file again when it changes), list and watch granted in the namespace
    token = TokenAuthenticator.load_or_create(server.data_dir / "tokens.csv").ensure(
        USER, ("system:authenticated",))
    json_headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
    sampler = Sampler(server.pid)
    started = time.perf_counter()
    async with ClientSession(connector=TCPConnector(ssl=context, limit=WRITERS * 2), headers=json_headers) as http:
        async def post(path: str, body: dict) -> None:
            async with http.post(base + path, data=json.dumps(body)) as r:
                if r.status != 201:
                    raise RuntimeError(f"POST {path}: {r.status} {await r.text()}")

        await post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        await post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": USER},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]})
        await post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": USER, "namespace": NAMESPACE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": USER},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}]})
        queue = list(range(args.objects))

        async def create() -> None:
            while queue:
                await post(f"/api/v1/namespaces/{NAMESPACE}/configmaps", configmap(queue.pop(), args.object_bytes))

        await asyncio.gather(*(create() for _ in range(WRITERS)))
        # the user's token and binding in effect, and the list's answer as the flood will get it
        for _ in range(100):
            async with http.get(f"{base}/api/v1/namespaces/{NAMESPACE}/configmaps",
                                headers={"Authorization": f"Bearer {token}"}) as r:
                if r.status == 200:
                    listing = await r.json()
                    break
            await asyncio.sleep(0.2)
        else:
            raise RuntimeError(f"the user cannot list: {r.status} {await r.text()}")
        if len(listing["items"]) != args.objects:
            raise RuntimeError(f"listed {len(listing['items'])} ConfigMaps, not {args.objects}")
        rv = listing["metadata"]["resourceVersion"]
        setup = time.perf_counter() - started
        await asyncio.sleep(1.0)
        baseline = proc_status(server.pid, "VmRSS")
        sampler.start()

        sampler.phase = "watchers"
        t0 = time.perf_counter()
        stalled = await asyncio.to_thread(
            lambda: [stalled_watch(host, port, context, token, rv) for _ in range(args.watchers)])
        await asyncio.sleep(1.0)
        queue = list(range(args.writes))

        async def update() -> None:
            while queue:
                i = queue.pop()
                body = {"data": {"payload": f"{i:08d}" + "y" * (args.object_bytes - 8)}}
                async with http.patch(f"{base}/api/v1/namespaces/{NAMESPACE}/configmaps/cm-{i % args.objects:03d}",
                                      data=json.dumps(body),
                                      headers={"Content-Type": "application/merge-patch+json"}) as r:
                    if r.status != 200:
                        raise RuntimeError(f"PATCH: {r.status} {await r.text()}")

        await asyncio.gather(*(update() for _ in range(WRITERS)))
        writes_seconds = time.perf_counter() - t0
        await asyncio.sleep(1.0)
        cut_after_writes = await terminated_watchers(http, base)

        rounds = []
        for k in range(1, args.rounds + 1):
            sampler.phase = f"lists {k}"
            flooded = await flood(host, port, context, token, args.lists)
            sampler.phase = f"settle {k}"
            await asyncio.sleep(args.settle)
            rounds.append((flooded, proc_status(server.pid, "VmRSS")))
        hwm = proc_status(server.pid, "VmHWM")
        cut = await terminated_watchers(http, base)
    for sock in stalled:
        sock.close()
    sampler.stop()
    wall = time.perf_counter() - started
    peak = max(sampler.peak, hwm)
    if args.timeline:
        t_first = sampler.timeline[0][0] if sampler.timeline else 0.0
        args.timeline.write_text("seconds,phase,rss_mib\n" + "".join(
            f"{t - t_first:.3f},{phase},{rss / MIB:.1f}\n" for t, phase, rss in sampler.timeline))

    print(f"  setup: {args.objects} ConfigMaps of {args.object_bytes} B in {setup:.1f} s; one LIST answer "
          f"{len(json.dumps(listing)) / 1024:.0f} KiB")
    print(f"  baseline RSS (before the load)       {mib(baseline):>10}")
    print(f"  {args.watchers} stalled watchers + {args.writes} updates: peak {mib(sampler.peaks.get('watchers', 0))}, "
          f"{args.writes / writes_seconds:.0f} updates/s, {cut_after_writes} of {args.watchers} watchers cut off")
    for k, (flooded, settled) in enumerate(rounds, 1):
        round_ = f" (round {k})" if args.rounds > 1 else ""
        by_status = ", ".join(f"{code}: {n}" for code, n in sorted(flooded["codes"].items()))
        sizes = ", ".join(f"{n} x {size / 1024:.0f} KiB" for size, n in sorted(flooded["sizes"].items()))
        print(f"  {args.lists} parallel LISTs{round_}: {by_status}  (200s: {sizes or 'none'}); connections opened "
              f"in {flooded['timing']['connected']:.1f} s, answered in {flooded['timing']['answered']:.1f} s")
        print(f"  peak RSS during the LISTs            {mib(sampler.peaks.get(f'lists {k}', 0)):>10}")
        print(f"  peak RSS after them (settling)       {mib(sampler.peaks.get(f'settle {k}', 0)):>10}")
        print(f"  RSS after {args.settle:g} s settling              {mib(settled):>10}")
    print(f"  peak RSS                             {mib(sampler.peak):>10}  (VmRSS every "
          f"{SAMPLE_SECONDS * 1000:.0f} ms, {sampler.samples} samples; VmHWM {mib(hwm)})")
    print(f"  stalled watchers terminated (apiserver_terminated_watchers_total): {cut} of {args.watchers}")
    print(f"  wall time {wall:.1f} s")
    print(f"  target: peak RSS < {TARGET // GIB} GiB: {peak / TARGET:.2f}x the target"
          + ("  (met)" if peak < TARGET else "  <-- NOT met"), flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lists", type=int, default=1200, help="parallel LISTs (default 1200)")
    parser.add_argument("--objects", type=int, default=300, help="ConfigMaps listed (default 300)")
    parser.add_argument("--object-bytes", type=int, default=1024, help="data per ConfigMap (default 1024)")
    parser.add_argument("--watchers", type=int, default=50, help="watchers that never read (default 50)")
    parser.add_argument("--writes", type=int, default=3000, help="updates while they are stalled (default 3000)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before the after-settle RSS (default 5)")
    parser.add_argument("--rounds", type=int, default=1, help="LIST floods one after the other (default 1)")
    parser.add_argument("--store", default="", help="the server's --store (default: sqlite in its data directory)")
    parser.add_argument("--timeline", type=Path, default=None, metavar="FILE.csv",
                        help="write every RSS sample (seconds, phase, MiB) to FILE.csv")
    args = parser.parse_args(argv)
    print(f"apiserver memory: kvert apiserver ({args.store or 'sqlite'}), {args.lists} parallel LISTs of "
          f"{args.objects} ConfigMaps, {args.watchers} stalled watchers, default in-flight limits (400/200)",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="kvert-membench-") as tmp:
        server = Server(Path(tmp) / "data", args.store)
        try:
            server.start()
        except RuntimeError as e:
            print(f"  setup FAILED: {e}")
            return 1
        try:
            asyncio.run(run(server, args))
        except (RuntimeError, OSError) as e:
            print(f"  setup FAILED: {e}\n  server output:\n" + "".join(server.output)[-3000:])
            return 1
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
