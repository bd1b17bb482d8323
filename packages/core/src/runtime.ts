import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { CleanupError, ConfigurationError } from './errors.js';
import type { ModelMessage, ModelV1 } from './model.js';
import type { EnginePlugin, ModelProviderV1, Plugin, PluginKind } from './plugin.js';
import { readSession } from './read-session.js';
import { type ImportModule, Registry } from './registry.js';
import type { SessionEntry } from './run-session.js';
import type { SandboxBackendV1 } from './sandbox.js';
import type { SessionStoreV1 } from './session-store.js';
import { checkTelemetry, type TelemetryV1 } from './telemetry.js';
import type { PendingApproval } from './tool-approval.js';
import { Workspace } from './workspace.js';

/** The options of {@link createRuntime} and {@link configure}. Unknown keys are rejected. */
export interface RuntimeOptions {
  /** Engine plugins to register, beside the built-in `quickjs` and `v8`. */
  readonly engines?: readonly EnginePlugin[];
  /** Sandbox backends to register, beside the built-in `bwrap`, `seatbelt` and `native`. */
  readonly sandboxes?: readonly SandboxBackendV1[];
  /**
   * Model providers to register, beside the built-in `openai`, `openai-chat`, `openai-compatible`
   * and `anthropic`; or models by a name of your own, used as `model: 'local'`:
   * `{ local: createOpenAICompatible({ name: 'ollama', baseURL })('qwen2.5-coder') }`.
   */
  readonly models?: readonly ModelProviderV1[] | Readonly<Record<string, ModelV1>>;
  /**
   * Where runs asked with `session: { id, actor }` keep their conversations: `memorySessionStore()`,
   * `sqliteSessionStore({ path })` from `@ghost/session-sqlite`, `postgresSessionStore(...)` from
   * `@ghost/session-postgres`, or your own. The application owns it: close it after the runtime.
   */
  readonly sessionStore?: SessionStoreV1;
  /** Code mode's settings (engine, sandbox, limits, ...). `@ghost/code-mode` reads and checks them. */
  readonly codeMode?: Readonly<Record<string, unknown>>;
  /** Telemetry for every run of this runtime: `openTelemetry()` from `@ghost/otel`, or a list of plugins. */
  readonly telemetry?: TelemetryV1 | readonly TelemetryV1[];
  /** Where run workspaces are created. Default: `os.tmpdir()`. */
  readonly workspaceRoot?: string;
  /** How built-in plugin packages are imported; see `RegistryOptions.importModule`. */
  readonly importModule?: ImportModule;
}

/**
 * Configuration and plugins, made by {@link createRuntime}. Every Ghost API takes a runtime
 * explicitly and falls back to {@link defaultRuntime}, so tests build their own and never share
 * global state.
 */
export interface Runtime {
  /** The engines, sandbox backends and model providers this runtime can use. */
  readonly registry: Registry;
  /** A frozen shallow copy of code mode's settings; `{}` when none were given. */
  readonly codeMode: Readonly<Record<string, unknown>>;
  /** The absolute directory run workspaces are created in. */
  readonly workspaceRoot: string;
  /** The telemetry plugins observing every run of this runtime. */
  readonly telemetry: readonly TelemetryV1[];
  /** The session store runs with a `session` use, when one was given. */
  readonly sessionStore: SessionStoreV1 | undefined;
  /** A new, not yet created, workspace under `workspaceRoot`. */
  createWorkspace(): Workspace;
  /**
   * Reads a conversation outside a run, such as for a page that shows a thread again after a
   * reload: the newest `limit` stored messages before position `before` (default: the end), oldest
   * first, decoded as a run decodes them, and the approvals a run paused in the session
   * (`approvals: 'suspend'`) waits for, as that run listed them in `run.pendingApprovals`. Answer
   * those with `agent.resume({ session, decisions })`. Writes nothing: a session never written
   * resolves `exists: false` and is not created.
   *
   * It opens the session as a run does: another actor than its owner is refused with
   * `SessionAccessError`, and while a run holds the session the read waits for it, up to
   * `lockTimeoutMs` (then `SessionBusyError`, `reason: 'timeout'`); it holds the lock only while it
   * reads. A run paused for approvals is read too: `pendingApprovals` and its turn so far,
   * `pausedTurn`. A stored message that cannot be decoded fails it with `SessionStoreError`, a paused run
   * that cannot be read with `PausedRunError`. Throws a `ConfigurationError` when the runtime has
   * no `sessionStore`.
   *
   * @example
   * ```ts
   * const { exists, history, pendingApprovals } = await runtime.readSession({ id: chatId, actor: user.id });
   * for (const entry of history) show(entry.message);
   * for (const waiting of pendingApprovals) askPerson(waiting.approvalId, waiting.toolName, waiting.input);
   * for (const message of (await runtime.readSession({ id: chatId, actor: user.id })).pausedTurn) show(message);
   * const older = await runtime.readSession({ id: chatId, actor: user.id, before: history[0]?.position });
   * ```
   */
  readSession(request: {
    /** The conversation's id, as given to `ask`'s `session`. */
    readonly id: string;
    /** The trusted owner the application vouches for, as given to `ask`'s `session`. */
    readonly actor: string;
    /** How many of the newest messages to read. Default 50. */
    readonly limit?: number;
    /**
     * Read only messages before this position (the first entry's `position` of the page read
     * last): the page before. Default: the end.
     */
    readonly before?: number | undefined;
    /** How long to wait for a run holding the session. Default 30,000, as for a run. */
    readonly lockTimeoutMs?: number;
    /** Ends the wait for the lock: the read rejects with the signal's reason. */
    readonly signal?: AbortSignal;
  }): Promise<{
    /** False for a session never written (or deleted): then both lists are empty. */
    readonly exists: boolean;
    /** The messages read, oldest first, each with its `position` for paging back. */
    readonly history: readonly SessionEntry[];
    /** What a run paused in the session waits for, oldest first; empty when none is paused. */
    readonly pendingApprovals: readonly PendingApproval[];
    /**
     * The paused run's turn so far: its input, then every answer and tool result up to the calls
     * that wait. Not in `history` yet (the turn is written there when the resumed run completes),
     * so a page shows it after the history. Empty when nothing is paused.
     */
    readonly pausedTurn: readonly ModelMessage[];
  }>;
  /**
   * The resource a plugin keeps for as long as this runtime lives, stored under `key`: made by
   * `create` on first use, the same object afterwards, and closed by {@link Runtime.close}. Code
   * mode keeps its pool of spare engine hosts here. Throws a `ConfigurationError`
   * (`RUNTIME_CLOSED`) once the runtime is closed.
   */
  resource<Resource extends RuntimeResource>(key: symbol, create: () => Resource): Resource;
  /**
   * Closes what plugins keep for this runtime (see {@link Runtime.resource}), newest first, such
   * as code mode's spare engine hosts; safe to call more than once. Rejects with a `CleanupError`
   * when a resource could not be released. Runs already in progress keep their own hosts; close
   * them first.
   */
  close(): Promise<void>;
}

