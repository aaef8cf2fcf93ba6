"""admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
ValidatingWebhookConfiguration (``pkg/apis/admissionregistration/validation``).

Every webhook needs a fully qualified name (three DNS labels at least), unique within its
configuration; ``sideEffects`` None or NoneOnDryRun; ``admissionReviewVersions`` naming v1
or v1beta1; ``failurePolicy`` Ignore/Fail, ``matchPolicy`` Exact/Equivalent,
``reinvocationPolicy`` Never/IfNeeded, ``timeoutSeconds`` 1-30; rules with operations,
apiGroups, apiVersions and resources; and exactly one of ``clientConfig.url`` (https only,
with a host, without user information, query or fragment: ``ValidateWebhookURL``) or
``clientConfig.service`` (name, namespace, a valid port, a path of DNS subdomains:
``ValidateWebhookService``).

On update, the rules an existing configuration already broke (side effects, review
versions, duplicate names) are not enforced, as upstream. Match conditions are checked for
their names and for having an expression; the CEL itself is not compiled.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from kvert.api.gostrings import quote
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    get_dict,
    get_int,
    get_list,
    get_str,
    index,
    invalid,
    not_supported,
    required,
    too_many,
)
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update

ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
REINVOCATION_POLICIES = ("IfNeeded", "Never")
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
SIDE_EFFECTS = ("None", "NoneOnDryRun", "Some", "Unknown")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
MAX_MATCH_CONDITIONS = 64
_URL_FORM = "; desired format: https://host[/path]"


def validate_mutating_configuration(obj: Obj) -> Causes:
    return _configuration(obj, mutating=True, strict=_Strict())


def validate_validating_configuration(obj: Obj) -> Causes:
    return _configuration(obj, mutating=False, strict=_Strict())


def validate_mutating_configuration_update(new: Obj, old: Obj) -> Causes:
    return _update(new, old, mutating=True)


def validate_validating_configuration_update(new: Obj, old: Obj) -> Causes:
    return _update(new, old, mutating=False)


def _update(new: Obj, old: Obj, *, mutating: bool) -> Causes:
    errs = validate_object_meta_update(new, old)
    return errs + [c for c in _configuration(new, mutating=mutating, strict=_Strict.keeping(old))
                   if not c.field.startswith("metadata")]


class _Strict:
    """The rules a new configuration must follow; an update keeps the leniency of the
    stored one (``validationOptions`` of the Update functions)."""

    def __init__(self, side_effects: bool = True, review_versions: bool = True,
                 unique_names: bool = True):
        self.side_effects = side_effects
        self.review_versions = review_versions
        self.unique_names = unique_names

    @classmethod
    def keeping(cls, old: Obj) -> _Strict:
        hooks = [h for h in old.get("webhooks") or [] if isinstance(h, dict)]
        hook_names = [h.get("name") for h in hooks]
        return cls(
            side_effects=all(h.get("sideEffects") in NO_SIDE_EFFECTS for h in hooks),
            review_versions=all(not h.get("admissionReviewVersions") or any(
                v in ACCEPTED_REVIEW_VERSIONS for v in h["admissionReviewVersions"])
                for h in hooks),
            unique_names=len(hook_names) == len(set(map(str, hook_names))))


def _configuration(obj: Obj, *, mutating: bool, strict: _Strict) -> Causes:
    errs = validate_object_meta(obj, namespaced=False)
    seen: set[str] = set()
    for _, path, hook in dicts(get_list(obj, "webhooks", "", errs), "webhooks", errs):
        errs += _webhook(hook, path, mutating=mutating, strict=strict)
        errs += _review_versions(get_list(hook, "admissionReviewVersions", path, errs),
                                 child(path, "admissionReviewVersions"), strict.review_versions)
        name = get_str(hook, "name", path, errs)
        if strict.unique_names and name:
            if name in seen:
                errs.append(duplicate(child(path, "name"), name))
            seen.add(name)
    return errs


def _webhook(hook: Obj, path: str, *, mutating: bool, strict: _Strict) -> Causes:
    errs: Causes = []
    errs += _fully_qualified_name(get_str(hook, "name", path, errs), child(path, "name"))
    for _, rule_path, rule in dicts(get_list(hook, "rules", path, errs), child(path, "rules"), errs):
        errs += _rule(rule, rule_path)
    for field, supported in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = get_str(hook, field, path, errs)
        if hook.get(field) is not None and value not in supported:
            errs.append(not_supported(child(path, field), value, supported))
    allowed = NO_SIDE_EFFECTS if strict.side_effects else SIDE_EFFECTS
    side_effects = get_str(hook, "sideEffects", path, errs)
    if hook.get("sideEffects") is None:
        errs.append(required(child(path, "sideEffects"), f"must specify one of {', '.join(allowed)}"))
    elif side_effects not in allowed:
        errs.append(not_supported(child(path, "sideEffects"), side_effects, allowed))
    timeout = get_int(hook, "timeoutSeconds", path, errs, bits=32)
    if timeout is not None and not 1 <= timeout <= 30:
        errs.append(invalid(child(path, "timeoutSeconds"), timeout,
                            "the timeout value must be between 1 and 30 seconds"))
    for selector in ("namespaceSelector", "objectSelector"):
        errs += validate_label_selector(hook.get(selector), child(path, selector))
    if mutating and hook.get("reinvocationPolicy") is not None:
        policy = get_str(hook, "reinvocationPolicy", path, errs)
        if policy not in REINVOCATION_POLICIES:
            errs.append(not_supported(child(path, "reinvocationPolicy"), policy,
                                      REINVOCATION_POLICIES))
    errs += _client_config(get_dict(hook, "clientConfig", path, errs), child(path, "clientConfig"))
    errs += _match_conditions(get_list(hook, "matchConditions", path, errs),
                              child(path, "matchConditions"))
    return errs


def _fully_qualified_name(name: str, path: str) -> Causes:
    """``utilvalidation.IsFullyQualifiedName``."""
    if not name:
        return [required(path)]
    problems = names.is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated "
                                    "by dots")]
    return []


def _review_versions(versions: list[Any], path: str, require_recognized: bool) -> Causes:
    if not versions:
        return [required(path, f"must specify one of {', '.join(ACCEPTED_REVIEW_VERSIONS)}")]
    errs: Causes = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if not isinstance(version, str):
            continue
        if version in seen:
            errs.append(invalid(index(path, i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += names.validate_with(names.is_dns1035_label, version, index(path, i))
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        errs.append(invalid(path, versions, "must include at least one of "
                                            f"{', '.join(ACCEPTED_REVIEW_VERSIONS)}"))
    return errs


def _rule(rule: Obj, path: str) -> Causes:
    """``validateRuleWithOperations`` (subresources allowed)."""
    errs: Causes = []
    operations = get_list(rule, "operations", path, errs)
    ops_path = child(path, "operations")
    if not operations:
        errs.append(required(ops_path))
    if len(operations) > 1 and "*" in operations:
        errs.append(invalid(ops_path, operations, "if '*' is present, must not specify other "
                                                  "operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            errs.append(not_supported(index(ops_path, i), operation, OPERATIONS))
    for field, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = get_list(rule, field, path, errs)
        if not values:
            errs.append(required(child(path, field)))
        if len(values) > 1 and "*" in values:
            errs.append(invalid(child(path, field), values,
                                f"if '*' is present, must not specify other {what}"))
        if field == "apiVersions":
            errs += [required(index(child(path, field), i)) for i, v in enumerate(values) if v == ""]
    errs += _resources(get_list(rule, "resources", path, errs), child(path, "resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, SCOPES))
    return errs


def _resources(resources: list[Any], path: str) -> Causes:
    """``validateResources``: ``x/*`` and ``*/x`` exclude their more specific forms."""
    errs: Causes = []
    if not resources:
        errs.append(required(path))
    wildcard_sub: set[str] = set()
    wildcard_res: set[str] = set()
    plain = False
    for i, item in enumerate(resources):
        if not isinstance(item, str) or item == "":
            errs.append(required(index(path, i)))
            continue
        res, slash, sub = item.partition("/")
        if not slash:
            plain = item != "*"
            continue
        if res in wildcard_sub:
            errs.append(invalid(index(path, i), item, f"if '{res}/*' is present, must not "
                                                      f"specify {item}"))
        if sub in wildcard_res:
            errs.append(invalid(index(path, i), item, f"if '*/{sub}' is present, must not "
                                                      f"specify {item}"))
        if sub == "*":
            wildcard_sub.add(res)
        if res == "*":
            wildcard_res.add(sub)
    if len(resources) > 1 and "*/*" in resources:
        errs.append(invalid(path, resources, "if '*/*' is present, must not specify other "
                                             "resources"))
    if "*" in resources and plain:
        errs.append(invalid(path, resources, "if '*' is present, must not specify other "
                                             "resources without subresources"))
    return errs


def _client_config(config: Obj, path: str) -> Causes:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(url if isinstance(url, str) else "", child(path, "url"))
    errs: Causes = []
    service = get_dict(config, "service", path, errs)
    return errs + _service(service, child(path, "service"))


def validate_webhook_url(url: str, path: str) -> Causes:
    """``webhook.ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        parts.port   # noqa: B018 - raises for a port Go's parser refuses too
    except ValueError as e:
        return [required(path, f"url must be a valid URL: parse {quote(url)}: {e}{_URL_FORM}")]
    errs: Causes = []
    if parts.scheme != "https":
        errs.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not host:
        errs.append(invalid(path, host, "host must be provided" + _URL_FORM))
    if "@" in parts.netloc:
        errs.append(invalid(path, parts.netloc.rpartition("@")[0],
                            "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _service(service: Obj, path: str) -> Causes:
    """``webhook.ValidateWebhookService``."""
    errs: Causes = []
    if not get_str(service, "name", path, errs):
        errs.append(required(child(path, "name"), "service name is required"))
    if not get_str(service, "namespace", path, errs):
        errs.append(required(child(path, "namespace"), "service namespace is required"))
    port = get_int(service, "port", path, errs, bits=32)
    port = 443 if port is None else port   # the v1 default
    problems = names.is_valid_port_num(port)
    if problems:
        errs.append(invalid(child(path, "port"), port, "port is not valid: " + ", ".join(problems)))
    url_path = service.get("path")
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return errs
    path_path = child(path, "path")
    if url_path == "//":
        return errs + [invalid(path_path, url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(path_path, url_path, "must start with a '/'"))
    steps = url_path[1:]
    if steps.endswith("/"):
        steps = steps[:-1]
    for i, step in enumerate(steps.split("/")):
        if not step:
            errs.append(invalid(path_path, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [invalid(path_path, url_path, f"segment[{i}]: {problem}")
                 for problem in names.is_dns1123_subdomain(step)]
    return errs


def _match_conditions(conditions: list[Any], path: str) -> Causes:
    errs: Causes = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        errs.append(too_many(path, len(conditions), MAX_MATCH_CONDITIONS))
    seen: set[str] = set()
    for _, item_path, condition in dicts(conditions, path, errs):
        if not get_str(condition, "expression", item_path, errs).strip():
            errs.append(required(child(item_path, "expression")))
        name = get_str(condition, "name", item_path, errs)
        if not name:
            errs.append(required(child(item_path, "name")))
            continue
        errs += names.validate_qualified_name(name, child(item_path, "name"))
        if name in seen:
            errs.append(duplicate(child(item_path, "name"), name))
        seen.add(name)
    return errs


__all__ = ["validate_mutating_configuration", "validate_mutating_configuration_update",
           "validate_validating_configuration", "validate_validating_configuration_update",
           "validate_webhook_url"]
