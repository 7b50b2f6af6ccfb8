// An AWS credential as a provider key holds it: "ACCESS_KEY_ID:SECRET_ACCESS_KEY" or, for temporary
// credentials, "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN". None of the three contains a colon.
import { GatewayError } from "../../errors/catalogue.js";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export function parseAwsKey(key: string): AwsCredentials {
  const parts = key.trim().split(":");
  const [accessKeyId, secretAccessKey, sessionToken] = parts;
  if (parts.length < 2 || parts.length > 3 || !accessKeyId || !secretAccessKey || (parts.length === 3 && !sessionToken)) {
    // The key itself never goes into the message.
    throw new GatewayError("provider_error", "An upstream key of this provider is not of the form ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN].");
  }
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}
