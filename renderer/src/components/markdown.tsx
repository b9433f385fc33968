/**
 * Markdown written by a model, rendered safely: the text is parsed into React elements (React
 * escapes every string), so raw HTML in a reply shows as text and never becomes markup. Links are
 * not followed by the browser: clicking one asks main to open it, which only opens https links
 * after the person confirms the full address in a native dialog.
 *
 * The subset: paragraphs, headings, bullet and numbered lists, fenced code blocks, inline code,
 * bold, italics and links. No images (a reply could use one to send data to a server).
 */
import { Fragment, type ReactNode } from 'react';

type Block =
  | { kind: 'p'; text: string }
  | { kind: 'h'; level: number; text: string }
  | { kind: 'ul' | 'ol'; items: string[] }
  | { kind: 'code'; text: string };

/** Splits markdown text into blocks (pure; exported for tests). */
export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push({ kind: 'p', text: para.join('\n') });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i]!)) body.push(lines[i++]!);
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'h', level: heading[1]!.length, text: heading[2]! });
      continue;
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (bullet || numbered) {
      flush();
      const kind = bullet ? 'ul' : 'ol';
      const last = blocks[blocks.length - 1];
      const text = (bullet ?? numbered)![1]!;
      if (last && last.kind === kind) last.items.push(text);
      else blocks.push({ kind, items: [text] });
      continue;
    }
    if (line.trim() === '') flush();
    else para.push(line);
  }
  flush();
  return blocks;
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|_[^_\n]+_)|(\[[^\]\n]{1,300}\]\([^)\s]{1,2000}\))/;

function Inline({ text, onLink }: { text: string; onLink: (url: string) => void }): ReactNode {
  const out: ReactNode[] = [];
  let rest = text;
  let key = 0;
  while (rest.length) {
    const m = INLINE.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const token = m[0];
    if (m[1]) out.push(<code key={key++}>{token.slice(1, -1)}</code>);
    else if (m[2]) out.push(<strong key={key++}>{token.slice(2, -2)}</strong>);
    else if (m[3]) out.push(<em key={key++}>{token.slice(1, -1)}</em>);
    else {
      const link = /^\[([^\]]*)\]\(([^)]*)\)$/.exec(token)!;
      const url = link[2]!;
      out.push(
        <button key={key++} type="button" className="md-link" title={`Opens ${url} in your browser after you confirm it`} onClick={() => onLink(url)}>
          {link[1] || url}
        </button>,
      );
    }
    rest = rest.slice(m.index + token.length);
  }
  return <>{out}</>;
}

/** Renders model-written markdown as safe React elements. */
export function Markdown({ text, onLink }: { text: string; onLink: (url: string) => void }) {
  return (
    <div className="md">
      {parseBlocks(text).map((b, i) => {
        switch (b.kind) {
          case 'p':
            return (
              <p key={i}>
                {b.text.split('\n').map((line, j) => (
                  <Fragment key={j}>
                    {j > 0 ? <br /> : null}
                    <Inline text={line} onLink={onLink} />
                  </Fragment>
                ))}
              </p>
            );
          case 'h':
            return (
              <p key={i} className={`md-h md-h${b.level}`}>
                <strong>
                  <Inline text={b.text} onLink={onLink} />
                </strong>
              </p>
            );
          case 'code':
            return (
              <pre key={i} className="code-block">
                {b.text}
              </pre>
            );
          case 'ul':
          case 'ol': {
            const List = b.kind;
            return (
              <List key={i}>
                {b.items.map((item, j) => (
                  <li key={j}>
                    <Inline text={item} onLink={onLink} />
                  </li>
                ))}
              </List>
            );
          }
        }
      })}
    </div>
  );
}
