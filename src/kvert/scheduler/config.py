"""Scheduler configuration: a ``KubeSchedulerConfiguration`` (dict, YAML text or file).

Accepted fields (``kubescheduler.config.k8s.io/v1``; other fields such as leaderElection are
ignored)::

    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    percentageOfNodesToScore: 0          # 0: adaptive (50 - nodes/125, >= 5%, >= 100 nodes)
    podInitialBackoffSeconds: 1
    podMaxBackoffSeconds: 10
    profiles:
    - schedulerName: default-scheduler
      percentageOfNodesToScore: 50       # per profile, overrides the global value
      plugins:
        multiPoint: {enabled: [{name, weight}], disabled: [{name}]}
        score:      {enabled: [{name: NodeResourcesFit, weight: 5}], disabled: [{name: "*"}]}
        filter / preFilter / postFilter / preScore / reserve / permit / preBind / bind /
        postBind / queueSort / preEnqueue: the same shape
      pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}

Plugin sets merge as Kubernetes merges them (``mergePluginSet``, then the framework's
``expandMultiPointPlugins``): the defaults are the ``multiPoint`` list of
:func:`kvert.scheduler.plugins.default_plugins` for the scheduler's feature gates;
``multiPoint.disabled`` removes defaults
(``*`` all of them), ``multiPoint.enabled`` re-configures a default in place (its weight) or
appends; a plugin enabled at a specific extension point overrides its multiPoint entry there,
``disabled`` at a point removes it from that point only. Score weights are taken from
``score.enabled`` first, then ``multiPoint`` (a re-configured default without a weight loses
its default weight); a weight of 0 or none means 1, and like kube-scheduler any other int32
is accepted. Every profile must use the same QueueSort plugin, and needs one.

``pluginConfig`` (``validatePluginConfig`` and ``NewFramework``): one entry per plugin name
(a second one is a ``Duplicate value``); the args of an enabled plugin are validated and
defaulted by the plugin; args of a plugin the profile does not enable are ignored -- v1
defaulting adds args for every default plugin, so ``NewFramework`` initializes only the
plugins it needs -- except that, as in kube-scheduler, the args of DefaultPreemption,
InterPodAffinity, NodeAffinity, NodeResourcesBalancedAllocation, PodTopologySpread and
VolumeBinding are validated whether or not the plugin is enabled. Args of a plugin kvert does
not know are ignored unless the plugin is enabled (then it ``does not exist``). An args error
names the field: ``profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value``.

Errors are :class:`ConfigError` naming the field (nothing is half-applied).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kvert.scheduler.cache import NodeCache
from kvert.scheduler.framework import EXTENSION_POINTS, Framework, Handle, implements
from kvert.scheduler.plugins import REGISTRY, default_plugins
from kvert.scheduler.plugins.noderesources import ConfigError as _ArgsError

DEFAULT_SCHEDULER_NAME = "default-scheduler"
API_GROUP = "kubescheduler.config.k8s.io"


class ConfigError(ValueError):
    """An invalid scheduler configuration (the message names the field)."""


@dataclass
class ProfileConfig:
    scheduler_name: str
    plugins: dict = field(default_factory=dict)
    plugin_config: dict[str, dict] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfig:
    profiles: list[ProfileConfig]
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0

    def profile(self, name: str) -> ProfileConfig | None:
        return next((p for p in self.profiles if p.scheduler_name == name), None)


def _percentage(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ConfigError(f"{path}: Invalid value: {value!r}: not in valid range [0-100]")
    return value


def _seconds(value: Any, default: float, path: str) -> float:
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{path}: Invalid value: {value!r}: must be greater than 0")
    return float(value)


def load_config(config: Any = None, *, default_name: str = DEFAULT_SCHEDULER_NAME) -> SchedulerConfig:
    """Parse a configuration: None (one default profile named ``default_name``), a dict, YAML
    text, a path to a YAML file, or an already parsed :class:`SchedulerConfig`."""
    if isinstance(config, SchedulerConfig):
        return config
    if config is None:
        raw: Any = {}
    elif isinstance(config, Path) or (isinstance(config, str) and "\n" not in config
                                      and config.endswith((".yaml", ".yml", ".json"))):
        try:
            raw = yaml.safe_load(Path(config).read_text())
        except OSError as e:
            raise ConfigError(f"cannot read scheduler configuration {config}: {e}") from e
        except yaml.YAMLError as e:
            raise ConfigError(f"scheduler configuration {config} is not valid YAML: {e}") from e
    elif isinstance(config, str):
        try:
            raw = yaml.safe_load(config)
        except yaml.YAMLError as e:
            raise ConfigError(f"scheduler configuration is not valid YAML: {e}") from e
    else:
        raw = config
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("scheduler configuration must be a mapping (KubeSchedulerConfiguration)")
    api_version = raw.get("apiVersion")
    if api_version is not None and not str(api_version).startswith(API_GROUP + "/"):
        raise ConfigError(f"apiVersion: Unsupported value: {api_version!r}: expected "
                          f"{API_GROUP}/v1")
    kind = raw.get("kind")
    if kind is not None and kind != "KubeSchedulerConfiguration":
        raise ConfigError(f"kind: Unsupported value: {kind!r}: expected KubeSchedulerConfiguration")
    profiles_raw = raw.get("profiles")
    if profiles_raw is None:
        profiles_raw = [{"schedulerName": default_name}]
    if not isinstance(profiles_raw, list) or not profiles_raw:
        raise ConfigError("profiles: Required value: at least one profile is required")
    profiles: list[ProfileConfig] = []
    seen: set[str] = set()
    for i, p in enumerate(profiles_raw):
        path = f"profiles[{i}]"
        if not isinstance(p, dict):
            raise ConfigError(f"{path}: must be a mapping")
        name = p.get("schedulerName", default_name if len(profiles_raw) == 1 else None)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{path}.schedulerName: Required value")
        if name in seen:
            raise ConfigError(f"{path}.schedulerName: Duplicate value: {name!r}")
        seen.add(name)
        plugins = p.get("plugins") or {}
        if not isinstance(plugins, dict):
            raise ConfigError(f"{path}.plugins: must be a mapping")
        for point, ps in plugins.items():
            if point != "multiPoint" and point not in EXTENSION_POINTS:
                raise ConfigError(f"{path}.plugins.{point}: unknown extension point; known: "
                                  + ", ".join(("multiPoint",) + EXTENSION_POINTS))
            _check_plugin_set(ps, f"{path}.plugins.{point}")
        pc: dict[str, dict] = {}
        for j, entry in enumerate(p.get("pluginConfig") or []):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ConfigError(f"{path}.pluginConfig[{j}].name: Required value")
            if entry["name"] in pc:
                raise ConfigError(f"{path}.pluginConfig[{j}]: Duplicate value: {entry['name']!r}")
            args = entry.get("args") or {}
            if not isinstance(args, dict):
                raise ConfigError(f"{path}.pluginConfig[{j}].args: must be a mapping")
            pc[entry["name"]] = args
        _validate_plugin_args(plugins, pc, path)
        profiles.append(ProfileConfig(
            name, plugins, pc,
            _percentage(p.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore")))
    cfg = SchedulerConfig(
        profiles,
        _percentage(raw.get("percentageOfNodesToScore"), "percentageOfNodesToScore"),
        _seconds(raw.get("podInitialBackoffSeconds"), 1.0, "podInitialBackoffSeconds"),
        _seconds(raw.get("podMaxBackoffSeconds"), 10.0, "podMaxBackoffSeconds"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        raise ConfigError("podMaxBackoffSeconds: Invalid value: must be greater than or equal to "
                          "podInitialBackoffSeconds")
    # Build every profile once against a throwaway handle: bad plugin names or args fail here.
    frameworks = [build_framework(p, Handle(NodeCache())) for p in cfg.profiles]
    sorts = {(type(f.queue_sort).__name__,
              repr(p.plugin_config.get(getattr(f.queue_sort, "name", ""))))
             for f, p in zip(frameworks, cfg.profiles)}
    if len(sorts) > 1:
        raise ConfigError("profiles: Invalid value: every profile must use the same queueSort "
                          "plugin with the same arguments")
    return cfg


# validatePluginConfig validates these plugins' args even when the profile does not enable them
VALIDATED_ARGS = ("DefaultPreemption", "InterPodAffinity", "NodeAffinity",
                  "NodeResourcesBalancedAllocation", "PodTopologySpread", "VolumeBinding")
_FIELD_PATH = re.compile(r"^[A-Za-z][\w.\[\]]*: ")
_OLD_PREFIX = re.compile(r"^pluginConfig\[[^\]]*\]\.args\.?")


def _args_error(path: str, e: Exception) -> ConfigError:
    """An args error under ``path`` (``profiles[i].pluginConfig[j].args``): a message that
    starts with a field path relative to the args (or kvert's older
    ``pluginConfig[Name].args.`` prefix) is joined to it."""
    msg = _OLD_PREFIX.sub("", str(e))
    return ConfigError(f"{path}.{msg}" if _FIELD_PATH.match(msg) else f"{path}: {msg}")


def _validate_plugin_args(plugins: dict, pc: dict[str, dict], path: str) -> None:
    """Build each configured plugin the profile needs (and the always-validated ones) once
    against a throwaway cache, so a bad arg is reported with its pluginConfig index."""
    needed = {n for n, _ in merged_multipoint(plugins)}
    for point in EXTENSION_POINTS:
        needed.update(n for n, _ in _names((plugins.get(point) or {}).get("enabled")))
    handle = None
    for j, (name, args) in enumerate(pc.items()):
        factory = REGISTRY.get(name)
        if factory is None or (name not in needed and name not in VALIDATED_ARGS):
            continue
        handle = handle or Handle(NodeCache())
        try:
            factory(args, handle)
        except (_ArgsError, ValueError, TypeError) as e:
            raise _args_error(f"{path}.pluginConfig[{j}].args", e) from e


def _check_plugin_set(ps: Any, path: str) -> None:
    if ps is None:
        return
    if not isinstance(ps, dict):
        raise ConfigError(f"{path}: must be a mapping with enabled/disabled lists")
    for which in ("enabled", "disabled"):
        for k, entry in enumerate(ps.get(which) or []):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ConfigError(f"{path}.{which}[{k}].name: Required value")
            w = entry.get("weight")
            if w is not None and (not isinstance(w, int) or isinstance(w, bool)
                                  or not -2**31 <= w < 2**31):
                raise ConfigError(f"{path}.{which}[{k}].weight: Invalid value: {w!r}: "
                                  "must be an int32")


def _names(entries: Any) -> list[tuple[str, int]]:
    return [(e["name"], int(e.get("weight") or 0)) for e in entries or []]


def merged_multipoint(plugins: dict, gates: Mapping[str, bool] | None = None
                      ) -> list[tuple[str, int]]:
    """``mergePluginSet`` of the default multiPoint plugins (for the scheduler's feature
    gates) with the profile's."""
    mp = plugins.get("multiPoint") or {}
    disabled = {n for n, _ in _names(mp.get("disabled"))}
    custom = _names(mp.get("enabled"))
    custom_index = {n: i for i, (n, _) in enumerate(custom)}
    replaced: set[int] = set()
    out: list[tuple[str, int]] = []
    if "*" not in disabled:
        for name, weight in default_plugins(gates):
            if name in disabled:
                continue
            if name in custom_index:
                i = custom_index[name]
                replaced.add(i)
                out.append(custom[i])
            else:
                out.append((name, weight))
    for i, entry in enumerate(custom):
        if i not in replaced:
            out.append(entry)
    return out


