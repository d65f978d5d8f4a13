// Issue 49 item 2: the one check every publish path puts its study link through.
import { describe, expect, it } from 'vitest';
import { publicLinkProblem } from '../../src/web/public-link.js';

describe('publicLinkProblem', () => {
  it.each([
    ['http://127.0.0.1:4311/r/abc', 'loopback'],
    ['https://127.8.9.10/r/abc', 'loopback'],
    // WHATWG URL parsing normalises the short and hexadecimal forms of 127.0.0.1 before the check sees them.
    ['https://127.1/r/abc', 'loopback'],
    ['https://0x7f000001/r/abc', 'loopback'],
    ['https://[::1]:3000/r/abc', 'loopback'],
    ['https://localhost:3000/r/abc', 'localhost'],
    ['https://LocalHost./r/abc', 'localhost'],
    ['https://study.localhost/r/abc', 'localhost'],
    ['https://10.20.30.40/r/abc', 'private'],
    ['https://172.16.0.1/r/abc', 'private'],
    ['https://172.31.255.254/r/abc', 'private'],
    ['https://192.168.1.20:8443/r/abc', 'private'],
    ['https://100.64.0.1/r/abc', 'private'],
    ['https://[fd00:1234::5]/r/abc', 'private'],
    ['https://[::ffff:192.168.0.7]/r/abc', 'private'],
    ['https://169.254.10.1/r/abc', 'link-local'],
    ['https://[fe80::1ff:fe23:4567:890a]/r/abc', 'link-local'],
    ['https://0.0.0.0:3000/r/abc', 'unspecified'],
    ['https://[::]:3000/r/abc', 'unspecified'],
    ['http://rate.example.org/r/abc', 'http'],
    ['http://203.0.113.9/r/abc', 'http'],
    ['not a link', 'invalid'],
  ])('publicLinkProblem(%s) is %s', (link, kind) => {
    const problem = publicLinkProblem(link);
    expect(problem?.kind).toBe(kind);
    if (kind !== 'invalid') expect(problem?.message).toContain('Set PUBLIC_URL to the https address participants reach the server at (see docs/operator/running-in-public.md).');
  });

  it.each(['https://rate.example.org/r/abc', 'https://172.32.0.1/r/abc', 'https://192.169.0.1/r/abc', 'https://8.8.8.8/r/abc', 'https://[2606:4700::1111]/r/abc', 'https://localhost.example.org/r/abc'])(
    'publicLinkProblem(%s), an https link participants on the internet can open, is null',
    (link) => {
      expect(publicLinkProblem(link)).toBeNull();
    },
  );
});
