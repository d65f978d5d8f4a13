import MarkdownIt from 'markdown-it';

/** Batch texts (consent, instructions) are Markdown written by researchers; raw HTML is never passed through. */
export function createMarkdown(): (text: string) => string {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  return (text) => md.render(text);
}
