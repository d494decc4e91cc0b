/**
 * When the client sends a request again, and after how long: pure functions of the attempt, the
 * answer (or the transport failure) and the time already spent. The same rules as the Python
 * client's `agentmem_client.retry`:
 *
 * - `429` (queue full, the caller's share of the server taken): always — the server refused the
 *   request before doing anything;
 * - `500`, `502`, `503`, `504`: only for idempotent calls (reads, PUT/DELETE, turns — whose
 *   `message_id` the client generates —, memory creation with its `Idempotency-Key`);
 * - a connection that could not be opened (refused, DNS, connect timeout): always — nothing was sent;
 * - a connection lost after sending (reset, a per-attempt timeout): only for idempotent calls.
 *
 * The wait is the server's `Retry-After` (seconds or an HTTP date) when it sent one, else an
 * exponential backoff with full jitter (`uniform(0, min(maxDelay, baseDelay * 2**(n-1)))`); a call
 * stops after `maxAttempts` or once the next wait would end past `maxTotalMs` since the first
 * attempt, and throws what the last attempt got.
 */

export const RETRIED_ALWAYS: ReadonlySet<number> = new Set([429]);
export const RETRIED_WHEN_IDEMPOTENT: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** A transport failure, by whether the request can have reached the server. */
export type Failure = "not_sent" | "maybe_sent";

export interface RetryOptions {
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxTotalMs?: number;
  /** A longer Retry-After is not waited for: the error is thrown. */
  maxRetryAfterMs?: number;
  /** A number in [0, 1): the jitter (Math.random by default). */
  random?: () => number;
}

/** Bounds of the retries of one call. `new RetryPolicy({ maxAttempts: 1 })` never retries. */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxTotalMs: number;
  readonly maxRetryAfterMs: number;
  readonly random: () => number;

  constructor(options: RetryOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 4;
    this.baseDelayMs = options.baseDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 8000;
    this.maxTotalMs = options.maxTotalMs ?? 30000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60000;
    this.random = options.random ?? Math.random;
    if (!(this.maxAttempts >= 1)) throw new RangeError("maxAttempts must be at least 1");
    if (Math.min(this.baseDelayMs, this.maxDelayMs, this.maxTotalMs, this.maxRetryAfterMs) < 0) {
      throw new RangeError("retry delays must not be negative");
    }
  }

  /** The jittered wait (ms) after failed attempt `attempt` (1-based) without a Retry-After. */
  backoff(attempt: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)) * this.random();
  }

  /** Whether this outcome may be sent again at all (regardless of the bounds). */
  retryable(outcome: { status?: number | undefined; failure?: Failure | undefined; idempotent: boolean }): boolean {
    if (outcome.failure !== undefined) return outcome.failure === "not_sent" || outcome.idempotent;
    if (outcome.status !== undefined && RETRIED_ALWAYS.has(outcome.status)) return true;
    return outcome.idempotent && outcome.status !== undefined && RETRIED_WHEN_IDEMPOTENT.has(outcome.status);
  }

  /** Milliseconds to wait before attempt `attempt + 1`, or undefined to give up and throw. */
  delay(
    attempt: number,
    elapsedMs: number,
    outcome: { status?: number | undefined; failure?: Failure | undefined; idempotent: boolean; retryAfterMs?: number | undefined },
  ): number | undefined {
    if (attempt >= this.maxAttempts || !this.retryable(outcome)) return undefined;
    let wait: number;
    if (outcome.retryAfterMs !== undefined) {
      if (outcome.retryAfterMs > this.maxRetryAfterMs) return undefined;
      wait = outcome.retryAfterMs + this.backoff(1) * 0.1; // a little jitter: not every client at once
    } else {
      wait = this.backoff(attempt);
    }
    return elapsedMs + wait <= this.maxTotalMs ? wait : undefined;
  }
}

export const NO_RETRIES = new RetryPolicy({ maxAttempts: 1 });

/**
 * Seconds a `Retry-After` header asks for: delta-seconds (`"2"`, also `"1.5"`) or an HTTP date
 * (counted from `now`); never negative. Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null || !value.trim()) return undefined;
  const text = value.trim();
  let seconds: number;
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) {
    seconds = Number(text);
  } else {
    const when = Date.parse(text);
    if (Number.isNaN(when)) return undefined;
    seconds = (when - now) / 1000;
  }
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(0, seconds);
}
