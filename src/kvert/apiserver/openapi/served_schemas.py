# ruff: noqa: E501  (schema text: one field per line, as schemas.py, which pyproject exempts)
"""OpenAPI text (``schemas.py``'s format) of the kinds served for issue 28 besides storage:
core/v1 PodTemplate and ComponentStatus, networking.k8s.io/v1 ServiceCIDR and IPAddress,
flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration. Nested parts
kvert does not describe field by field are plain objects."""

from __future__ import annotations

SERVED = r"""
@core.v1.PodTemplate kind
A template for pods, for controllers to make pods from.
template  PodTemplateSpec  The pods' metadata and spec.

@core.v1.ComponentStatus kind
The health of a control plane component. Deprecated upstream since 1.19; kvert lists none.
conditions  [ComponentCondition]  The component's conditions.

@core.v1.ComponentCondition
One condition of a component.
type!    str  Healthy.
status!  str  True, False or Unknown.
message  str  Message about the condition.
error    str  The error, when the component is unhealthy.

@networking.v1.ServiceCIDR kind
A range of IP addresses Services' cluster IPs are allocated from.
spec    ServiceCIDRSpec    The CIDRs.
status  ServiceCIDRStatus  The range's state.

@networking.v1.ServiceCIDRSpec
The CIDRs of a ServiceCIDR.
cidrs  [str]  One CIDR, or one per IP family. Immutable, but a single-stack range may gain the other family.

@networking.v1.ServiceCIDRStatus
The observed state of a ServiceCIDR.
conditions  [meta.v1.Condition]  Ready and its reason.

@networking.v1.IPAddress kind
An IP address allocated to a Service, named after the address (canonical form).
spec  IPAddressSpec  What the address is allocated to.

@networking.v1.IPAddressSpec
The object an IP address belongs to.
parentRef!  ParentReference  The object that owns the address.

@networking.v1.ParentReference
A reference to the object an IP address belongs to.
group      str  API group of the object.
resource!  str  Resource of the object.
namespace  str  Namespace of the object.
name!      str  Name of the object.

@flowcontrol.v1.FlowSchema kind
Which requests go to which priority level, in API Priority and Fairness. kvert stores these; its API server's own in-flight limits do not read them.
spec    FlowSchemaSpec    The matching rules and their priority level.
status  FlowSchemaStatus  The schema's conditions.

@flowcontrol.v1.FlowSchemaSpec
The requests a FlowSchema matches.
priorityLevelConfiguration!  PriorityLevelConfigurationReference  The priority level matched requests go to.
matchingPrecedence           int32                    Lower values match first (1..10000). Default 1000.
distinguisherMethod          FlowDistinguisherMethod  How flows are told apart: ByUser or ByNamespace.
rules                        [obj]                    The subjects and resource or non-resource rules; any match.

@flowcontrol.v1.PriorityLevelConfigurationReference
A priority level by name.
name!  str  Name of the PriorityLevelConfiguration.

@flowcontrol.v1.FlowDistinguisherMethod
How requests are divided into flows.
type!  str(ByNamespace|ByUser)  ByUser or ByNamespace.

@flowcontrol.v1.FlowSchemaStatus
The observed state of a FlowSchema.
conditions  [obj]  Dangling and others.

@flowcontrol.v1.PriorityLevelConfiguration kind
A priority level of API Priority and Fairness: its share of the server's concurrency and its queues. kvert stores these; its API server does not apply them.
spec    PriorityLevelConfigurationSpec    Exempt or Limited, and the limits.
status  PriorityLevelConfigurationStatus  The level's conditions.

@flowcontrol.v1.PriorityLevelConfigurationSpec
A priority level's configuration.
type!    str(Exempt|Limited)  Exempt: never limited; Limited: limited and queued.
limited  obj                  The limits of a Limited level.
exempt   obj                  The shares of an Exempt level.

@flowcontrol.v1.PriorityLevelConfigurationStatus
The observed state of a priority level.
conditions  [obj]  The level's conditions.
"""

