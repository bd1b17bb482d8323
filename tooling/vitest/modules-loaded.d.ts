/** What a fresh Node printed, and the URLs of the modules it loaded in order. */
export interface ModulesLoaded {
  readonly stdout: string;
  /** Module URLs in load order, with any line the source appended to `process.env.MODULE_LIST` between them. */
  readonly modules: string[];
}

/**
 * Runs `source` as an ES module in a fresh Node started in `cwd` (so package imports resolve as an
 * application's do) and lists every module it loaded. Nothing is left behind.
 */
export function modulesLoadedBy(source: string, options: { readonly cwd: string }): Promise<ModulesLoaded>;
