export declare const SHIPPED_BUNDLES: readonly { entryPoints: string[]; outfile: string; [option: string]: unknown }[];
export declare const WEBVIEW_SCRIPTS: Readonly<Record<string, string>>;
export declare const WEBVIEW_OUTDIR: string;
export declare const COPIED_FILES: Readonly<Record<string, string>>;
export declare const STATIC_ENTRIES: readonly string[];
export declare const LOCALIZATION_ENTRIES: readonly RegExp[];
export declare function builtFiles(): string[];
export declare function runtimeFiles(root: string): string[];
export declare function vscodeignoreFor(root: string): string;
