/** The host names a server on the loopback interface answers to, whatever its port. */
export const loopbackHostNames: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

function hostNameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Why a request must be refused to block DNS rebinding, or undefined when it may go on: its
 * `Host` must name one of `allowedHostNames` (any port), and its `Origin`, when a browser sent
 * one, must too. A web page whose name was rebound to 127.0.0.1 still sends its own name in both.
 */
export function requestOriginProblem(
  host: string | undefined,
  origin: string | undefined,
  allowedHostNames: readonly string[],
): string | undefined {
  const hostName = host === undefined ? undefined : hostNameOf(host);
  if (hostName === undefined || !allowedHostNames.includes(hostName)) {
    return `Host ${JSON.stringify(host ?? '')} is not allowed: this server answers to ${allowedHostNames.join(', ')}.`;
  }
  if (origin === undefined) return undefined;
  let originHostName: string | undefined;
  try {
    originHostName = new URL(origin).hostname;
  } catch {
    originHostName = undefined;
  }
  if (originHostName === undefined || !allowedHostNames.includes(originHostName)) {
    return `Origin ${JSON.stringify(origin)} is not allowed: this server answers to pages from ${allowedHostNames.join(', ')}.`;
  }
  return undefined;
}
