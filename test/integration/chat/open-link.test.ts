/**
 * Links in a chat open only through main's https-only opener, and only after the person confirms
 * the full address: a compromised renderer asking `chat:open-link` gets nothing more.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, startChatCore, type ChatCore } from './helpers';

let t: ChatCore | undefined;
afterEach(async () => {
  await t?.core.close();
  t = undefined;
});

describe('chat:open-link', () => {
  it('refuses anything but https, asks before opening, and opens only what was confirmed', async () => {
    const opened: string[] = [];
    const asked: string[] = [];
    let answer = false;
    t = await startChatCore({ browser: { open: async (url) => void opened.push(url) }, chat: { confirmLink: async (url) => (asked.push(url), answer) } });
    await expect(call(t.core, 'chat:open-link', { url: 'http://example.com/' })).rejects.toThrow(/DENIED.*only https/);
    await expect(call(t.core, 'chat:open-link', { url: 'javascript:alert(1)' })).rejects.toThrow(/DENIED/);
    await expect(call(t.core, 'chat:open-link', { url: 'file:///etc/passwd' })).rejects.toThrow(/DENIED/);
    expect(await call(t.core, 'chat:open-link', { url: 'https://example.com/a' })).toEqual({ opened: false });
    answer = true;
    expect(await call(t.core, 'chat:open-link', { url: 'https://example.com/b' })).toEqual({ opened: true });
    expect(asked).toEqual(['https://example.com/a', 'https://example.com/b']);
    expect(opened).toEqual(['https://example.com/b']);
  });

  it('a host without a confirmation opens nothing', async () => {
    t = await startChatCore();
    await expect(call(t.core, 'chat:open-link', { url: 'https://example.com/' })).rejects.toThrow(/UNSUPPORTED/);
  });
});
