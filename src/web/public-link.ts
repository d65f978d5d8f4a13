import { BlockList, isIP } from 'node:net';

// Whether a link can be opened by a participant on the internet (issue 49): a Prolific study or MTurk HIT whose link
// points at this machine or its local network sends every participant to a page they cannot open, and Prolific and
// MTurk both need https (MTurk frames only https pages). One pure check for every publish path (CLI, console, both
// platforms). Ranges: RFC 1122 (0/8, 127/8), RFC 1918 (private), RFC 6598 (shared 100.64/10), RFC 3927 (link-local),
// RFC 4291 (::, ::1, fe80::/10), RFC 4193 (fc00::/7); `localhost` and `*.localhost` (RFC 6761). Node's BlockList matches
// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against the IPv4 ranges.

export type LinkProblemKind = 'invalid' | 'http' | 'localhost' | 'loopback' | 'private' | 'link-local' | 'unspecified';
/** `reason` completes a sentence about the link ("… is plain http: …"); `message` is the whole refusal, with the fix. */
export type LinkProblem = { kind: LinkProblemKind; host: string; reason: string; message: string };

/** Where a person finds how to give the server an address participants can reach. */
export const PUBLIC_URL_DOCS = 'docs/operator/running-in-public.md';

const RANGES: { kind: Exclude<LinkProblemKind, 'invalid' | 'http' | 'localhost'>; net: string; prefix: number; type: 'ipv4' | 'ipv6' }[] = [
  { kind: 'unspecified', net: '0.0.0.0', prefix: 8, type: 'ipv4' },
  { kind: 'loopback', net: '127.0.0.0', prefix: 8, type: 'ipv4' },
  { kind: 'private', net: '10.0.0.0', prefix: 8, type: 'ipv4' },
  { kind: 'private', net: '172.16.0.0', prefix: 12, type: 'ipv4' },
  { kind: 'private', net: '192.168.0.0', prefix: 16, type: 'ipv4' },
  { kind: 'private', net: '100.64.0.0', prefix: 10, type: 'ipv4' },
  { kind: 'link-local', net: '169.254.0.0', prefix: 16, type: 'ipv4' },
  { kind: 'unspecified', net: '::', prefix: 128, type: 'ipv6' },
  { kind: 'loopback', net: '::1', prefix: 128, type: 'ipv6' },
  { kind: 'private', net: 'fc00::', prefix: 7, type: 'ipv6' },
  { kind: 'link-local', net: 'fe80::', prefix: 10, type: 'ipv6' },
];

const LISTS = RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.net, range.prefix, range.type);
  return { kind: range.kind, list };
});

const WORDS: Record<LinkProblemKind, string> = {
  invalid: 'is not a web address',
  http: 'is plain http: participants on Prolific and MTurk need an https link (MTurk frames only https pages)',
  localhost: 'points at localhost, this machine itself: nobody else can open it',
  loopback: 'points at a loopback address, this machine itself: nobody else can open it',
  private: 'points at a private-range address: only people on this local network can open it',
  'link-local': 'points at a link-local address: only machines on this network segment can open it',
  unspecified: 'points at an unspecified address (0.0.0.0 or ::), which no participant can open',
};

/** The kind of address a host is (an IP literal or a name), or null for a name or address the internet can reach. */
function hostProblem(host: string): LinkProblemKind | null {
  const name = host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return 'localhost';
  const version = isIP(name);
  if (version === 0) return null;
  const type = version === 4 ? 'ipv4' : 'ipv6';
  return LISTS.find(({ list }) => list.check(name, type))?.kind ?? null;
}

/**
 * Why participants on the internet could not open `link`, or null when they can: a link that is not a URL, whose host
 * is localhost or a loopback, private, link-local or unspecified address, or that is plain http (checked last: an
 * http link to 127.0.0.1 is first of all on this machine).
 */
export function publicLinkProblem(link: string): LinkProblem | null {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return { kind: 'invalid', host: '', reason: WORDS.invalid, message: `The study link ${link} ${WORDS.invalid}.` };
  }
  const kind = hostProblem(url.hostname) ?? (url.protocol === 'https:' ? null : 'http');
  if (!kind) return null;
  return {
    kind,
    host: url.hostname,
    reason: WORDS[kind],
    message: `The study link ${link} ${WORDS[kind]}. Set PUBLIC_URL to the https address participants reach the server at (see ${PUBLIC_URL_DOCS}).`,
  };
}
