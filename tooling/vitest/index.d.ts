import type { UserWorkspaceConfig } from 'vitest/config';

/** Export conditions that point workspace packages at their TypeScript source. */
export declare const sourceConditions: string[];

/** The shared vitest project settings for one Ghost package, merged with `overrides`. */
export declare function ghostProject(name: string, overrides?: UserWorkspaceConfig): UserWorkspaceConfig;
