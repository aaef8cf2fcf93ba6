# ruff: noqa: E501  (schema text: one field per line, as schemas.py, which pyproject exempts)
"""OpenAPI text of the storage kinds (``schemas.py``'s format): core/v1 PersistentVolume and
storage.k8s.io/v1 StorageClass, VolumeAttributesClass, VolumeAttachment, CSIDriver and
CSINode. The volume sources kvert does not model are described as plain objects."""

from __future__ import annotations

STORAGE = r"""
@core.v1.PersistentVolume kind
A piece of storage in the cluster, provisioned by an administrator or a provisioner. kvert does not provision: volumes are created by users and bound to claims by the persistentvolume controller.
spec    PersistentVolumeSpec    The volume's capacity, access modes, source and binding.
status  PersistentVolumeStatus  The volume's phase. Read-only.

@core.v1.PersistentVolumeSpec
The characteristics of a volume.
capacity                       {qty}                       The volume's capacity: storage only.
accessModes                    [str]                       ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.
claimRef                       ObjectReference             The claim the volume is bound to (set by the controller, or by the user to pre-bind).
persistentVolumeReclaimPolicy  str(Delete|Recycle|Retain)  What happens to the volume when its claim is released. Default Retain.
storageClassName               str                         Name of the StorageClass the volume belongs to.
mountOptions                   [str]                       Mount options, not validated.
volumeMode                     str(Block|Filesystem)       Default Filesystem.
nodeAffinity                   VolumeNodeAffinity          The nodes the volume can be reached from.
volumeAttributesClassName      str                         Name of the VolumeAttributesClass (CSI volumes only).
hostPath                       HostPathVolumeSource        A directory on the host (single-node testing).
gcePersistentDisk              obj                         A GCE persistent disk. Deprecated.
awsElasticBlockStore           obj                         An AWS EBS disk. Deprecated.
glusterfs                      obj                         A Glusterfs mount. Removed from kubelet.
flocker                        obj                         A Flocker volume. Deprecated.
nfs                            NFSVolumeSource             An NFS mount.
rbd                            obj                         A Rados Block Device. Deprecated.
quobyte                        obj                         A Quobyte mount. Deprecated.
cephfs                         obj                         A Ceph filesystem. Deprecated.
iscsi                          obj                         An iSCSI disk.
cinder                         obj                         An OpenStack Cinder volume. Deprecated.
fc                             obj                         A Fibre Channel disk.
flexVolume                     obj                         A FlexVolume driver's volume. Deprecated.
azureFile                      obj                         An Azure File share. Deprecated.
vsphereVolume                  obj                         A vSphere disk. Deprecated.
photonPersistentDisk           obj                         A Photon disk. Removed.
portworxVolume                 obj                         A Portworx volume. Deprecated.
azureDisk                      obj                         An Azure data disk. Deprecated.
scaleIO                        obj                         A ScaleIO volume. Removed.
local                          LocalVolumeSource           A local disk, directory or partition (needs nodeAffinity).
storageos                      obj                         A StorageOS volume. Removed.
csi                            CSIPersistentVolumeSource   A volume of an external CSI driver.

@core.v1.VolumeNodeAffinity
The nodes a volume can be reached from.
required  NodeSelector  Nodes that must match.

@core.v1.LocalVolumeSource
A local disk, partition or directory.
path!   str  Full path to the volume on the node.
fsType  str  Filesystem type of a block device.

@core.v1.CSIPersistentVolumeSource
A volume managed by an external CSI driver.
driver!                     str              Name of the CSI driver.
volumeHandle!               str              The volume's unique name, as the driver returned it.
readOnly                    bool             Publish the volume read-only.
fsType                      str              Filesystem to mount.
volumeAttributes            {str}            Attributes of the volume to publish.
controllerPublishSecretRef  SecretReference  Secret for ControllerPublishVolume.
nodeStageSecretRef          SecretReference  Secret for NodeStageVolume.
nodePublishSecretRef        SecretReference  Secret for NodePublishVolume.
controllerExpandSecretRef   SecretReference  Secret for ControllerExpandVolume.
nodeExpandSecretRef         SecretReference  Secret for NodeExpandVolume.

@core.v1.SecretReference
A reference to a secret in any namespace.
name       str  Name of the secret.
namespace  str  Namespace of the secret.

@core.v1.PersistentVolumeStatus
The observed state of a volume.
phase                    str(Pending|Available|Bound|Released|Failed)  The volume's phase.
message                  str   Human-readable message on the volume's state.
reason                   str   Brief CamelCase reason for a failure.
lastPhaseTransitionTime  time  When the volume last changed phase.

@core.v1.TopologySelectorTerm
A topology term: the requirements are ANDed.
matchLabelExpressions  [TopologySelectorLabelRequirement]  Label requirements.

@core.v1.TopologySelectorLabelRequirement
A label key and the values it may take.
key!     str    The label key.
values!  [str]  The values; one must match.

@storage.v1.StorageClass kind
A class of storage: the provisioner and parameters dynamically provisioned volumes get. kvert does not provision; classes select which volumes a claim may bind.
provisioner!          str                          The provisioner's name.
parameters            {str}                        Parameters for the provisioner. Immutable.
reclaimPolicy         str(Delete|Retain)           The reclaim policy of provisioned volumes. Default Delete.
mountOptions          [str]                        Mount options of provisioned volumes.
allowVolumeExpansion  bool                         Whether claims of the class may grow.
volumeBindingMode     str(Immediate|WaitForFirstConsumer)  When claims are bound. Default Immediate.
allowedTopologies     [core.v1.TopologySelectorTerm]  Where volumes may be provisioned.

@storage.v1.VolumeAttributesClass kind
Mutable, driver-specific attributes of a volume (IOPS, throughput) a claim can select.
driverName!  str    Name of the CSI driver. Immutable.
parameters   {str}  Driver-specific parameters. Immutable.

@storage.v1.VolumeAttachment kind
The request to attach a volume to a node, and the result.
spec!   VolumeAttachmentSpec    The attacher, the volume and the node.
status  VolumeAttachmentStatus  Whether the volume is attached. Set by the attacher.

@storage.v1.VolumeAttachmentSpec
What to attach where.
attacher!  str                     The CSI driver that attaches the volume.
source!    VolumeAttachmentSource  The volume.
nodeName!  str                     The node to attach to.

@storage.v1.VolumeAttachmentSource
A persistent volume by name, or an inline volume spec; exactly one.
persistentVolumeName  str                           Name of the volume.
inlineVolumeSpec      core.v1.PersistentVolumeSpec  An inline CSI volume, migrated from a pod's in-tree volume.

@storage.v1.VolumeAttachmentStatus
The state of an attachment.
attached!           bool         Whether the volume is attached.
attachmentMetadata  {str}        What the attacher returned, passed to the node.
attachError         VolumeError  The last attach error.
detachError         VolumeError  The last detach error.

@storage.v1.VolumeError
An error of an attach or detach operation.
time       time   When it happened.
message    str    What happened.
errorCode  int32  The numeric gRPC code of the error.

@storage.v1.CSIDriver kind
A CSI volume driver deployed on the cluster and how Kubernetes works with it.
spec!  CSIDriverSpec  The driver's capabilities.

@storage.v1.CSIDriverSpec
How Kubernetes works with a CSI driver.
attachRequired                      bool   Whether volumes need attaching (ControllerPublishVolume). Default true. Immutable.
podInfoOnMount                      bool   Whether the pod's details are passed on mount. Default false.
volumeLifecycleModes                [str]  Persistent and/or Ephemeral. Default [Persistent]. Immutable.
storageCapacity                     bool   Whether the scheduler checks CSIStorageCapacity. Default false.
fsGroupPolicy                       str(File|None|ReadWriteOnceWithFSType)  Whether volumes support fsGroup ownership changes. Default ReadWriteOnceWithFSType.
tokenRequests                       [TokenRequest]  Service account tokens passed on NodePublishVolume.
requiresRepublish                   bool   Whether NodePublishVolume is called periodically. Default false.
seLinuxMount                        bool   Whether the driver supports the -o context mount option. Default false.
nodeAllocatableUpdatePeriodSeconds  int64  How often the kubelet updates the node's allocatable volume count (at least 10).
serviceAccountTokenInSecrets        bool   Pass service account tokens in NodePublishVolume's secrets rather than the volume context (CSIServiceAccountTokenSecrets).
preventPodSchedulingIfMissing       bool   Keep pods off nodes where the driver is not registered (VolumeLimitScaling).

@storage.v1.TokenRequest
A service account token for a CSI driver.
audience!          str    The token's audience.
expirationSeconds  int64  The token's lifetime (at least 10 minutes).

@storage.v1.CSINode kind
The CSI drivers installed on a node, named after the node.
spec!  CSINodeSpec  The drivers.

@storage.v1.CSINodeSpec
The CSI drivers of a node.
drivers!  [CSINodeDriver]  The drivers registered on the node.

@storage.v1.CSINodeDriver
One CSI driver on a node.
name!         str                  Name of the driver.
nodeID!       str                  The node's ID for the driver.
topologyKeys  [str]                The topology keys the driver supports.
allocatable   VolumeNodeResources  How many volumes the driver can attach to the node.

@storage.v1.VolumeNodeResources
The volume limits of a driver on a node.
count  int32  Maximum number of unique volumes.
"""
