import { ensureAgentClis, type AgentClis } from './agentClis';
import { namespaceUnavailableReason } from './namespace';
import { cleanWorkspaces } from './scenario';

let clis: AgentClis | null = null;

/**
 * The mocha `before` of every CLI's suite: the tier runs only where namespaces can be made
 * (scripts/test-agents.mjs checks first and says so plainly when not), and installs the CLIs once.
 */
export function agentClis(): AgentClis {
  if (clis !== null) return clis;
  const reason = namespaceUnavailableReason();
  if (reason !== null) throw new Error(`the agent conformance tier cannot run here: ${reason}`);
  clis = ensureAgentClis();
  if (clis.installSeconds > 0) console.log(`  (installed the agent CLIs in ${clis.installSeconds.toFixed(1)} s)`);
  return clis;
}

after(cleanWorkspaces);
