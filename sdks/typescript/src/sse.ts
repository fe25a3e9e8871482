// Server-Sent Events read from lines, as the HTML standard's event stream parsing says.

export interface SseMessage {
  event: string;
  data?: string;
  id?: string;
  retry?: number;
}

/** Fed one line at a time (without its end); gives a message at each blank line. */
export class SseParser {
  private data: string[] = [];
  private event?: string;
  private id?: string;
  private retry?: number;

  feed(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined; // a comment: the keep-alive
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.data.push(value);
    else if (name === 'event') this.event = value;
    else if (name === 'id' && !value.includes('\0')) this.id = value;
    else if (name === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    let message: SseMessage | undefined;
    if (this.data.length > 0 || this.retry !== undefined || this.event !== undefined) {
      message = { event: this.event ?? 'message', id: this.id, retry: this.retry };
      if (this.data.length > 0) message.data = this.data.join('\n');
    }
    this.data = [];
    this.event = undefined;
    this.retry = undefined;
    return message;
  }
}

/** The lines of a byte stream, each without its end; they end when `signal` aborts, whether or
 * not the fetch that gave the stream saw the abort (the stream is cancelled here). */
export async function* lines(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const cancel = () => void reader.cancel(signal?.reason).catch(() => {});
  if (signal?.aborted) cancel();
  signal?.addEventListener('abort', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.search(/\r\n|\r|\n/)) >= 0) {
        yield buffered.slice(0, end);
        buffered = buffered.slice(end + (buffered.startsWith('\r\n', end) ? 2 : 1));
      }
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    reader.releaseLock();
  }
}
