// zod/mini, as the webview protocols: this module is bundled into the webview scripts.
import * as z from 'zod/mini';

/** An l10n bundle as the host hands it to a webview script: English message → translation. */
export const l10nBundleSchema = z.record(z.string(), z.string());
