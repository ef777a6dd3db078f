export interface Deviation {
  family: string;
  rule: string;
  description: string;
  cases: string[];
}
export declare const FAMILIES: readonly string[];
export declare const DEVIATIONS_FILE: string;
export declare function deviationProblems(list: unknown): string[];
export declare function loadDeviations(file?: string): Deviation[];
export declare function globRegExp(glob: string): RegExp;
export declare function deviationFor(
  list: readonly Deviation[],
  seed: number | 'kit',
  caseId: string,
  family: string,
): Deviation | undefined;
export declare function matchingListedCases(
  list: readonly Deviation[],
  seed: number | 'kit',
  compared: ReadonlySet<string>,
  differing: ReadonlySet<string>,
): string[];
