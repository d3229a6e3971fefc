"""The fields of a core/v1 PodTemplateSpec, and v1 pod templates pruned to them as the API
server pruned them.

The v1 CRDs embed the PodTemplateSpec schema, so the API server dropped every field it does not
declare (structural-schema pruning) before the v1 controller saw the job: an `apiVersion: v1` and
`kind: Pod` inside a `template:` (upstream's own xgboost smoke test), or a misspelt key. A JobSet
made from the unpruned template is refused ("field not declared in schema"); ktrain prunes the
same way and reports what it removed.

`TYPES` is written from the Kubernetes API types (k8s.io/api core/v1 `types.go`, v1.35): each type
lists its fields; `name` is a scalar, a list of scalars or a free-form map (nothing below it is
pruned), `name:Type` an object, `name:[Type]` a list of objects, `name:{Type}` a map of objects.
A test compares it with the PodTemplateSpec the JobSet CRD embeds, when ../shared is present.
"""

from __future__ import annotations

from typing import Any

from ktrain.inputs.documents import Path

_CONTAINER = (
    "args command env:[EnvVar] envFrom:[EnvFromSource] image imagePullPolicy lifecycle:Lifecycle "
    "livenessProbe:Probe name ports:[ContainerPort] readinessProbe:Probe resizePolicy:[ContainerResizePolicy] "
    "resources:ResourceRequirements restartPolicy restartPolicyRules:[ContainerRestartRule] "
    "securityContext:SecurityContext startupProbe:Probe stdin stdinOnce terminationMessagePath "
    "terminationMessagePolicy tty volumeDevices:[VolumeDevice] volumeMounts:[VolumeMount] workingDir"
)
_TYPES_TEXT = {
    "PodTemplateSpec": "metadata:ObjectMeta spec:PodSpec",
    "ObjectMeta": "annotations finalizers labels name namespace",
    "PodSpec": (
        "activeDeadlineSeconds affinity:Affinity automountServiceAccountToken containers:[Container] "
        "dnsConfig:PodDNSConfig dnsPolicy enableServiceLinks ephemeralContainers:[EphemeralContainer] "
        "hostAliases:[HostAlias] hostIPC hostNetwork hostPID hostUsers hostname hostnameOverride "
        "imagePullSecrets:[LocalObjectReference] initContainers:[Container] nodeName nodeSelector os:PodOS "
        "overhead preemptionPolicy priority priorityClassName readinessGates:[PodReadinessGate] "
        "resourceClaims:[PodResourceClaim] resources:ResourceRequirements restartPolicy runtimeClassName "
        "schedulerName schedulingGates:[PodSchedulingGate] schedulingGroup:PodSchedulingGroup "
        "securityContext:PodSecurityContext serviceAccount "
        "serviceAccountName setHostnameAsFQDN shareProcessNamespace subdomain terminationGracePeriodSeconds "
        "tolerations:[Toleration] topologySpreadConstraints:[TopologySpreadConstraint] volumes:[Volume]"
    ),
    "Container": _CONTAINER,
    "EphemeralContainer": _CONTAINER + " targetContainerName",
    "PodSchedulingGroup": "podGroupName",
    "ContainerRestartRule": "action exitCodes:ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "operator values",
    "EnvVar": "name value valueFrom:EnvVarSource",
    "EnvVarSource": (
        "configMapKeyRef:KeySelector fieldRef:ObjectFieldSelector fileKeyRef:FileKeySelector "
        "resourceFieldRef:ResourceFieldSelector secretKeyRef:KeySelector"
    ),
    "KeySelector": "key name optional",
    "FileKeySelector": "key optional path volumeName",
    "ObjectFieldSelector": "apiVersion fieldPath",
    "ResourceFieldSelector": "containerName divisor resource",
    "EnvFromSource": "configMapRef:NameOptional prefix secretRef:NameOptional",
    "NameOptional": "name optional",
    "Lifecycle": "postStart:LifecycleHandler preStop:LifecycleHandler stopSignal",
    "LifecycleHandler": "exec:ExecAction httpGet:HTTPGetAction sleep:SleepAction tcpSocket:TCPSocketAction",
    "Probe": (
        "exec:ExecAction failureThreshold grpc:GRPCAction httpGet:HTTPGetAction initialDelaySeconds "
        "periodSeconds successThreshold tcpSocket:TCPSocketAction terminationGracePeriodSeconds timeoutSeconds"
    ),
    "ExecAction": "command",
    "GRPCAction": "port service",
    "HTTPGetAction": "host httpHeaders:[HTTPHeader] path port scheme",
    "HTTPHeader": "name value",
    "SleepAction": "seconds",
    "TCPSocketAction": "host port",
    "ContainerPort": "containerPort hostIP hostPort name protocol",
    "ContainerResizePolicy": "resourceName restartPolicy",
    "ResourceRequirements": "claims:[ResourceClaim] limits requests",
    "ResourceClaim": "name request",
    "SecurityContext": (
        "allowPrivilegeEscalation appArmorProfile:AppArmorProfile capabilities:Capabilities privileged procMount "
        "readOnlyRootFilesystem runAsGroup runAsNonRoot runAsUser seLinuxOptions:SELinuxOptions "
        "seccompProfile:SeccompProfile windowsOptions:WindowsSecurityContextOptions"
    ),
    "AppArmorProfile": "localhostProfile type",
    "SeccompProfile": "localhostProfile type",
    "Capabilities": "add drop",
    "SELinuxOptions": "level role type user",
    "WindowsSecurityContextOptions": "gmsaCredentialSpec gmsaCredentialSpecName hostProcess runAsUserName",
    "VolumeDevice": "devicePath name",
    "VolumeMount": "mountPath mountPropagation name readOnly recursiveReadOnly subPath subPathExpr",
    "PodSecurityContext": (
        "appArmorProfile:AppArmorProfile fsGroup fsGroupChangePolicy runAsGroup runAsNonRoot runAsUser "
        "seLinuxChangePolicy seLinuxOptions:SELinuxOptions seccompProfile:SeccompProfile supplementalGroups "
        "supplementalGroupsPolicy sysctls:[Sysctl] windowsOptions:WindowsSecurityContextOptions"
    ),
    "Sysctl": "name value",
    "PodDNSConfig": "nameservers options:[PodDNSConfigOption] searches",
    "PodDNSConfigOption": "name value",
    "HostAlias": "hostnames ip",
    "LocalObjectReference": "name",
    "PodOS": "name",
    "PodReadinessGate": "conditionType",
    "PodResourceClaim": "name resourceClaimName resourceClaimTemplateName",
    "PodSchedulingGate": "name",
    "Toleration": "effect key operator tolerationSeconds value",
    "TopologySpreadConstraint": (
        "labelSelector:LabelSelector matchLabelKeys maxSkew minDomains nodeAffinityPolicy nodeTaintsPolicy "
        "topologyKey whenUnsatisfiable"
    ),
    "LabelSelector": "matchExpressions:[LabelSelectorRequirement] matchLabels",
    "LabelSelectorRequirement": "key operator values",
    "Affinity": "nodeAffinity:NodeAffinity podAffinity:PodAffinity podAntiAffinity:PodAffinity",
    "NodeAffinity": (
        "preferredDuringSchedulingIgnoredDuringExecution:[PreferredSchedulingTerm] "
        "requiredDuringSchedulingIgnoredDuringExecution:NodeSelector"
    ),
    "PreferredSchedulingTerm": "preference:NodeSelectorTerm weight",
    "NodeSelector": "nodeSelectorTerms:[NodeSelectorTerm]",
    "NodeSelectorTerm": "matchExpressions:[NodeSelectorRequirement] matchFields:[NodeSelectorRequirement]",
    "NodeSelectorRequirement": "key operator values",
    # PodAffinity and PodAntiAffinity have the same fields.
    "PodAffinity": (
        "preferredDuringSchedulingIgnoredDuringExecution:[WeightedPodAffinityTerm] "
        "requiredDuringSchedulingIgnoredDuringExecution:[PodAffinityTerm]"
    ),
    "WeightedPodAffinityTerm": "podAffinityTerm:PodAffinityTerm weight",
    "PodAffinityTerm": (
        "labelSelector:LabelSelector matchLabelKeys mismatchLabelKeys namespaceSelector:LabelSelector "
        "namespaces topologyKey"
    ),
    "Volume": (
        "awsElasticBlockStore:AWSElasticBlockStore azureDisk:AzureDisk azureFile:AzureFile cephfs:CephFS "
        "cinder:Cinder configMap:ConfigMapVolume csi:CSIVolume downwardAPI:DownwardAPIVolume emptyDir:EmptyDir "
        "ephemeral:EphemeralVolume fc:FC flexVolume:FlexVolume flocker:Flocker "
        "gcePersistentDisk:GCEPersistentDisk gitRepo:GitRepo glusterfs:Glusterfs hostPath:HostPath "
        "image:ImageVolume iscsi:ISCSI name nfs:NFS persistentVolumeClaim:PVCVolume "
        "photonPersistentDisk:PhotonPersistentDisk portworxVolume:PortworxVolume projected:ProjectedVolume "
        "quobyte:Quobyte rbd:RBD scaleIO:ScaleIO secret:SecretVolume storageos:StorageOS "
        "vsphereVolume:VsphereVirtualDisk"
    ),
    "AWSElasticBlockStore": "fsType partition readOnly volumeID",
    "AzureDisk": "cachingMode diskName diskURI fsType kind readOnly",
    "AzureFile": "readOnly secretName shareName",
    "CephFS": "monitors path readOnly secretFile secretRef:LocalObjectReference user",
    "Cinder": "fsType readOnly secretRef:LocalObjectReference volumeID",
    "ConfigMapVolume": "defaultMode items:[KeyToPath] name optional",
    "KeyToPath": "key mode path",
    "CSIVolume": "driver fsType nodePublishSecretRef:LocalObjectReference readOnly volumeAttributes",
    "DownwardAPIVolume": "defaultMode items:[DownwardAPIVolumeFile]",
    "DownwardAPIVolumeFile": "fieldRef:ObjectFieldSelector mode path resourceFieldRef:ResourceFieldSelector",
    "EmptyDir": "medium sizeLimit",
    "EphemeralVolume": "volumeClaimTemplate:PVCTemplate",
    "PVCTemplate": "metadata:ObjectMeta spec:PVCSpec",
    "PVCSpec": (
        "accessModes dataSource:TypedLocalObjectReference dataSourceRef:TypedObjectReference "
        "resources:VolumeResourceRequirements selector:LabelSelector storageClassName volumeAttributesClassName "
        "volumeMode volumeName"
    ),
    "TypedLocalObjectReference": "apiGroup kind name",
    "TypedObjectReference": "apiGroup kind name namespace",
    "VolumeResourceRequirements": "limits requests",
    "FC": "fsType lun readOnly targetWWNs wwids",
    "FlexVolume": "driver fsType options readOnly secretRef:LocalObjectReference",
    "Flocker": "datasetName datasetUUID",
    "GCEPersistentDisk": "fsType partition pdName readOnly",
    "GitRepo": "directory repository revision",
    "Glusterfs": "endpoints path readOnly",
    "HostPath": "path type",
    "ImageVolume": "pullPolicy reference",
    "ISCSI": (
        "chapAuthDiscovery chapAuthSession fsType initiatorName iqn iscsiInterface lun portals readOnly "
        "secretRef:LocalObjectReference targetPortal"
    ),
    "NFS": "path readOnly server",
    "PVCVolume": "claimName readOnly",
    "PhotonPersistentDisk": "fsType pdID",
    "PortworxVolume": "fsType readOnly volumeID",
    "ProjectedVolume": "defaultMode sources:[VolumeProjection]",
    "VolumeProjection": (
        "clusterTrustBundle:ClusterTrustBundleProjection configMap:ConfigMapProjection "
        "downwardAPI:DownwardAPIProjection podCertificate:PodCertificateProjection secret:SecretProjection "
        "serviceAccountToken:ServiceAccountTokenProjection"
    ),
    "ClusterTrustBundleProjection": "labelSelector:LabelSelector name optional path signerName",
    "ConfigMapProjection": "items:[KeyToPath] name optional",
    "DownwardAPIProjection": "items:[DownwardAPIVolumeFile]",
    "PodCertificateProjection": (
        "certificateChainPath credentialBundlePath keyPath keyType maxExpirationSeconds signerName userAnnotations"
    ),
    "SecretProjection": "items:[KeyToPath] name optional",
    "ServiceAccountTokenProjection": "audience expirationSeconds path",
    "Quobyte": "group readOnly registry tenant user volume",
    "RBD": "fsType image keyring monitors pool readOnly secretRef:LocalObjectReference user",
    "ScaleIO": (
        "fsType gateway protectionDomain readOnly secretRef:LocalObjectReference sslEnabled storageMode "
        "storagePool system volumeName"
    ),
    "SecretVolume": "defaultMode items:[KeyToPath] optional secretName",
    "StorageOS": "fsType readOnly secretRef:LocalObjectReference volumeName volumeNamespace",
    "VsphereVirtualDisk": "fsType storagePolicyID storagePolicyName volumePath",
}


