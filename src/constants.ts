/** One place for the ids the manifest and the code share (views, context keys, settings). */
export const EXTENSION_ID = 'loopx.loopx-vscode';
export const VIEW_CONTAINER_ID = 'loopx';
export const VIEW_IDS = {
  goals: 'loopx.goals',
  agents: 'loopx.agents',
} as const;

export const CONTEXT_KEYS = {
  /** True once activation finished; welcome views wait for it. */
  ready: 'loopx.ready',
  hasGoals: 'loopx.hasGoals',
} as const;

export const SETTINGS = {
  section: 'loopx',
  registryPath: 'registryPath',
} as const;