ADMISSION_POLICIES = r"""
@admissionregistration.v1.ValidatingAdmissionPolicy kind
CEL rules that accept or reject requests, applied through bindings. kvert stores policies; it does not enforce them.
spec    ValidatingAdmissionPolicySpec    The rules and what they match.
status  ValidatingAdmissionPolicyStatus  Type checking results.

@admissionregistration.v1.ValidatingAdmissionPolicySpec
A validating policy.
paramKind         ParamKind        The kind of the parameter resource bindings name.
matchConstraints  MatchResources   The requests the policy applies to.
validations       [obj]            CEL expressions that must hold.
failurePolicy     str(Fail|Ignore)  What an evaluation error does. Default Fail.
auditAnnotations  [obj]            Audit annotations computed by CEL.
matchConditions   [MatchCondition]  CEL preconditions.
variables         [obj]            Named CEL expressions.

@admissionregistration.v1.ParamKind
The kind of a policy's parameter resource.
apiVersion  str  API group/version of the parameter resource.
kind        str  Kind of the parameter resource.

@admissionregistration.v1.MatchResources
The requests a policy or binding matches.
namespaceSelector     meta.v1.LabelSelector  Namespaces matched. Default: all.
objectSelector        meta.v1.LabelSelector  Objects matched. Default: all.
resourceRules         [obj]                  Operations and resources matched.
excludeResourceRules  [obj]                  Operations and resources excluded.
matchPolicy           str(Equivalent|Exact)  Whether equivalent versions of a resource match. Default Equivalent.

@admissionregistration.v1.ValidatingAdmissionPolicyStatus
The observed state of a policy.
observedGeneration  int64              The generation checked.
typeChecking        obj                The warnings of type checking.
conditions          [meta.v1.Condition]  The policy's conditions.

@admissionregistration.v1.ValidatingAdmissionPolicyBinding kind
Binds a ValidatingAdmissionPolicy to parameters and resources.
spec  ValidatingAdmissionPolicyBindingSpec  The policy, its parameters and what it applies to.

@admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec
A validating policy binding.
policyName         str             The policy bound.
paramRef           ParamRef        The parameter resource.
matchResources     MatchResources  Further restricts what the policy applies to.
validationActions  [str]           Deny, Warn and/or Audit.

@admissionregistration.v1.ParamRef
The parameter resource of a binding.
name                     str                    Name of the parameter resource.
namespace                str                    Its namespace.
selector                 meta.v1.LabelSelector  Selects several parameter resources.
parameterNotFoundAction  str(Allow|Deny)        What a missing parameter does.

@admissionregistration.v1.MutatingAdmissionPolicy kind
CEL mutations applied to requests, through bindings (GA in 1.36). kvert stores policies; it does not apply them.
spec  MutatingAdmissionPolicySpec  The mutations and what they match.

@admissionregistration.v1.MutatingAdmissionPolicySpec
A mutating policy.
paramKind           ParamKind         The kind of the parameter resource bindings name.
matchConstraints    MatchResources    The requests the policy applies to.
variables           [obj]             Named CEL expressions.
mutations           [obj]             ApplyConfiguration or JSONPatch mutations.
failurePolicy       str(Fail|Ignore)  What an evaluation error does. Default Fail.
matchConditions     [MatchCondition]  CEL preconditions.
reinvocationPolicy  str(IfNeeded|Never)  Whether the policy runs again after later mutations. Default Never.

@admissionregistration.v1.MutatingAdmissionPolicyBinding kind
Binds a MutatingAdmissionPolicy to parameters and resources.
spec  MutatingAdmissionPolicyBindingSpec  The policy, its parameters and what it applies to.

@admissionregistration.v1.MutatingAdmissionPolicyBindingSpec
A mutating policy binding.
policyName      str             The policy bound.
paramRef        ParamRef        The parameter resource.
matchResources  MatchResources  Further restricts what the policy applies to.
"""
