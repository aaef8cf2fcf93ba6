"""kvert's kube-scheduler: the scheduling framework of seed 001 over numpy node arrays.

``Scheduler(client, clock, config=None, *, name="default-scheduler")`` with ``await run()`` /
``stop()``; ``config`` is a KubeSchedulerConfiguration (dict, YAML text or path), see
:mod:`kvert.scheduler.config`. Modules: ``framework`` (extension points, statuses),
``config`` (profiles), ``cache``/``snapshot`` (node arrays), ``queue``, ``plugins``,
``explain`` (the ``explain.kvert.io/scheduling`` annotation), ``scheduler`` (the loop).
"""

from kvert.scheduler.config import ConfigError, SchedulerConfig, load_config
from kvert.scheduler.framework import (
    Code,
    CycleState,
    FilterResult,
    FitError,
    Framework,
    Plugin,
    Status,
)
from kvert.scheduler.scheduler import Scheduler

__all__ = ["Code", "ConfigError", "CycleState", "FilterResult", "FitError", "Framework", "Plugin",
           "Scheduler", "SchedulerConfig", "Status", "load_config"]
