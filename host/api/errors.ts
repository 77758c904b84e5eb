// Every error the API answers, in one registry: a stable code, the HTTP status and GitLab's exact
// body (reference/errortracking-api.md §1.5). Handlers return these values; server.ts sends them.

/** An error response: status, body and content type. */
export interface ApiError {
  code: ApiErrorCode;
  status: number;
  body: Record<string, string> | string;
}

const REGISTRY = {
  // authentication (lib/api/helpers.rb unauthorized!, lib/gitlab/auth/auth_finders.rb)
  UNAUTHORIZED: [401, { message: '401 Unauthorized' }],
  TOKEN_EXPIRED: [401, { error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' }],
  TOKEN_REVOKED: [401, { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' }],
  INSUFFICIENT_SCOPE: [403, { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api' }],
  // project and role (find_project!, authorize!)
  PROJECT_NOT_FOUND: [404, { message: '404 Project Not Found' }],
  FORBIDDEN: [403, { message: '403 Forbidden' }],
  // handlers
  SETTING_NOT_FOUND: [404, { message: '404 Error Tracking Setting Not Found' }],
  RECORD_NOT_FOUND: [404, { message: '404 Not found' }], // ActiveRecord::RecordNotFound: lower-case "f"
  NOT_FOUND: [404, { message: '404 Not Found' }],
  ROUTE_NOT_FOUND: [404, { error: '404 Not Found' }], // the catch-all route: key "error"
  // request bodies
  INVALID_BODY: [400, { error: 'message body does not match declared format' }],
  UNSUPPORTED_MEDIA_TYPE: [415, { message: '415 Unsupported Media Type' }],
  REQUEST_TOO_LARGE: [413, { message: '413 Request Entity Too Large' }],
  // a path, parameter or body string PostgreSQL cannot hold (Gitlab::Middleware::HandleNullBytes: `[400, {}, ["Bad Request"]]`)
  BAD_REQUEST: [400, 'Bad Request'],
  // the URL itself (fastify's router errors)
  BAD_URL: [400, { message: '400 Bad request - malformed URL' }],
  URI_TOO_LONG: [414, { message: '414 URI Too Long' }],
  // Sentry ingestion (lib/api/error_tracking/collector.rb, lib/gitlab/middleware/compressed_json.rb)
  SENTRY_UNPARSABLE: [400, { message: '400 Bad request - Failed to parse sentry request' }],
  SENTRY_UNSUPPORTED: [400, { message: '400 Bad request - Unsupported sentry payload' }],
  SENTRY_UNKNOWN_ITEM: [400, { message: '400 Bad Request' }], // collector.rb: "unknown request type"
  // a setting the model refuses: enabled, not integrated (Sentry mode) and no api_url (ProjectErrorTrackingSetting)
  SETTING_INVALID: [400, { message: '400 Bad request - Api url is a required field' }],
  PAYLOAD_TOO_LARGE: [413, 'Payload Too Large'],
  INTERNAL: [500, { message: '500 Internal Server Error' }],
  // the storage is gone (PGlite's directory removed): nothing can be stored or read until a restart
  STORAGE_UNAVAILABLE: [503, { message: '503 Service Unavailable' }],
  // PostgreSQL cannot be reached (stopped, restarting): the request may succeed once it is back
  DATABASE_UNREACHABLE: [503, { message: '503 Service Unavailable - the database cannot be reached, try again later' }],
} as const satisfies Record<string, readonly [number, Record<string, string> | string]>;

type ApiErrorCode = keyof typeof REGISTRY | 'INVALID_PARAMS' | 'SENTRY_INVALID_FIELD';

/** The registered error with this code. */
export function apiError(code: keyof typeof REGISTRY): ApiError {
  const [status, body] = REGISTRY[code];
  return { code, status, body: typeof body === 'string' ? body : { ...body } };
}

/** Parameter validation failure, Grape's shape: `{"error":"active is missing, active is empty"}`. */
export function invalidParams(messages: string[]): ApiError {
  return { code: 'INVALID_PARAMS', status: 400, body: { error: messages.join(', ') } };
}

/** A field of an ingested event that cannot be stored, e.g. a platform longer than 255 characters. */
export function sentryInvalidField(message: string): ApiError {
  return { code: 'SENTRY_INVALID_FIELD', status: 400, body: { message: `400 Bad request - ${message}` } };
}

/** True when `v` is an ApiError value. */
export function isApiError(v: unknown): v is ApiError {
  return typeof v === 'object' && v !== null && 'code' in v && 'status' in v && 'body' in v;
}
