import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One event as a client received it; `data` parsed as JSON when it is JSON. */
export interface ReceivedEvent {
  id?: string;
  event?: string;
  data?: any;
}

export interface OpenStream {
  response: Response;
  /** Every event so far, in the order received. */
  events: ReceivedEvent[];
  /** The `change` events so far. */
  changes(): ReceivedEvent[];
  /** The id of the last event that carried one (what a client resumes after). */
  lastEventId(): string | undefined;
  ended(): boolean;
  close(): void;
}

/** Opens an event stream over a real socket and parses events as they arrive (eventsource-parser). */
export async function openEventStream(
  url: string,
  init: { token?: string; headers?: Record<string, string>; method?: string; body?: unknown } = {},
): Promise<OpenStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: controller.signal,
  });
  const events: ReceivedEvent[] = [];
  let lastId: string | undefined;
  let ended = response.status !== 200;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (message.id !== undefined) lastId = message.id;
      events.push({ id: message.id, event: message.event, data: parseData(message.data) });
    },
  });
  if (response.status === 200) {
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted
      }
      ended = true;
    })();
  }
  return {
    response,
    events,
    changes: () => events.filter((event) => event.event === 'change'),
    lastEventId: () => lastId,
    ended: () => ended,
    close: () => controller.abort(),
  };
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** Polls `check` until it returns something truthy. */
export async function waitUntil<T>(what: string, check: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
