// Where peers come from: the interface every discovery adapter implements.

export interface PeerSource {
  /** Starts watching; `onPeers` gets the full address list (self may be in it) on every change. */
  start(onPeers: (addresses: readonly string[]) => void): Promise<void>;
  stop(): Promise<void>;
  /**
   * Whether the peer list is current (readiness): the list has arrived and the source is still
   * following changes. A source that does not say counts as synced.
   */
  synced?(): boolean;
  /**
   * The Kubernetes node a listed address runs on, when the source knows it (an EndpointSlice's
   * `nodeName`): a peer is named by it before it has answered.
   */
  nodeName?(address: string): string | undefined;
  /** The pod behind a listed address, when the source knows it (an endpoint's `targetRef`). */
  podName?(address: string): string | undefined;
}
