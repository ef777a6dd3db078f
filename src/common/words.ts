// The words of LoopX's status values (goal, todo, gate, quota) in the display language. Module without `vscode`
// (pure view models import it): `@vscode/l10n` reads the bundle the host hands it (src/common/l10n.ts) and says
// English until then. The status JSON keeps the English value; only what the editor shows is translated.
import * as l10n from '@vscode/l10n';

export function goalStatusWord(status: string): string {
  switch (status) {
    case 'active':
      return l10n.t('active');
    case 'paused':
      return l10n.t('paused');
    case 'stopped':
      return l10n.t('stopped');
    default:
      return status;
  }
}

export function todoStatusWord(status: string): string {
  switch (status) {
    case 'open':
      return l10n.t('open');
    case 'done':
      return l10n.t('done');
    case 'blocked':
      return l10n.t('blocked');
    case 'deferred':
      return l10n.t('deferred');
    default:
      return status;
  }
}

export function gateStateWord(state: string): string {
  switch (state) {
    case 'open':
      return l10n.t('open');
    case 'rejected':
      return l10n.t('rejected');
    case 'cancelled':
      return l10n.t('cancelled');
    default:
      return state;
  }
}

export function quotaStateWord(state: string): string {
  switch (state) {
    case 'blocked_health':
      return l10n.t('blocked (health)');
    case 'operator_gate':
      return l10n.t('waiting on a gate');
    case 'focus_wait':
      return l10n.t('waiting for focus');
    case 'eligible':
      return l10n.t('eligible');
    case 'waiting':
      return l10n.t('waiting');
    case 'throttled':
      return l10n.t('throttled');
    case 'paused':
      return l10n.t('paused');
    default:
      return state;
  }
}
