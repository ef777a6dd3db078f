import { paletteCommandId, paletteCommands } from './catalog';

export interface ManifestCommand {
  command: string;
  title: string;
  category: 'LoopX';
  icon?: string;
}

/** The `contributes.commands` entries the catalog implies, in catalog order. */
export function manifestCommands(): ManifestCommand[] {
  return paletteCommands().map((spec) => ({
    command: paletteCommandId(spec),
    title: spec.title ?? spec.key,
    category: 'LoopX',
    ...(spec.icon ? { icon: `$(${spec.icon})` } : {}),
  }));
}
