/** The texts the spec's acceptance cases (§9) are written with. */
export const ACTIVE = 'Keep the durable route on the broad public PoC lane.';
export const RUN = 'Inspect the vliw suite result before changing the durable route.';
export const SIDE = 'Polish the hosted frontstage public case card.';
