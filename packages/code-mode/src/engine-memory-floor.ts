import type { EngineV1 } from './engine.js';
import { CodeModeConfigurationError } from './errors.js';

/**
 * Refuses a session whose `limits.memoryBytes` is below its engine's floor
 * (`EngineV1.minimumMemoryBytes`), before anything is started, with what to set instead.
 *
 * @throws {@link CodeModeConfigurationError} with code `CODE_MODE_LIMIT_INVALID` and `limit: 'memoryBytes'`.
 */
export function requireEngineMemoryFloor(
  engine: Pick<EngineV1, 'name' | 'minimumMemoryBytes'>,
  memoryBytes: number,
  where: string,
): void {
  const floor = engine.minimumMemoryBytes;
  if (floor === undefined || memoryBytes >= floor) return;
  const mebibytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  throw new CodeModeConfigurationError(
    `${where}: engine '${engine.name}' needs limits.memoryBytes of at least ${floor} bytes (${mebibytes(floor)}), and it is ${memoryBytes} (${mebibytes(memoryBytes)}). Set limits: { memoryBytes: ${floor} } or more, or use another engine.`,
    { code: 'CODE_MODE_LIMIT_INVALID', limit: 'memoryBytes' },
  );
}
