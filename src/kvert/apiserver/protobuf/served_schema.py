"""Protobuf messages (``schema.py``'s ``MESSAGES`` format) of the kinds served for issue 28
besides storage: core/v1 PodTemplate and ComponentStatus, networking.k8s.io/v1 ServiceCIDR
and IPAddress, flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration,
as ``k8s.io/api``'s ``generated.proto`` and ``types.go`` number and shape them."""

from __future__ import annotations

# fmt: off
SERVED_MESSAGES = """
core.PodTemplate
 1 metadata meta.ObjectMeta o
 2 template core.PodTemplateSpec o
core.ComponentStatus
 1 metadata meta.ObjectMeta o
 2 conditions []core.ComponentCondition o
core.ComponentCondition
 1 type str
 2 status str
 3 message str o
 4 error str o
networking.ServiceCIDR
 1 metadata meta.ObjectMeta o
 2 spec networking.ServiceCIDRSpec o
 3 status networking.ServiceCIDRStatus o
networking.ServiceCIDRSpec
 1 cidrs []str o
networking.ServiceCIDRStatus
 1 conditions []meta.Condition o
networking.IPAddress
 1 metadata meta.ObjectMeta o
 2 spec networking.IPAddressSpec o
networking.IPAddressSpec
 1 parentRef *networking.ParentReference
networking.ParentReference
 1 group str o
 2 resource str o
 3 namespace str o
 4 name str o
flowcontrol.FlowSchema
 1 metadata meta.ObjectMeta o
 2 spec flowcontrol.FlowSchemaSpec o
 3 status flowcontrol.FlowSchemaStatus o
flowcontrol.FlowSchemaSpec
 1 priorityLevelConfiguration flowcontrol.PriorityLevelConfigurationReference
 2 matchingPrecedence i32 o
 3 distinguisherMethod *flowcontrol.FlowDistinguisherMethod o
 4 rules []flowcontrol.PolicyRulesWithSubjects o
flowcontrol.PriorityLevelConfigurationReference
 1 name str
flowcontrol.FlowDistinguisherMethod
 1 type str
flowcontrol.PolicyRulesWithSubjects
 1 subjects []flowcontrol.Subject
 2 resourceRules []flowcontrol.ResourcePolicyRule o
 3 nonResourceRules []flowcontrol.NonResourcePolicyRule o
flowcontrol.Subject
 1 kind str
 2 user *flowcontrol.UserSubject o
 3 group *flowcontrol.GroupSubject o
 4 serviceAccount *flowcontrol.ServiceAccountSubject o
flowcontrol.UserSubject
 1 name str
flowcontrol.GroupSubject
 1 name str
flowcontrol.ServiceAccountSubject
 1 namespace str
 2 name str
flowcontrol.ResourcePolicyRule
 1 verbs []str
 2 apiGroups []str
 3 resources []str
 4 clusterScope bool o
 5 namespaces []str
flowcontrol.NonResourcePolicyRule
 1 verbs []str
 6 nonResourceURLs []str
flowcontrol.FlowSchemaStatus
 1 conditions []flowcontrol.FlowSchemaCondition o
flowcontrol.FlowSchemaCondition
 1 type str o
 2 status str o
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
flowcontrol.PriorityLevelConfiguration
 1 metadata meta.ObjectMeta o
 2 spec flowcontrol.PriorityLevelConfigurationSpec o
 3 status flowcontrol.PriorityLevelConfigurationStatus o
flowcontrol.PriorityLevelConfigurationSpec
 1 type str
 2 limited *flowcontrol.LimitedPriorityLevelConfiguration o
 3 exempt *flowcontrol.ExemptPriorityLevelConfiguration o
flowcontrol.LimitedPriorityLevelConfiguration
 1 nominalConcurrencyShares *i32
 2 limitResponse flowcontrol.LimitResponse o
 3 lendablePercent *i32 o
 4 borrowingLimitPercent *i32 o
flowcontrol.LimitResponse
 1 type str
 2 queuing *flowcontrol.QueuingConfiguration o
flowcontrol.QueuingConfiguration
 1 queues i32 o
 2 handSize i32 o
 3 queueLengthLimit i32 o
flowcontrol.ExemptPriorityLevelConfiguration
 1 nominalConcurrencyShares *i32 o
 2 lendablePercent *i32 o
flowcontrol.PriorityLevelConfigurationStatus
 1 conditions []flowcontrol.PriorityLevelConfigurationCondition o
flowcontrol.PriorityLevelConfigurationCondition
 1 type str o
 2 status str o
 3 lastTransitionTime meta.Time o
 4 reason str o
 5 message str o
"""
# fmt: on

