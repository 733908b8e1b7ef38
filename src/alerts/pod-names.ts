// Alerts name the pods involved where discovery knows them: the peer's (its EndpointSlice
// endpoint's targetRef) and the coordinator's (POD_NAME). Pure: the look-up is given.
import type { Alert } from '../wire/alert.js';

/** The pod listening at an address (`ip:port`), if known. */
export type PodNameOf = (address: string) => string | undefined;

/** The alert with the pods' names it lacks filled in; the same object when there is none to add. */
export function withPodNames(alert: Alert, podOf: PodNameOf): Alert {
  const peer = alert.peer.pod_name ?? podOf(alert.peer.address);
  const coordinator = alert.coordinator.pod_name ?? podOf(alert.coordinator.address);
  if (peer === alert.peer.pod_name && coordinator === alert.coordinator.pod_name) return alert;
  return {
    ...alert,
    peer: { ...alert.peer, ...(peer ? { pod_name: peer } : {}) },
    coordinator: { ...alert.coordinator, ...(coordinator ? { pod_name: coordinator } : {}) },
  };
}
