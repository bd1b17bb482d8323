import { type Event as AgUiEvent, EventType } from '@ag-ui/core';
import type { StreamEventOf } from '@ghost/core';
import type { AssemblyStepEventData } from '@ghost/core/assembly';

/** The assembly event types that become AG-UI `CUSTOM` events named `ghost.<type>`. */
export type AssemblyRoutingEventType =
  | 'assembly_fork'
  | 'assembly_join'
  | 'assembly_transition'
  | 'assembly_handoff_loop';

/** The step name of an assembly's step: `<step>#<stepId>` (ids are unique in the run). */
function assemblyStepNameOf(data: Pick<AssemblyStepEventData, 'step' | 'stepId'>): string {
  return `${data.step}#${data.stepId}`;
}

function pathKeyOf(path: readonly string[]): string {
  return JSON.stringify(path);
}

/**
 * Maps an assembly's steps (a Workflow's invocations, a Graph's nodes, a Swarm member's turns) to
 * AG-UI steps: each attempt of a step is a `STEP_STARTED` / `STEP_FINISHED` pair named
 * `<step>#<stepId>`, with `metadata.ghost` saying which assembly, step, agent, attempt and path;
 * a failed attempt's `STEP_FINISHED` carries `metadata.ghost.error`. Steps of parallel branches
 * overlap, as they ran. The agent a step runs is then told to the client as a subagent (see
 * `SubagentEventMapper`), attributed to its step by {@link AssemblyStepMapper.stepNameAt}.
 */
export class AssemblyStepMapper {
  /** Open steps' names by their path; several when same-named steps run in parallel. */
  readonly #openByPath = new Map<string, string[]>();

  start(out: AgUiEvent[], event: StreamEventOf<'assembly_step_start'>): void {
    const { data, timestamp } = event;
    const stepName = assemblyStepNameOf(data);
    const key = pathKeyOf(data.path);
    const open = this.#openByPath.get(key);
    if (open === undefined) this.#openByPath.set(key, [stepName]);
    else open.push(stepName);
    out.push({
      type: EventType.STEP_STARTED,
      timestamp,
      stepName,
      metadata: { ghost: metadataOf(data) },
    });
  }

  finish(out: AgUiEvent[], event: StreamEventOf<'assembly_step_stop' | 'assembly_step_error'>): void {
    const { data, timestamp } = event;
    const stepName = assemblyStepNameOf(data);
    if (!this.#close(data.path, stepName)) return;
    const error = 'error' in data ? { error: data.error } : {};
    out.push({
      type: EventType.STEP_FINISHED,
      timestamp,
      stepName,
      metadata: { ghost: { ...metadataOf(data), durationMs: data.durationMs, ...error } },
    });
  }

  /** A routing decision (fork, join, transition, handoff loop) as a `CUSTOM` event. */
  routing(out: AgUiEvent[], event: StreamEventOf<AssemblyRoutingEventType>): void {
    out.push({
      type: EventType.CUSTOM,
      timestamp: event.timestamp,
      name: `ghost.${event.type}`,
      value: event.data,
    });
  }

  /**
   * The step an agent whose events carry `path` (its `source.path`: the step's path, then its
   * name and invocation id) runs in, if that step is open. When same-named steps run in
   * parallel at one path, the one started last.
   */
  stepNameAt(path: readonly string[]): string | undefined {
    const open = this.#openByPath.get(pathKeyOf(path.slice(0, -2)));
    return open?.[open.length - 1];
  }

  /** Closes the steps still open when the run ends (only a stream that stopped early leaves any). */
  finishAll(out: AgUiEvent[], timestamp: number): void {
    for (const names of this.#openByPath.values()) {
      for (const stepName of names) out.push({ type: EventType.STEP_FINISHED, timestamp, stepName });
    }
    this.#openByPath.clear();
  }

  #close(path: readonly string[], stepName: string): boolean {
    const key = pathKeyOf(path);
    const open = this.#openByPath.get(key);
    const index = open?.indexOf(stepName) ?? -1;
    if (open === undefined || index < 0) return false;
    open.splice(index, 1);
    if (open.length === 0) this.#openByPath.delete(key);
    return true;
  }
}

function metadataOf(data: AssemblyStepEventData): Record<string, unknown> {
  const { assemblyName, step, stepId, agentName, attempt, path } = data;
  return { assemblyName, step, stepId, agentName, attempt, path };
}
