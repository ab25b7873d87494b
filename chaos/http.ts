/** The response header naming the message (the idempotency key its events carry as `messageId`) a write was. */
export const MESSAGE_ID_HEADER = 'x-od-message-id';

export interface Answer {
  /** 0: no answer (refused connection, the client's own timeout) */
  status: number;
  /** the body parsed as JSON; its first 200 characters when it is not JSON; null when empty or unanswered */
  body: unknown;
  /** the body as sent ('' when unanswered) */
  text: string;
  /** the body was not empty and not JSON */
  notJson: boolean;
  retryAfter: string | null;
  /** the response's x-od-message-id header, when present */
  messageId?: string;
}

/** One call with a bearer token; never throws: no answer is status 0. */
export async function send(baseUrl: string, method: 'GET' | 'POST', pathAndQuery: string, token: string, body: unknown, timeoutMs: number): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(baseUrl + pathAndQuery, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = null;
    let notJson = false;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text.slice(0, 200);
      notJson = true;
    }
    const messageId = res.headers.get(MESSAGE_ID_HEADER);
    return { status: res.status, body: parsed, text, notJson, retryAfter: res.headers.get('retry-after'), ...(messageId ? { messageId } : {}) };
  } catch {
    return { status: 0, body: null, text: '', notJson: false, retryAfter: null };
  }
}
