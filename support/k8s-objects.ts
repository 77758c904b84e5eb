// Kubernetes objects of rendered manifests (deploy/) as the tests read them: the metadata every
// object has, the data of ConfigMaps and Secrets, and typed views of the specs of workloads,
// Pods and Services (kubernetes-models' interfaces of the Kubernetes API).
import type { ILabelSelector } from '@kubernetes-models/apimachinery/apis/meta/v1/LabelSelector';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import type { IServiceSpec } from 'kubernetes-models/v1/ServiceSpec';

/** An object of a rendered manifest. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Depends on the kind: read through podOf(), selectorOf() or serviceSpecOf(). */
  spec?: unknown;
  /** A ConfigMap's data, or a Secret's (base64). */
  data?: Record<string, string>;
  /** A Secret's data as text. */
  stringData?: Record<string, string>;
  /** A Secret's type. */
  type?: string;
}

/** The labels and spec of a Pod, or of the pod template of a workload (DaemonSet, Deployment, Job). */
export function podOf(w: K8sObject): { labels: Record<string, string>; spec: IPodSpec } {
  if (w.kind === 'Pod') return { labels: w.metadata.labels ?? {}, spec: w.spec as IPodSpec };
  const template = (w.spec as { template: IPodTemplateSpec }).template;
  return { labels: template.metadata?.labels ?? {}, spec: template.spec as IPodSpec };
}

/** A workload's selector. */
export const selectorOf = (w: K8sObject): ILabelSelector | undefined => (w.spec as { selector?: ILabelSelector } | undefined)?.selector;

/** A Service's spec. */
export const serviceSpecOf = (s: K8sObject): IServiceSpec => s.spec as IServiceSpec;
