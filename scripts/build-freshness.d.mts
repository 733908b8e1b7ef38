// The types of build-freshness.mjs, for the tests that import it.
export declare const BUILD_INPUTS: readonly string[];
export declare const BUILT_PROGRAM: string;
export declare function inputsDigest(root: string): string;
export declare function beginBuild(root: string): void;
export declare function endBuild(root: string): void;
export declare function staleness(root: string): string | null;