# fmt: off
ADMISSION_POLICY_MESSAGES = """
admreg.ValidatingAdmissionPolicy
 1 metadata meta.ObjectMeta o
 2 spec admreg.ValidatingAdmissionPolicySpec o
 3 status admreg.ValidatingAdmissionPolicyStatus o
admreg.ValidatingAdmissionPolicySpec
 1 paramKind *admreg.ParamKind o
 2 matchConstraints *admreg.MatchResources o
 3 validations []admreg.Validation o
 4 failurePolicy *str o
 5 auditAnnotations []admreg.AuditAnnotation o
 6 matchConditions []admreg.MatchCondition o
 7 variables []admreg.Variable o
admreg.ParamKind
 1 apiVersion str o
 2 kind str o
admreg.MatchResources
 1 namespaceSelector *meta.LabelSelector o
 2 objectSelector *meta.LabelSelector o
 3 resourceRules []admreg.NamedRuleWithOperations o
 4 excludeResourceRules []admreg.NamedRuleWithOperations o
 7 matchPolicy *str o
admreg.NamedRuleWithOperations
 1 resourceNames []str o
 2 ~ admreg.RuleWithOperations
admreg.Validation
 1 expression str
 2 message str o
 3 reason *str o
 4 messageExpression str o
admreg.AuditAnnotation
 1 key str
 2 valueExpression str
admreg.Variable
 1 name str
 2 expression str
admreg.ValidatingAdmissionPolicyStatus
 1 observedGeneration i64 o
 2 typeChecking *admreg.TypeChecking o
 3 conditions []meta.Condition o
admreg.TypeChecking
 1 expressionWarnings []admreg.ExpressionWarning o
admreg.ExpressionWarning
 2 fieldRef str
 3 warning str
admreg.ValidatingAdmissionPolicyBinding
 1 metadata meta.ObjectMeta o
 2 spec admreg.ValidatingAdmissionPolicyBindingSpec o
admreg.ValidatingAdmissionPolicyBindingSpec
 1 policyName str o
 2 paramRef *admreg.ParamRef o
 3 matchResources *admreg.MatchResources o
 4 validationActions []str o
admreg.ParamRef
 1 name str o
 2 namespace str o
 3 selector *meta.LabelSelector o
 4 parameterNotFoundAction *str o
admreg.MutatingAdmissionPolicy
 1 metadata meta.ObjectMeta o
 2 spec admreg.MutatingAdmissionPolicySpec o
admreg.MutatingAdmissionPolicySpec
 1 paramKind *admreg.ParamKind o
 2 matchConstraints *admreg.MatchResources o
 3 variables []admreg.Variable o
 4 mutations []admreg.Mutation o
 5 failurePolicy *str o
 6 matchConditions []admreg.MatchCondition o
 7 reinvocationPolicy str o
admreg.Mutation
 1 patchType str
 2 applyConfiguration *admreg.ApplyConfiguration o
 3 jsonPatch *admreg.JSONPatch o
admreg.ApplyConfiguration
 1 expression str o
admreg.JSONPatch
 1 expression str o
admreg.MutatingAdmissionPolicyBinding
 1 metadata meta.ObjectMeta o
 2 spec admreg.MutatingAdmissionPolicyBindingSpec o
admreg.MutatingAdmissionPolicyBindingSpec
 1 policyName str o
 2 paramRef *admreg.ParamRef o
 3 matchResources *admreg.MatchResources o
"""
# fmt: on
