import { describe, expect, it } from 'vitest';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { Markdown, parseBlocks } from '../../../renderer/src/components/markdown';

const render = (text: string) => renderToStaticMarkup(createElement(Markdown, { text, onLink: () => {} }));

describe('model-written markdown', () => {
  it('never becomes HTML: tags in a reply are shown as text', () => {
    const html = render('Hi <img src=x onerror="alert(1)"> and <script>alert(2)</script> **bold** `<b>code</b>`');
    expect(html).not.toMatch(/<img|<script|<b>/);
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>&lt;b&gt;code&lt;/b&gt;</code>');
  });

  it('links are buttons that ask main to open them, never anchors the page follows', () => {
    const html = render('See [the docs](https://example.com/a) or [bad](javascript:alert(1))');
    expect(html).not.toMatch(/<a\b|href=/);
    expect(html).toContain('<button type="button" class="md-link"');
  });

  it('parses paragraphs, headings, lists and fenced code', () => {
    expect(parseBlocks('# Title\n\npara one\nline two\n\n- a\n- b\n1. x\n```\n<code>\n```').map((b: { kind: string }) => b.kind)).toEqual(['h', 'p', 'ul', 'ol', 'code']);
  });
});