/** Something a plugin keeps for a runtime's lifetime; see {@link Runtime.resource}. */
export interface RuntimeResource {
  /** Releases it; rejects with a `CleanupError` when it cannot. */
  close(): Promise<void>;
}

const optionNames: readonly (keyof RuntimeOptions)[] = [
  'engines',
  'sandboxes',
  'models',
  'sessionStore',
  'codeMode',
  'telemetry',
  'workspaceRoot',
  'importModule',
];

const pluginLists = [
  { option: 'engines', kind: 'engine' },
  { option: 'sandboxes', kind: 'sandbox' },
  { option: 'models', kind: 'model' },
] as const satisfies readonly { option: keyof RuntimeOptions; kind: PluginKind }[];

function invalidOption(message: string, option: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'RUNTIME_OPTION_INVALID', option });
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkOptionNames(options: unknown): asserts options is RuntimeOptions {
  if (!isPlainRecord(options)) {
    throw invalidOption(
      'createRuntime() takes an options object, such as { engines: [myEngine] }.',
      'options',
    );
  }
  for (const key of Object.keys(options)) {
    if (!(optionNames as readonly string[]).includes(key)) {
      throw new ConfigurationError(
        `createRuntime() has no option '${key}'. Known options: ${optionNames.join(', ')}.`,
        { code: 'RUNTIME_OPTION_UNKNOWN', option: key, known: optionNames },
      );
    }
  }
}

function registerPlugins(registry: Registry, options: RuntimeOptions): void {
  for (const { option, kind } of pluginLists) {
    const plugins: unknown = options[option];
    if (plugins === undefined) continue;
    if (option === 'models' && isPlainRecord(plugins)) {
      for (const [name, model] of Object.entries(plugins)) registry.registerModel(name, model as ModelV1);
      continue;
    }
    if (!Array.isArray(plugins)) {
      const alternative = option === 'models' ? ', or an object of models by name' : '';
      throw invalidOption(
        `createRuntime({ ${option} }) takes an array of ${kind} plugins${alternative}.`,
        option,
      );
    }
    for (const plugin of plugins) {
      const pluginKind = isPlainRecord(plugin) ? plugin.kind : undefined;
      // A plugin in the wrong list is an easy slip; say where it belongs instead of "wrong kind".
      if (pluginKind === 'session-store') {
        throw invalidOption(
          `createRuntime({ ${option} }) got a session store '${String(plugin.name)}': pass it as createRuntime({ sessionStore }).`,
          option,
        );
      }
      const list = pluginLists.find((each) => each.kind === pluginKind);
      if (list !== undefined && list.kind !== kind) {
        throw invalidOption(
          `createRuntime({ ${option} }) got a ${list.kind} plugin '${String(plugin.name)}': list it under ${list.option}.`,
          option,
        );
      }
      registry.register(plugin as Plugin);
    }
  }
}