def _parse() -> dict[str, dict[str, tuple[str, str] | None]]:
    """type -> field -> None (a leaf) or (shape, type) with shape "obj", "list" or "map"."""
    out: dict[str, dict[str, tuple[str, str] | None]] = {}
    for type_name, text in _TYPES_TEXT.items():
        fields: dict[str, tuple[str, str] | None] = {}
        for item in text.split():
            name, _, sub = item.partition(":")
            if not sub:
                fields[name] = None
            elif sub.startswith("["):
                fields[name] = ("list", sub[1:-1])
            elif sub.startswith("{"):
                fields[name] = ("map", sub[1:-1])
            else:
                fields[name] = ("obj", sub)
        out[type_name] = fields
    return out


TYPES = _parse()


def prune(value: Any, type_name: str = "PodTemplateSpec", path: Path = ()) -> tuple[Any, list[Path]]:
    """A copy of `value` without the fields `type_name` does not declare, and their paths."""
    removed: list[Path] = []
    fields = TYPES[type_name]
    if not isinstance(value, dict):
        return value, removed
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key not in fields:
            removed.append((*path, key))
            continue
        shape = fields[key]
        if shape is None:
            out[key] = item
        elif shape[0] == "obj":
            out[key], more = prune(item, shape[1], (*path, key))
            removed += more
        elif shape[0] == "list" and isinstance(item, list):
            items = []
            for i, element in enumerate(item):
                pruned, more = prune(element, shape[1], (*path, key, i))
                items.append(pruned)
                removed += more
            out[key] = items
        elif shape[0] == "map" and isinstance(item, dict):
            entries = {}
            for k, element in item.items():
                pruned, more = prune(element, shape[1], (*path, key, k))
                entries[k] = pruned
                removed += more
            out[key] = entries
        else:
            out[key] = item
    return out, removed
