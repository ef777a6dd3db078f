export declare const KEPT_NPM_CONFIG: readonly string[];
export declare function isOuterNpmVariable(name: string): boolean;
export declare function npmChildEnv(env?: NodeJS.ProcessEnv, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
