/** The quota subsystem's public API (see docs/quota.md). */
export * from './config';
export * from './identity';
export * from './ledger';
export * from './state';
export * from './goal';
export * from './selection';
export * from './reservations';
export * from './decision';
export * from './spend';
