import { verifyEvents } from '@ag-ui/client';
import type { Event as AgUiEvent, BaseEvent } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';

/**
 * Checks events the way an AG-UI client does: each against `@ag-ui/core`'s schema, and the whole
 * sequence through `@ag-ui/client`'s own verifier (start first, nothing left open, nothing after
 * the end). Returns the events, parsed.
 */
export async function checkedEvents(events: readonly (AgUiEvent | BaseEvent)[]): Promise<AgUiEvent[]> {
  const parsed = events.map((event, index) => {
    const result = EventSchema.safeParse(event);
    if (!result.success) {
      throw new Error(`event ${index} (${event.type}) does not validate: ${result.error.message}`);
    }
    return result.data as AgUiEvent;
  });
  await lastValueFrom(from(parsed as BaseEvent[]).pipe(verifyEvents(), toArray()));
  return parsed;
}

/** The events of one type. */
export function ofType<Type extends AgUiEvent['type']>(
  events: readonly AgUiEvent[],
  type: Type,
): Extract<AgUiEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<AgUiEvent, { type: Type }> => event.type === type);
}
