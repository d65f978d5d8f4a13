// Participants of a live study must not exchange ways to meet outside it (issue 52: "no contact exchange"; Prolific
// forbids asking participants for contact details, and live Turing-test studies on Prolific refused them in chat too).
// A message holding a link, an e-mail address or a phone number is refused with a message saying which, and nothing of
// it is stored. Prices and quantities are not phone numbers: bargaining scenarios trade in "$1,250,000" and "3.5 kg".

export type ContactKind = 'link' | 'email' | 'phone';

const EMAIL = /[^\s@<>()]+@[^\s@<>()]+\.[a-z]{2,}/i;
const SCHEME_OR_WWW = /\b(?:https?:\/\/|ftp:\/\/|www\.)\S+/i;
// A bare domain: name.tld with a common top-level domain, optionally a path ("example.com", "t.me/name").
const BARE_DOMAIN = /\b[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|co|uk|de|fr|nl|es|it|info|me|app|ly|gg|tv|xyz|edu|gov|ai|us|ca|au|in|ru|cn|biz|link|site|online)\b(?:\/\S*)?/i;
// A run of digits with the separators phone numbers are written with (spaces, dashes, dots, brackets, a leading +).
const DIGIT_RUN = /\+?\(?\d[\d\s().-]{5,}\d/g;

function looksLikePhone(text: string): boolean {
  for (const match of text.matchAll(DIGIT_RUN)) {
    const digits = match[0].replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) continue;
    const before = text.slice(0, match.index).trimEnd().slice(-1);
    // A sum of money or a decimal quantity is not a phone number.
    if (/[$£€¥]/.test(before) || /\d[.]\d{1,2}$/.test(match[0].trim())) continue;
    return true;
  }
  return false;
}

/** The kind of contact detail a message holds, or null when it holds none. */
export function findContactDetails(text: string): ContactKind | null {
  if (EMAIL.test(text)) return 'email';
  if (SCHEME_OR_WWW.test(text) || BARE_DOMAIN.test(text)) return 'link';
  if (looksLikePhone(text)) return 'phone';
  return null;
}

const NAMES: Record<ContactKind, string> = { link: 'a web link', email: 'an e-mail address', phone: 'a phone number' };

/** What the participant is told when a message is refused. */
export function contactRefusal(kind: ContactKind): string {
  return `Your message was not sent: it seems to hold ${NAMES[kind]}. Links and contact details cannot be shared in this study; please write your message without it.`;
}
