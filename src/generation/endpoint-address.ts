/**
 * A base URL as it may be shown and stored: without a user name, password, query or fragment, where a key could hide
 * (`https://user:key@host/v1`, `...?api-key=...`). Any other address is kept exactly as given.
 */
export function endpointAddress(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  if (!url.username && !url.password && !url.search && !url.hash) return baseUrl;
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.toString();
}
