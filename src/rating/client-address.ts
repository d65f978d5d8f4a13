import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';

/**
 * The part of a client address that names one client: an IPv4 address, or the /64 prefix of an IPv6 address (one
 * home or phone usually holds a whole /64 and can pick any address in it). IPv4-mapped IPv6 is read as IPv4.
 */
export function clientNetwork(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(ip)) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * A salted hash of the client's network, per batch: raters of one batch who came from the same place share it, and
 * nothing stored or shown lets anyone recover the address or link raters across batches (the salt is the server's
 * secret). Only the hash is ever stored.
 */
export function addressHash(secret: string, batchPublicId: string, ip: string | undefined): string | null {
  if (!ip) return null;
  return createHmac('sha256', secret).update(`client-address\n${batchPublicId}\n${clientNetwork(ip)}`).digest('base64url').slice(0, 22);
}

/**
 * Who holds a place of an address while reading the consent page (src/rating/address-holds.queries.ts): a Prolific or
 * MTurk participant by their id (hashed, per batch), so that opening the link again renews one hold; a plain-link
 * visitor, who has no stable id, by the rater id their consent form carries.
 */
export function addressHolder(secret: string, batchPublicId: string, entry: { kind: 'link' } | { kind: 'prolific' | 'mturk'; participantId: string }, raterPublicId: string): string {
  if (entry.kind === 'link') return `r:${raterPublicId}`;
  return `p:${createHmac('sha256', secret).update(`address-holder\n${batchPublicId}\n${entry.kind}\n${entry.participantId.toLowerCase()}`).digest('base64url').slice(0, 22)}`;
}
