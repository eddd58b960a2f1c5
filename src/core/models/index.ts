export * from './catalog';
export * from './choice';