def build_framework(profile: ProfileConfig, handle: Handle) -> Framework:
    """Instantiate a profile's plugins and lay them out per extension point."""
    plugins = profile.plugins
    multipoint = merged_multipoint(plugins, handle.gates)
    path = f"profile {profile.scheduler_name!r}"
    needed: list[str] = [n for n, _ in multipoint]
    for point in EXTENSION_POINTS:
        for n, _ in _names((plugins.get(point) or {}).get("enabled")):
            if n not in needed:
                needed.append(n)
    instances: dict[str, Any] = {}
    for name in needed:
        factory = REGISTRY.get(name)
        if factory is None:
            raise ConfigError(f"{path}: plugin {name!r} does not exist; known plugins: "
                              + ", ".join(sorted(REGISTRY)))
        try:
            instances[name] = factory(profile.plugin_config.get(name, {}), handle)
        except (_ArgsError, ValueError, TypeError) as e:
            raise ConfigError(f"{path}: {e}") from e

    points: dict[str, list[Any]] = {}
    for point in EXTENSION_POINTS:
        ps = plugins.get(point) or {}
        specific = [n for n, _ in _names(ps.get("enabled"))]
        for n in specific:
            if not implements(instances[n], point):
                raise ConfigError(f"{path}: plugin {n!r} does not implement the {point} "
                                  "extension point")
        if len(set(specific)) != len(specific):
            raise ConfigError(f"{path}: a plugin is enabled twice at {point}")
        disabled = {n for n, _ in _names(ps.get("disabled"))}
        if "*" in disabled:
            order = specific
        else:
            overrides, mp_only = [], []
            for n, _ in multipoint:
                if not implements(instances[n], point) or n in disabled:
                    continue
                if n in specific:
                    overrides.append(n)
                elif n in mp_only:
                    raise ConfigError(f"{path}: plugin {n!r} already registered as {point}")
                else:
                    mp_only.append(n)
            order = overrides + mp_only + [n for n in specific if n not in overrides]
        points[point] = [instances[n] for n in order]

    weights: dict[str, int] = {}
    scoring = {p.name for p in points["score"]}
    for n, w in _names((plugins.get("score") or {}).get("enabled")) + multipoint:
        if n in weights or n not in scoring:
            continue
        weights[n] = w or 1
    if len(points["queueSort"]) != 1:
        raise ConfigError(f"{path}: exactly one queueSort plugin must be enabled, found "
                          f"{len(points['queueSort'])}")
    if not points["bind"]:
        raise ConfigError(f"{path}: at least one bind plugin is needed")
    return Framework(profile.scheduler_name, points, weights, handle,
                     profile.percentage_of_nodes_to_score)
