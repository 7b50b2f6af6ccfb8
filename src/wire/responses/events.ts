/** The Responses stream events that end a response; each carries the response with its usage. */
export const RESPONSES_TERMINAL_EVENTS: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"]);
