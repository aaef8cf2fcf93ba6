"""The taint eviction controller (``taint-eviction-controller``): pods on a node with
``NoExecute`` taints they do not tolerate are deleted (seed 001's taint-based eviction).

For a pod bound to a node with NoExecute taints (whenever the node's NoExecute taints or the
pod's tolerations or node change):

* a taint not tolerated: the pod is deleted now;
* all tolerated, some for ``tolerationSeconds`` (the first matching toleration of each
  taint; the smallest of their seconds, 0 or less meaning now): deleted that long after this
  controller saw it -- counted from then, not from the taint's ``timeAdded``, and an eviction
  already scheduled is kept as it is when the tolerations change;
* all tolerated for ever: nothing; an eviction scheduled before is cancelled.

When the taints go before the time comes the eviction is cancelled (event
``TaintManagerEviction`` "Cancelling deletion of Pod ns/name"). An eviction writes the
event "Marking for deletion Pod ns/name", the pod's ``DisruptionTarget`` condition (reason
``DeletionByTaintManager``, "Taint manager: deleting due to NoExecute taint") and deletes
it with its own grace period. The DefaultTolerationSeconds admission plugin gives every pod
300 s for ``not-ready`` and ``unreachable``, so pods leave a dead node after 5 minutes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import format_time
from kvert.api.taints import NO_EXECUTE, find_untolerated_taint, no_execute_eviction_delay
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler

log = logging.getLogger(__name__)

NODE_INDEX = "spec.nodeName"
RETRIES = 5
CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
             "message": "Taint manager: deleting due to NoExecute taint"}


def no_execute_taints(node: dict | None) -> list[dict]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == NO_EXECUTE]


@dataclass
class Scheduled:
    created: float
    fire_at: float


class TaintEvictionController(Controller):
    name = "taint-eviction-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None, workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.recorder = EventRecorder(client, clock, self.name)
        self.nodes = self.use("nodes")
        self.pods = self.use("pods")
        self.pods.add_index(NODE_INDEX, lambda p: [(p.get("spec") or {}).get("nodeName") or ""])
        self.nodes.add_handlers(safe_handler(lambda n: self._node_changed(None, n)),
                                safe_handler(self._node_changed), safe_handler(lambda n: self._node_changed(n, None)))
        self.pods.add_handlers(safe_handler(lambda p: self._pod_changed(None, p)), safe_handler(self._pod_changed),
                               safe_handler(self._pod_deleted))
        self.scheduled: dict[tuple[str, str], Scheduled] = {}
        self.deleted: list[tuple[str, str]] = []        # the pods it deleted, latest 1000

    # ---- events: work is keyed by the node or the pod, as upstream's two queues -----------------

    def _node_changed(self, old: dict | None, new: dict | None) -> None:
        node = new or old or {}
        if old is not None and new is not None and no_execute_taints(old) == no_execute_taints(new):
            return
        self.enqueue(("node", (node.get("metadata") or {}).get("name", "")))

    def _pod_changed(self, old: dict | None, new: dict) -> None:
        spec, old_spec = new.get("spec") or {}, (old or {}).get("spec") or {}
        if old is not None and spec.get("tolerations") == old_spec.get("tolerations") and \
                spec.get("nodeName") == old_spec.get("nodeName"):
            return
        meta = new.get("metadata") or {}
        self.enqueue(("pod", meta.get("namespace", ""), meta.get("name", "")))

    def _pod_deleted(self, pod: dict) -> None:
        meta = pod.get("metadata") or {}
        self.scheduled.pop((meta.get("namespace", ""), meta.get("name", "")), None)

    # ---- sync ------------------------------------------------------------------------------------------

    async def sync(self, key: tuple) -> None:
        kind = key[0]
        now = self.clock.now()
        if kind == "node":
            node = self.nodes.get(key[1])
            taints = no_execute_taints(node)
            for pod in self.pods.by_index(NODE_INDEX, key[1]):
                await self._process(pod, taints, now)
        elif kind == "pod":
            found = self.pods.get(key[2], key[1])
            if found is None:
                await self._cancel((key[1], key[2]))
                return
            node_name = (found.get("spec") or {}).get("nodeName")
            if not node_name:
                return
            taints = no_execute_taints(self.nodes.get(node_name))
            if taints:
                await self._process(found, taints, now)
        elif kind == "fire":
            await self._fire((key[1], key[2]))

    async def _process(self, pod: dict, taints: list[dict], now: float) -> None:
        """``processPodOnNode``."""
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        if not taints:
            await self._cancel(key)
            return
        delay = no_execute_eviction_delay(taints, (pod.get("spec") or {}).get("tolerations"))
        if delay is None:                     # tolerated for ever
            await self._cancel(key)
            return
        if delay == 0 and find_untolerated_taint(taints, (pod.get("spec") or {}).get("tolerations")) is not None:
            await self._cancel(key)
            self.scheduled[key] = Scheduled(now, now)
            await self._fire(key)
            return
        existing = self.scheduled.get(key)
        if existing is not None and existing.created + delay < now + delay:
            return                            # the eviction already scheduled stands
        await self._cancel(key)
        self.scheduled[key] = Scheduled(now, now + delay)
        if delay <= 0:
            await self._fire(key)
        else:
            self.enqueue_after(("fire", *key), delay)

    async def _cancel(self, key: tuple[str, str]) -> None:
        if self.scheduled.pop(key, None) is not None:
            await self._event(key, f"Cancelling deletion of Pod {key[0]}/{key[1]}")

    async def _fire(self, key: tuple[str, str]) -> None:
        entry = self.scheduled.get(key)
        if entry is None or self.clock.now() < entry.fire_at:
            return
        del self.scheduled[key]
        await self._event(key, f"Marking for deletion Pod {key[0]}/{key[1]}")
        for attempt in range(RETRIES):
            try:
                await self._delete(key)
                self.deleted.append(key)
                del self.deleted[:-1000]
                return
            except NotFound:
                return
            except ApiError as e:
                log.info("%s: deleting pod %s/%s failed (%s); attempt %d", self.name, *key, e, attempt + 1)
                await self.clock.sleep(0.01)

    async def _delete(self, key: tuple[str, str]) -> None:
        namespace, name = key
        pod = await self.client.get("pods", name, namespace)
        status = dict(pod.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or []]
        current = next((c for c in conditions if c.get("type") == CONDITION["type"]), None)
        if current is None or any(current.get(k) != v for k, v in CONDITION.items()):
            condition = {**CONDITION, "lastProbeTime": None, "lastTransitionTime": format_time(self.clock.now())}
            generation = (pod.get("metadata") or {}).get("generation")
            if generation:
                condition["observedGeneration"] = generation
            conditions = [c for c in conditions if c.get("type") != CONDITION["type"]] + [condition]
            await self.client.patch("pods", name, {"status": {"conditions": conditions}}, "merge",
                                    namespace=namespace, subresource="status")
        await self.client.delete("pods", name, namespace=namespace)
        log.info("%s: deleted pod %s/%s", self.name, namespace, name)

    async def _event(self, key: tuple[str, str], message: str) -> None:
        ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": key[0], "name": key[1]}}
        await self.recorder.record(ref, "Normal", "TaintManagerEviction", message)
