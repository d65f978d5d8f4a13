import { createHmac, timingSafeEqual } from 'node:crypto';

// How Prolific signs a webhook (docs.prolific.com, Webhooks, "Verifying"): "Hook requests will contain two headers,
// X-Prolific-Request-Signature and X-Prolific-Request-Timestamp"; to verify, "sign the request body and timestamp with
// your secret key using SHA256 and then base64 encode the resulting digest" (its example: HMAC-SHA256 over
// timestamp + body, base64, compared in constant time). The body is the bytes as they arrived: parsing and writing it
// again could change them.

export function prolificSignature(secret: string, timestamp: string, body: Buffer): string {
  return createHmac('sha256', secret).update(Buffer.concat([Buffer.from(timestamp, 'utf8'), body])).digest('base64');
}

/** Whether the delivery carries both headers and a signature made with `secret` over its timestamp and body. */
export function isSignedByProlific(secret: string, headers: { signature: string | undefined; timestamp: string | undefined }, body: Buffer): boolean {
  if (!headers.signature || !headers.timestamp) return false;
  const expected = Buffer.from(prolificSignature(secret, headers.timestamp, body), 'utf8');
  const given = Buffer.from(headers.signature, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
