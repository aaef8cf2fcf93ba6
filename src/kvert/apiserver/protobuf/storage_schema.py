"""Protobuf messages of the storage kinds, in ``schema.py``'s ``MESSAGES`` format:
core/v1 PersistentVolume (with the PersistentVolumeSource variants that differ from the pod
volume sources: secret references that name a namespace) and storage.k8s.io/v1
StorageClass, VolumeAttributesClass, VolumeAttachment, CSIDriver and CSINode. Field
numbers and Go shapes are those of ``k8s.io/api`` (``core/v1``, ``storage/v1``
``generated.proto`` and ``types.go``)."""

from __future__ import annotations

# fmt: off
STORAGE_MESSAGES = """
core.PersistentVolume
 1 metadata meta.ObjectMeta o
 2 spec core.PersistentVolumeSpec o
 3 status core.PersistentVolumeStatus o
core.PersistentVolumeSpec
 1 capacity map[str]resource.Quantity o
 2 ~ core.PersistentVolumeSource
 3 accessModes []str o
 4 claimRef *core.ObjectReference o
 5 persistentVolumeReclaimPolicy str o
 6 storageClassName str o
 7 mountOptions []str o
 8 volumeMode *str o
 9 nodeAffinity *core.VolumeNodeAffinity o
 10 volumeAttributesClassName *str o
core.PersistentVolumeSource
 1 gcePersistentDisk *core.GCEPersistentDiskVolumeSource o
 2 awsElasticBlockStore *core.AWSElasticBlockStoreVolumeSource o
 3 hostPath *core.HostPathVolumeSource o
 4 glusterfs *core.GlusterfsPersistentVolumeSource o
 5 nfs *core.NFSVolumeSource o
 6 rbd *core.RBDPersistentVolumeSource o
 7 iscsi *core.ISCSIPersistentVolumeSource o
 8 cinder *core.CinderPersistentVolumeSource o
 9 cephfs *core.CephFSPersistentVolumeSource o
 10 fc *core.FCVolumeSource o
 11 flocker *core.FlockerVolumeSource o
 12 flexVolume *core.FlexPersistentVolumeSource o
 13 azureFile *core.AzureFilePersistentVolumeSource o
 14 vsphereVolume *core.VsphereVirtualDiskVolumeSource o
 15 quobyte *core.QuobyteVolumeSource o
 16 azureDisk *core.AzureDiskVolumeSource o
 17 photonPersistentDisk *core.PhotonPersistentDiskVolumeSource o
 18 portworxVolume *core.PortworxVolumeSource o
 19 scaleIO *core.ScaleIOPersistentVolumeSource o
 20 local *core.LocalVolumeSource o
 21 storageos *core.StorageOSPersistentVolumeSource o
 22 csi *core.CSIPersistentVolumeSource o
core.PersistentVolumeStatus
 1 phase str o
 2 message str o
 3 reason str o
 4 lastPhaseTransitionTime *meta.Time o
core.VolumeNodeAffinity
 1 required *core.NodeSelector o
core.SecretReference
 1 name str o
 2 namespace str o
core.GlusterfsPersistentVolumeSource
 1 endpoints str
 2 path str
 3 readOnly bool o
 4 endpointsNamespace *str o
core.RBDPersistentVolumeSource
 1 monitors []str
 2 image str
 3 fsType str o
 4 pool str o
 5 user str o
 6 keyring str o
 7 secretRef *core.SecretReference o
 8 readOnly bool o
core.ISCSIPersistentVolumeSource
 1 targetPortal str
 2 iqn str
 3 lun i32
 4 iscsiInterface str o
 5 fsType str o
 6 readOnly bool o
 7 portals []str o
 8 chapAuthDiscovery bool o
 11 chapAuthSession bool o
 10 secretRef *core.SecretReference o
 12 initiatorName *str o
core.CinderPersistentVolumeSource
 1 volumeID str
 2 fsType str o
 3 readOnly bool o
 4 secretRef *core.SecretReference o
core.CephFSPersistentVolumeSource
 1 monitors []str
 2 path str o
 3 user str o
 4 secretFile str o
 5 secretRef *core.SecretReference o
 6 readOnly bool o
core.FlexPersistentVolumeSource
 1 driver str
 2 fsType str o
 3 secretRef *core.SecretReference o
 4 readOnly bool o
 5 options map[str]str o
core.AzureFilePersistentVolumeSource
 1 secretName str
 2 shareName str
 3 readOnly bool o
 4 secretNamespace *str
core.ScaleIOPersistentVolumeSource
 1 gateway str
 2 system str
 3 secretRef *core.SecretReference
 4 sslEnabled bool o
 5 protectionDomain str o
 6 storagePool str o
 7 storageMode str o
 8 volumeName str o
 9 fsType str o
 10 readOnly bool o
core.LocalVolumeSource
 1 path str
 2 fsType *str o
core.StorageOSPersistentVolumeSource
 1 volumeName str o
 2 volumeNamespace str o
 3 fsType str o
 4 readOnly bool o
 5 secretRef *core.ObjectReference o
core.CSIPersistentVolumeSource
 1 driver str
 2 volumeHandle str
 3 readOnly bool o
 4 fsType str o
 5 volumeAttributes map[str]str o
 6 controllerPublishSecretRef *core.SecretReference o
 7 nodeStageSecretRef *core.SecretReference o
 8 nodePublishSecretRef *core.SecretReference o
 9 controllerExpandSecretRef *core.SecretReference o
 10 nodeExpandSecretRef *core.SecretReference o
core.TopologySelectorTerm
 1 matchLabelExpressions []core.TopologySelectorLabelRequirement o
core.TopologySelectorLabelRequirement
 1 key str
 2 values []str
storage.StorageClass
 1 metadata meta.ObjectMeta o
 2 provisioner str
 3 parameters map[str]str o
 4 reclaimPolicy *str o
 5 mountOptions []str o
 6 allowVolumeExpansion *bool o
 7 volumeBindingMode *str o
 8 allowedTopologies []core.TopologySelectorTerm o
storage.VolumeAttributesClass
 1 metadata meta.ObjectMeta o
 2 driverName str
 3 parameters map[str]str o
storage.VolumeAttachment
 1 metadata meta.ObjectMeta o
 2 spec storage.VolumeAttachmentSpec
 3 status storage.VolumeAttachmentStatus o
storage.VolumeAttachmentSpec
 1 attacher str
 2 source storage.VolumeAttachmentSource
 3 nodeName str
storage.VolumeAttachmentSource
 1 persistentVolumeName *str o
 2 inlineVolumeSpec *core.PersistentVolumeSpec o
storage.VolumeAttachmentStatus
 1 attached bool
 2 attachmentMetadata map[str]str o
 3 attachError *storage.VolumeError o
 4 detachError *storage.VolumeError o
storage.VolumeError
 1 time meta.Time o
 2 message str o
 3 errorCode *i32 o
storage.CSIDriver
 1 metadata meta.ObjectMeta o
 2 spec storage.CSIDriverSpec
storage.CSIDriverSpec
 1 attachRequired *bool o
 2 podInfoOnMount *bool o
 3 volumeLifecycleModes []str o
 4 storageCapacity *bool o
 5 fsGroupPolicy *str o
 6 tokenRequests []storage.TokenRequest o
 7 requiresRepublish *bool o
 8 seLinuxMount *bool o
 9 nodeAllocatableUpdatePeriodSeconds *i64 o
 10 serviceAccountTokenInSecrets *bool o
 11 preventPodSchedulingIfMissing *bool o
storage.TokenRequest
 1 audience str
 2 expirationSeconds *i64 o
storage.CSINode
 1 metadata meta.ObjectMeta o
 2 spec storage.CSINodeSpec
storage.CSINodeSpec
 1 drivers []storage.CSINodeDriver
storage.CSINodeDriver
 1 name str
 2 nodeID str
 3 topologyKeys []str
 4 allocatable *storage.VolumeNodeResources o
storage.VolumeNodeResources
 1 count *i32 o
"""
# fmt: on
