// Azure OpenAI key authentication: the resource key in an `api-key` header (not a Bearer token).
import type { Authenticate } from "../descriptor.js";

export const authenticateAzure: Authenticate = (request, key) => {
  request.headers["api-key"] = key;
};