/**
 * Builds a runtime: a fresh registry with the given plugins, and settings. Throws a
 * `ConfigurationError` for an unknown option or a malformed plugin.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({
 *   sandboxes: [myBackend],
 *   codeMode: { engine: 'quickjs', sandbox: 'native' },
 * });
 * const engine = await runtime.registry.engine('quickjs');
 * ```
 */
export function createRuntime(options: RuntimeOptions = {}): Runtime {
  checkOptionNames(options);
  const { codeMode, workspaceRoot, importModule } = options;
  if (codeMode !== undefined && !isPlainRecord(codeMode)) {
    throw invalidOption('createRuntime({ codeMode }) takes an object of code mode settings.', 'codeMode');
  }
  if (workspaceRoot !== undefined && (typeof workspaceRoot !== 'string' || workspaceRoot === '')) {
    throw invalidOption(
      'createRuntime({ workspaceRoot }) takes the path of an existing directory.',
      'workspaceRoot',
    );
  }
  if (importModule !== undefined && typeof importModule !== 'function') {
    throw invalidOption(
      'createRuntime({ importModule }) takes a function (specifier) => import(specifier).',
      'importModule',
    );
  }
  const registry = new Registry({
    ...(importModule === undefined ? {} : { importModule }),
  });
  registerPlugins(registry, options);
  const { sessionStore } = options;
  if (sessionStore !== undefined) {
    if (typeof sessionStore !== 'object' || sessionStore === null || Array.isArray(sessionStore)) {
      throw invalidOption(
        'createRuntime({ sessionStore }) takes one session store, such as memorySessionStore().',
        'sessionStore',
      );
    }
    registry.register(sessionStore); // checked like every plugin: kind, name, version, methods
  }
  const root = resolve(workspaceRoot ?? tmpdir());
  const telemetry = Object.freeze([...checkTelemetry(options.telemetry, 'createRuntime()')]);
  if (codeMode !== undefined) detectSandboxAhead(registry, codeMode.sandbox);
  const resources = new RuntimeResources();
  const store =
    sessionStore === undefined ? undefined : (registry.sessionStore(sessionStore.name) as SessionStoreV1);
  return Object.freeze({
    registry,
    codeMode: Object.freeze({ ...codeMode }),
    workspaceRoot: root,
    telemetry,
    sessionStore: store,
    createWorkspace: () => new Workspace({ root }),
    readSession: (request: unknown) => readSession(store, request),
    resource: <Resource extends RuntimeResource>(key: symbol, create: () => Resource) =>
      resources.resource(key, create),
    close: () => resources.close(),
  });
}

/** The resources plugins keep for one runtime, closed together, newest first. */
class RuntimeResources {
  readonly #byKey = new Map<symbol, RuntimeResource>();
  #closing: Promise<void> | undefined;

  resource<Resource extends RuntimeResource>(key: symbol, create: () => Resource): Resource {
    if (this.#closing !== undefined) {
      throw new ConfigurationError(
        'This runtime is closed, so it cannot start anything new. Create a new runtime with createRuntime().',
        { code: 'RUNTIME_CLOSED' },
      );
    }
    const existing = this.#byKey.get(key);
    if (existing !== undefined) return existing as Resource;
    const created = create();
    this.#byKey.set(key, created);
    return created;
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    const failures: unknown[] = [];
    for (const resource of [...this.#byKey.values()].reverse()) {
      try {
        await resource.close();
      } catch (error) {
        failures.push(error);
      }
    }
    this.#byKey.clear();
    if (failures.length === 0) return;
    const failure = failures[0];
    if (CleanupError.isInstance(failure)) throw failure;
    throw new CleanupError(`The runtime could not release a resource: ${(failure as Error).message}`, {
      cause: failure,
    });
  }
}

/**
 * Starts detecting code mode's sandbox (default `'native'`) in the background, for a runtime that
 * configures code mode: a backend remembers its detection, so the first session finds it done
 * instead of waiting for it. Nothing is reported here; the session that needs the sandbox reports
 * a missing package or an unavailable sandbox itself.
 */
function detectSandboxAhead(registry: Registry, choice: unknown): void {
  const name = choice ?? 'native';
  if (name === 'unrestricted') return;
  const detect = async () => {
    const backend =
      typeof name === 'string' ? await registry.sandbox(name) : (name as Partial<SandboxBackendV1>);
    if (typeof backend?.detect === 'function') await backend.detect();
  };
  void detect().catch(() => undefined);
}

let processDefault: Runtime | undefined;

/**
 * Replaces the process's default runtime with a new one built from `options`, and returns it.
 * APIs given no runtime use it from then on.
 *
 * @example
 * ```ts
 * configure({ codeMode: { sandbox: 'native' } });
 * ```
 */
export function configure(options: RuntimeOptions = {}): Runtime {
  processDefault = createRuntime(options);
  return processDefault;
}

/** The process's default runtime: the one {@link configure} set, or one with no options, made on first use. */
export function defaultRuntime(): Runtime {
  processDefault ??= createRuntime();
  return processDefault;
}
