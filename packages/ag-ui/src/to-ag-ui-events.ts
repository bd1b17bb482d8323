import type { Event as AgUiEvent } from '@ag-ui/core';
import type { Run, RunStream } from '@ghost/core';
import { AgUiEventMapper, type AgUiEventMapperOptions } from './ag-ui-event-mapper.js';

/**
 * A run's stream as AG-UI events, from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR` (see
 * {@link AgUiEventMapper} for how each Ghost event maps). Stopping the iteration early stops
 * reading the run's stream, which cancels the run.
 *
 * @example
 * ```ts
 * import { EventEncoder } from '@ag-ui/encoder';
 *
 * const encoder = new EventEncoder();
 * const stream = agent.streamAsk('Where is my parcel?');
 * for await (const event of toAgUiEvents(stream, { threadId: 'thread-1' })) {
 *   response.write(encoder.encode(event));
 * }
 * ```
 */
export async function* toAgUiEvents(
  stream: RunStream,
  options: AgUiEventMapperOptions,
): AsyncGenerator<AgUiEvent> {
  const mapper = new AgUiEventMapper(options);
  for await (const event of stream) yield* mapper.map(event);
  let run: Run | undefined;
  try {
    run = await stream.run;
  } catch {
    // The run's cleanup failed: its terminal event (a RUN_ERROR) says so; no snapshot without it.
    run = undefined;
  }
  yield* mapper.finish(run);
}
