import net from 'node:net';

/**
 * A raw HTTP/1.1 client over a socket: the fuzz must send what fetch and node:http refuse to
 * (control bytes in headers, `../` and bad percent-escapes in the request target, duplicate
 * headers, lying content types), and see exactly what the server wrote back.
 */

export interface RawRequest {
  method: string;
  /** the request-target exactly as sent (already percent-encoded, or deliberately not) */
  target: string;
  headers: [string, string][];
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** the decoded body as text (utf8) */
  text: string;
  /** JSON.parse(text), or undefined when it is not JSON */
  json: unknown;
  ms: number;
}

export async function send(host: string, port: number, req: RawRequest, timeoutMs: number): Promise<RawResponse> {
  const started = Date.now();
  const head: string[] = [`${req.method} ${req.target} HTTP/1.1`, `host: ${host}:${port}`, 'connection: close'];
  for (const [k, v] of req.headers) head.push(`${k}: ${v}`);
  if (req.body !== undefined) head.push(`content-length: ${req.body.length}`);
  // latin1 would mangle non-ASCII header bytes; a caller's hostile header is sent as its UTF-8 bytes.
  const bytes = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), req.body ?? Buffer.alloc(0)]);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = net.connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    // No half-close: node's HTTP server ends a connection whose client ended (httpAllowHalfOpen is off)
    // before an async handler answers. `connection: close` makes the server close it after answering.
    sock.on('connect', () => sock.write(bytes));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      // The server may close after answering before we finished writing (e.g. 413): keep what came.
      if (chunks.length > 0) return;
      clearTimeout(timer);
      reject(err);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(Buffer.concat(chunks));
      else reject(new Error('connection closed without an answer'));
    });
  });
  return { ...parse(raw), ms: Date.now() - started };
}

function parse(raw: Buffer): Omit<RawResponse, 'ms'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`not an HTTP response: ${JSON.stringify(raw.subarray(0, 200).toString('latin1'))}`);
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) throw new Error(`bad status line: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: Number(m[1]), headers, text, json };
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const nl = b.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(b.subarray(at, nl).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(b.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return Buffer.concat(out);
}
