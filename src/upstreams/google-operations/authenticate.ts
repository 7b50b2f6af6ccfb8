// Google's Gemini API: the key in x-goog-api-key.
import type { Authenticate } from "../descriptor.js";

export const authenticateGoogle: Authenticate = (request, key) => {
  request.headers["x-goog-api-key"] = key;
};
