/**
 * The client's errors: one hierarchy under {@link AgentMemClientError}, the class of an HTTP error
 * chosen from its status through one table ({@link ERROR_BY_STATUS}), never from the message text —
 * the same table as the Python client's `agentmem_client.errors`.
 *
 * ```
 * AgentMemClientError
 * ├── AgentMemTransportError          the server could not be reached (after the retries)
 * ├── UnexpectedResponseError         a 2xx whose body is not JSON of the documented shape
 * └── AgentMemHTTPError               any error answer (status, error, message, details)
 *     ├── ClientRequestError          4xx: the request must change
 *     │   ├── InvalidRequestError     400, 413, 415, 422
 *     │   ├── AuthenticationError     401
 *     │   ├── PermissionDeniedError   403
 *     │   ├── NotFoundError           404
 *     │   ├── ConflictError           409
 *     │   └── RateLimitedError        429 (retried first; thrown when the retries ran out)
 *     └── ServerError                 5xx (retried first where the call is idempotent)
 *         └── ServiceUnavailableError 502, 503, 504
 * ```
 */

export const MAX_RAW_MESSAGE = 200; // characters of a non-JSON error body kept as the message

export class AgentMemClientError extends Error {
  /** A stable code: the API's error code for HTTP errors. */
  code = "client_error";
  readonly details: Record<string, unknown>;

  constructor(message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details ?? {};
  }
}

/** No answer: connecting, sending or reading failed (after the retries the call allows). */
export class AgentMemTransportError extends AgentMemClientError {
  override code = "transport_error";
}

/** A success status whose body is not JSON of the documented shape (a proxy page, another server). */
export class UnexpectedResponseError extends AgentMemClientError {
  override code = "unexpected_response";
  constructor(
    message: string,
    readonly status: number,
    options: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export interface HTTPErrorInit {
  details?: unknown;
  retryAfter?: number | undefined;
  requestId?: string | undefined;
}

/**
 * An error answer. `error` is the API's stable code (`not_found`, `queue_full`, ...; `http_<status>`
 * when the body was not an ErrorOut), `retryAfter` the seconds the server asked to wait (429/503),
 * `requestId` the server's request id when it sent one, `detailsRaw` ErrorOut.details as sent.
 */
export class AgentMemHTTPError extends AgentMemClientError {
  readonly detailsRaw: unknown;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    init: HTTPErrorInit = {},
  ) {
    const details = init.details;
    super(message, {
      details: details && typeof details === "object" && !Array.isArray(details) ? (details as Record<string, unknown>) : {},
    });
    this.code = error;
    this.detailsRaw = details;
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
  }

  override toString(): string {
    return `${this.status} ${this.error}: ${this.message}`;
  }
}

/** 4xx: the request is wrong for the server; sending it again unchanged will not help (except a 429). */
export class ClientRequestError extends AgentMemHTTPError {}
/** 400/413/415/422: malformed, too large, not JSON, or failing the schema or a guard. */
export class InvalidRequestError extends ClientRequestError {}
/** 401: no valid token, or no tenant and user. */
export class AuthenticationError extends ClientRequestError {}
/** 403: the caller may not do this. */
export class PermissionDeniedError extends ClientRequestError {}
/** 404: no such record (or route) in the caller's scope. */
export class NotFoundError extends ClientRequestError {}
/** 409: the record changed since `expectedVersion`, or a conflict was already resolved. */
export class ConflictError extends ClientRequestError {}
/** 429: the queue is full or the caller holds its share of the server; retry after `retryAfter` s. */
export class RateLimitedError extends ClientRequestError {}
/** 5xx: the server failed; the request may have been applied unless the call is idempotent. */
export class ServerError extends AgentMemHTTPError {}
/** 502/503/504: a store, the embedder or a worker was unavailable; retry after `retryAfter` s. */
export class ServiceUnavailableError extends ServerError {}

type HTTPErrorClass = new (status: number, error: string, message: string, init?: HTTPErrorInit) => AgentMemHTTPError;

export const ERROR_BY_STATUS: Readonly<Record<number, HTTPErrorClass>> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: InvalidRequestError,
  415: InvalidRequestError,
  422: InvalidRequestError,
  429: RateLimitedError,
  502: ServiceUnavailableError,
  503: ServiceUnavailableError,
  504: ServiceUnavailableError,
};

/** The exception class of an error status: the table's, else by range. */
export function errorClass(status: number): HTTPErrorClass {
  const known = ERROR_BY_STATUS[status];
  if (known) return known;
  if (status >= 400 && status < 500) return ClientRequestError;
  if (status >= 500) return ServerError;
  return AgentMemHTTPError;
}

/**
 * The error of an error answer. An ErrorOut body gives code, message and details; any other body
 * (a gateway's HTML page, empty) gives `http_<status>` and the start of the text.
 */
export function errorFrom(status: number, body: string, init: Omit<HTTPErrorInit, "details"> = {}): AgentMemHTTPError {
  let error = `http_${status}`;
  let message = "";
  let details: unknown = undefined;
  let data: unknown = undefined;
  try {
    data = body ? JSON.parse(body) : undefined;
  } catch {
    data = undefined;
  }
  if (data && typeof data === "object" && typeof (data as Record<string, unknown>).error === "string") {
    const out = data as Record<string, unknown>;
    error = out.error as string;
    message = String(out.message ?? "");
    details = out.details;
  } else if (data && typeof data === "object" && typeof (data as Record<string, unknown>).message === "string") {
    message = (data as Record<string, unknown>).message as string; // API Gateway's own answers
  } else {
    message = body.trim().slice(0, MAX_RAW_MESSAGE);
  }
  const Cls = errorClass(status);
  return new Cls(status, error, message || `HTTP ${status}`, { details, ...init });
}
