"""``RealPodControl``: a controller creating and deleting its pods, with the events
upstream records for them (``SuccessfulCreate``/``FailedCreate``, ``SuccessfulDelete``/
``FailedDelete``), shared by the ReplicaSet (and ReplicationController) and DaemonSet
controllers."""

from __future__ import annotations

from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.client.base import Client
from kvert.client.events import EventRecorder


async def create_pod(client: Client, recorder: EventRecorder, owner: dict[str, Any],
                     pod: dict[str, Any]) -> dict[str, Any]:
    try:
        created = await client.create("pods", pod, namespace=owner["metadata"]["namespace"])
    except ApiError as e:
        await recorder.record(owner, "Warning", "FailedCreate", f"Error creating: {e}")
        raise
    await recorder.record(owner, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
    return created


async def delete_pod(client: Client, recorder: EventRecorder, owner: dict[str, Any],
                     pod: dict[str, Any]) -> None:
    """NotFound is raised without an event: the pod is gone, as wanted."""
    name = pod["metadata"]["name"]
    try:
        await client.delete("pods", name, namespace=pod["metadata"]["namespace"])
    except NotFound:
        raise
    except ApiError as e:
        await recorder.record(owner, "Warning", "FailedDelete", f"Error deleting: {e}")
        raise
    await recorder.record(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
