"""The one assembly point of kvert's components.

* :mod:`kvert.cluster.assembly` -- how each component is built (the control plane, the
  controller manager, the scheduler, node agents, the VPA, leader election), shared by
  ``kvert up``, the component commands and ``kvert simulate``;
* :mod:`kvert.cluster.supervisor` -- the Component protocol and the supervisor that runs
  a process's components and reports a crashed one by name;
* :mod:`kvert.cluster.live` -- ``kvert up`` and ``kvert apiserver``;
* :mod:`kvert.cluster.metrics` -- node metrics from the in-process node agents.

This layer sits above the components (API server, scheduler, kubelet, controllers, VPA),
which never import one another, and below ``kvert.sim`` and the command line.
"""
