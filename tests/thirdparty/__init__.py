"""Third-party client suites against ``kvert up``.

The integration tests of three Kubernetes client libraries, run unedited against a ``kvert up``
that they see only through ``$KUBECONFIG`` (and a kubectl):

- **kr8s** (pinned version ``KR8S_VERSION`` in ``run.py``): its tests ship in its sdist, which
  the runner fetches with ``pip download`` into the cache. Its top-level ``conftest.py`` makes a
  kind cluster; the runner leaves it out (``--confcutdir``) and loads
  ``kvert_cluster_plugin`` instead, whose ``k8s_cluster`` fixture is the kvert cluster.
- **python-client**: ``kubernetes/e2e_test`` of kubernetes-client/python, and
- **lightkube**: ``e2e-tests`` of gtsystem/lightkube. Neither ships in a package, so they run
  only from a checkout a developer supplies with ``--source DIR``.

The suites' own dependencies live in a separate virtualenv (``.venv/thirdparty`` by default),
so kvert's environment never gets their pytest plugins.

Usage, from the repository root::

    python -m tests.thirdparty.run                         # kr8s, every test
    python -m tests.thirdparty.run kr8s test_objects.py::test_pod_create -- -x
    python -m tests.thirdparty.run python-client --source ~/src/kubernetes-client-python
    python -m tests.thirdparty.run lightkube --source ~/src/lightkube

Each test id is printed with its outcome; ``docs/third-party-suites.md`` lists the measured
counts and every test that is excluded, with why. ``tests/e2e/test_third_party_suites.py``
runs a pinned list of kr8s tests in CI.
"""
