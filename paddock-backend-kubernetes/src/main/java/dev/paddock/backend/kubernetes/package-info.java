/**
 * The {@code kubernetes} backend: a pod per sandbox through the Kubernetes API (fabric8
 * kubernetes-client), its workspace on a PersistentVolumeClaim, its key digests in a Secret mounted
 * as the agent's secrets file, ingress only from the control plane. Public: {@link
 * dev.paddock.backend.kubernetes.KubernetesBackendProvider} only.
 */
package dev.paddock.backend.kubernetes;
