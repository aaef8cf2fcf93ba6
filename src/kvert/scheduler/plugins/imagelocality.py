"""ImageLocality: prefer nodes that already have the pod's images. Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class ImageLocality(Plugin):
    name = "ImageLocality"
