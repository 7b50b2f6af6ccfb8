// OpenAI and every OpenAI-compatible vendor: a Bearer key.
import type { Authenticate } from "../descriptor.js";

export const authenticateOpenAi: Authenticate = (request, key) => {
  request.headers.authorization = `Bearer ${key}`;
};
