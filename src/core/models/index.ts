export * from './catalog';
export * from './choice';
export * from './modelChoices';
export * from './checkpointModel';
export * from './licenseGate';
