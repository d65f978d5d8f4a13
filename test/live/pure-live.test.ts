import { describe, expect, it } from 'vitest';
import { agentTurnDelayMs } from '../../src/live/agent-pace.js';
import { contactRefusal, findContactDetails } from '../../src/live/contact-details.js';

describe('findContactDetails', () => {
  it('finds links, e-mail addresses and phone numbers in the ways people write them', () => {
    const found = {
      'see www.example.com for it': 'link',
      'go to https://t.me/someone': 'link',
      'my site is ana-silva.co.uk/about': 'link',
      'find me at example.io': 'link',
      'write to ana.silva@example.org please': 'email',
      'call +44 20 7946 0958 tonight': 'phone',
      'my number is 555-123-4567': 'phone',
      'ring (555) 123 4567': 'phone',
      'text 07700900123': 'phone',
    };
    for (const [text, kind] of Object.entries(found)) expect([text, findContactDetails(text)]).toEqual([text, kind]);
  });

  it('lets prices, quantities, times and ordinary sentences through', () => {
    const fine = [
      'I can go up to $1,250,000 for the house.',
      'How about $1 250 000?',
      'I will pay 2500 dollars, not a cent more.',
      'It costs 12.50 and weighs 3.5 kg.',
      'Meet me at 10:30, Mr. Smith.',
      'I have 3 kids, 2 dogs and 1 cat.',
      'That was back in 2019, e.g. before the move.',
      'Fine. I agree.',
    ];
    for (const text of fine) expect([text, findContactDetails(text)]).toEqual([text, null]);
  });

  it('contactRefusal says what was found and that nothing was sent', () => {
    expect(contactRefusal('phone')).toBe('Your message was not sent: it seems to hold a phone number. Links and contact details cannot be shared in this study; please write your message without it.');
  });
});

describe('agentTurnDelayMs', () => {
  const base = { partnerText: '', wordsPerMinute: 40, capMs: 60_000 };
  it('is thinking, reading the partner at 240 words a minute and typing at the pace, times a factor of 0.75 to 1.25', () => {
    // 20 words at 40 wpm = 30 s; 24 words read = 6 s; 1.5 s of thought: 37.5 s.
    const text = Array.from({ length: 20 }, () => 'word').join(' ');
    const partnerText = Array.from({ length: 24 }, () => 'w').join(' ');
    expect(agentTurnDelayMs({ ...base, text, partnerText, random: () => 0.5 })).toBe(37_500);
    expect(agentTurnDelayMs({ ...base, text, partnerText, random: () => 0 })).toBe(28_125);
    expect(agentTurnDelayMs({ ...base, text, partnerText, random: () => 1 })).toBe(46_875);
  });

  it('is never below 2.5 s nor above the cap', () => {
    expect(agentTurnDelayMs({ ...base, text: 'ok', random: () => 0 })).toBe(2_500);
    expect(agentTurnDelayMs({ ...base, text: Array.from({ length: 500 }, () => 'w').join(' '), random: () => 1, capMs: 27_000 })).toBe(27_000);
    expect(agentTurnDelayMs({ ...base, text: 'ok', random: () => 0, capMs: 1_000 })).toBe(2_500);
  });
});
