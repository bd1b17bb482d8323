import type { IncomingMessage } from 'node:http';
import type { RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { AgUiRequestError } from './ag-ui-request-error.js';

/** How many schema problems an error lists at most. */
const shownProblems = 10;

function readBody(request: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBodyBytes) {
    return Promise.reject(tooLarge(maxBodyBytes));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanUp = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        cleanUp();
        // Stop taking the rest: the answer says why and closes the connection.
        request.pause();
        reject(tooLarge(maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanUp();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(new AgUiRequestError(`The request body could not be read: ${error.message}`, { cause: error }));
    };
    const onClose = () => {
      cleanUp();
      reject(new AgUiRequestError('The client closed the connection before sending the whole body.'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

function tooLarge(maxBodyBytes: number): AgUiRequestError {
  return new AgUiRequestError(
    `The request body is larger than ${maxBodyBytes} bytes; send a shorter thread, or raise the handler's maxBodyBytes.`,
    { status: 413, code: 'AG_UI_REQUEST_TOO_LARGE', maxBodyBytes },
  );
}

function parseJson(body: Buffer | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (error) {
    throw new AgUiRequestError(`The request body is not JSON: ${(error as Error).message}`);
  }
}

/**
 * Reads and validates one request's `RunAgentInput` with `@ag-ui/core`'s schema. A body a
 * framework already parsed (`request.body`, as Express's `express.json()` leaves it) is used as
 * it is; otherwise the body is read, up to `maxBodyBytes`.
 */
export async function readRunAgentInput(
  request: IncomingMessage,
  maxBodyBytes: number,
): Promise<RunAgentInput> {
  const parsedBody = (request as { body?: unknown }).body;
  let json: unknown;
  if (parsedBody === undefined) {
    json = parseJson(await readBody(request, maxBodyBytes));
  } else if (typeof parsedBody === 'string' || Buffer.isBuffer(parsedBody)) {
    if (Buffer.byteLength(parsedBody) > maxBodyBytes) throw tooLarge(maxBodyBytes);
    json = parseJson(parsedBody);
  } else {
    json = parsedBody;
  }
  const result = RunAgentInputSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.slice(0, shownProblems).map((issue) => ({
      path: issue.path.map(String).join('.') || '(body)',
      message: issue.message,
    }));
    const listed = problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
    const more =
      result.error.issues.length > shownProblems
        ? ` (and ${result.error.issues.length - shownProblems} more)`
        : '';
    throw new AgUiRequestError(`The request is not an AG-UI RunAgentInput: ${listed}${more}.`, {
      problems,
    });
  }
  return result.data as RunAgentInput;
}
