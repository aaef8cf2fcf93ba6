"""Test-only sample manifests: what users apply to kvert, written as real manifests."""

# A Deployment using most pod features: probes, lifecycle hooks, env valueFrom, envFrom,
# volumes of several sources, security contexts, affinity, tolerations, spread constraints,
# sidecar init containers, resources and resizePolicy.
RICH_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
  annotations: {note: "x"}
spec:
  replicas: 3
  revisionHistoryLimit: 5
  progressDeadlineSeconds: 600
  selector:
    matchLabels: {app: web}
    matchExpressions:
    - {key: tier, operator: In, values: [frontend]}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: web, tier: frontend}
    spec:
      priorityClassName: high
      terminationGracePeriodSeconds: 30
      serviceAccountName: web
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        fsGroup: 2000
        seccompProfile: {type: RuntimeDefault}
        sysctls: [{name: net.core.somaxconn, value: "1024"}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 10
            preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: web}}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}
      nodeSelector: {disk: ssd}
      imagePullSecrets: [{name: regcred}]
      initContainers:
      - name: init
        image: busybox:1.36
        command: [sh, -c, "echo init"]
      - name: sidecar
        image: envoy:v1
        restartPolicy: Always
      containers:
      - name: app
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        args: ["--port", "8080"]
        workingDir: /srv
        ports:
        - {name: http, containerPort: 8080, protocol: TCP}
        env:
        - {name: MODE, value: prod}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: CPU_LIMIT
          valueFrom: {resourceFieldRef: {containerName: app, resource: limits.cpu, divisor: 1m}}
        - name: PASSWORD
          valueFrom: {secretKeyRef: {name: db, key: password, optional: false}}
        - name: LEVEL
          valueFrom: {configMapKeyRef: {name: cfg, key: level}}
        envFrom:
        - configMapRef: {name: cfg}
          prefix: CFG_
        - secretRef: {name: db}
        resources:
          requests: {cpu: 250m, memory: 64Mi}
          limits: {cpu: "1", memory: 128Mi, ephemeral-storage: 1Gi}
        resizePolicy:
        - {resourceName: cpu, restartPolicy: NotRequired}
        - {resourceName: memory, restartPolicy: RestartContainer}
        livenessProbe:
          httpGet: {path: /healthz, port: http, scheme: HTTP, httpHeaders: [{name: X-Probe, value: "1"}]}
          initialDelaySeconds: 5
          periodSeconds: 10
          timeoutSeconds: 2
          failureThreshold: 3
        readinessProbe:
          tcpSocket: {port: 8080}
        startupProbe:
          exec: {command: [cat, /tmp/ready]}
          failureThreshold: 30
        lifecycle:
          preStop:
            exec: {command: [sh, -c, "sleep 5"]}
          postStart:
            httpGet: {path: /started, port: 8080}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
        volumeMounts:
        - {name: data, mountPath: /data}
        - {name: cfg, mountPath: /etc/cfg, readOnly: true}
        - {name: tmp, mountPath: /tmp}
        - {name: token, mountPath: /var/run/token}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
      - name: cfg
        configMap:
          name: cfg
          defaultMode: 420
          items: [{key: app.conf, path: app.conf}]
      - name: tmp
        emptyDir: {medium: Memory, sizeLimit: 64Mi}
      - name: token
        projected:
          sources:
          - serviceAccountToken: {path: token, expirationSeconds: 3600, audience: api}
          - configMap: {name: ca, items: [{key: ca.crt, path: ca.crt}]}
          - downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
      - name: host
        hostPath: {path: /var/log, type: Directory}
      - name: sec
        secret: {secretName: tls, optional: true}
"""

# One object of every other served kind (multi-document YAML).
OTHER_KINDS = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 100m, memory: 1Gi}, limits: {cpu: 500m, memory: 1Gi}}
    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
  restartPolicy: Always
  priority: 100
  overhead: {cpu: 10m}
  resources: {limits: {cpu: "2"}}
  schedulingGates: [{name: wait}]
  readinessGates: [{conditionType: x}]
  dnsConfig: {nameservers: [1.1.1.1], options: [{name: ndots, value: "2"}]}
  hostAliases: [{ip: 1.2.3.4, hostnames: [a]}]
  os: {name: linux}
  volumes:
  - name: e
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - name: c
    csi: {driver: x, volumeAttributes: {a: b}}
status:
  phase: Running
  qosClass: Burstable
  conditions: [{type: PodResizePending, status: "True", reason: Deferred}]
  containerStatuses:
  - name: c
    ready: true
    restartCount: 0
    image: nginx
    imageID: x
    allocatedResources: {cpu: 100m, memory: 1Gi}
    resources: {requests: {cpu: 100m}}
    state: {running: {startedAt: "2025-01-01T00:00:00Z"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
spec:
  taints: [{key: a, effect: NoSchedule}]
  unschedulable: false
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: 3900m, memory: 28.9Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", lastHeartbeatTime: "2025-01-01T00:00:00Z"}]
  addresses: [{type: InternalIP, address: 10.0.0.1}]
  nodeInfo: {machineID: a, systemUUID: b, bootID: c, kernelVersion: d, osImage: e, containerRuntimeVersion: f, kubeletVersion: g, kubeProxyVersion: h, operatingSystem: linux, architecture: amd64}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb}
spec:
  minAvailable: 50%
  selector: {matchLabels: {app: web}}
  unhealthyPodEvictionPolicy: AlwaysAllow
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: false
preemptionPolicy: PreemptLowerPriority
description: important
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: v}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  updatePolicy: {updateMode: InPlaceOrRecreate, minReplicas: 2}
  resourcePolicy:
    containerPolicies:
    - containerName: "*"
      minAllowed: {cpu: 50m}
      maxAllowed: {cpu: "2", memory: 4Gi}
      controlledResources: [cpu, memory]
      controlledValues: RequestsAndLimits
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
  type: ClusterIP
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {a: b}
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits: [{type: Container, default: {cpu: 500m}, defaultRequest: {cpu: 100m}, max: {memory: 1Gi}}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {requests.cpu: "10", pods: "20"}
  scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l}
spec: {holderIdentity: a, leaseDurationSeconds: 15, renewTime: "2025-01-01T00:00:00.000000Z"}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: rc}
handler: runc
overhead: {podFixed: {cpu: 10m, memory: 20Mi}}
scheduling: {nodeSelector: {a: b}, tolerations: [{operator: Exists}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns1}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: vpa}
webhooks:
- name: vpa.k8s.io
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {service: {namespace: kube-system, name: vpa, port: 443}, caBundle: Zm9v}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns: [{name: Size, type: integer, jsonPath: .spec.size}]
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
            x-kubernetes-validations: [{rule: "self.size < 100", message: too big}]
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e1}
eventTime: "2025-01-01T00:00:00.000000Z"
reportingController: kvert.io/scheduler
reportingInstance: s1
action: Binding
reason: Scheduled
regarding: {kind: Pod, name: p, namespace: default}
type: Normal
---
apiVersion: v1
kind: Event
metadata: {name: e2}
involvedObject: {kind: Pod, name: p}
reason: Scheduled
count: 1
type: Normal
"""

UNKNOWN_FIELD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  bogus: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: nginx, foo: bar}
"""
