// Kubernetes objects read from YAML, and checked against the API's own schemas: kubernetes-models
// for Kubernetes' kinds, @kubernetes-models/prometheus-operator for the Prometheus Operator's
// (its CRDs' schemas). A kind neither knows is an error: nothing ships unchecked.
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { PriorityClass } from 'kubernetes-models/scheduling.k8s.io/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import {
  PodMonitor,
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parseAllDocuments } from 'yaml';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'apps/v1/DaemonSet': DaemonSet,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'scheduling.k8s.io/v1/PriorityClass': PriorityClass,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/** Every document of a YAML stream as an object; throws on the first YAML error. */
export function parseObjects(text: string, source: string): KubeObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as KubeObject | null;
    return value === null ? [] : [value];
  });
}

/** `kind name` of an object, for messages. */
export const nameOf = (o: KubeObject) => `${o.kind} ${o.metadata?.name ?? '(no name)'}`;

/** One line an object whose kind is unknown here or that its schema rejects; empty: all valid. */
export function schemaErrors(objects: readonly KubeObject[]): string[] {
  return objects.flatMap((o) => {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!Model) return [`${nameOf(o)}: no schema known for ${o.apiVersion} ${o.kind}`];
    try {
      new Model(o as never).validate();
      return [];
    } catch (err) {
      return [`${nameOf(o)}: ${(err as Error).message}`];
    }
  });
}
