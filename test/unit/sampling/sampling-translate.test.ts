/**
 * A server's sampling request in the model port's shapes and the reply back: what cannot be sent
 * is replaced by a visible note or refused in words, and nothing the model invents passes.
 */
import { describe, expect, it } from 'vitest';
import { replyToResult, SamplingRefusal, translateRequest, type SamplingParams } from '../../../electron/core/sampling/sampling-translate';

const tools = [{ name: 'search', description: 'Searches.', inputSchema: { type: 'object' as const, properties: {} } }];

describe('translateRequest', () => {
  it('cleans text, replaces images and audio with a visible note, and shows the person every message', () => {
    const params: SamplingParams = {
      systemPrompt: 'Be\u001b[2J brief\u200b.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }] }],
      maxTokens: 10,
    };
    const t = translateRequest(params);
    expect(t.system).toBe('Be brief.');
    expect(t.messages).toEqual([{ role: 'user', text: 'Look:\n[image (image/png) not sent: Warden sends models text only]' }]);
    expect(t.transcript).toBe('Server (as the user): Look:\n[image (image/png) not sent: Warden sends models text only]');
    expect(t.tools).toEqual([]);
  });

  it('toolChoice none offers no tools; a tool name no provider accepts is refused in words', () => {
    expect(translateRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], tools, toolChoice: { mode: 'none' }, maxTokens: 5 }).tools).toEqual([]);
    expect(() => translateRequest({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], tools: [{ ...tools[0]!, name: 'bad name!' }], maxTokens: 5 })).toThrow(
      new SamplingRefusal('the request offers a tool named "bad name!", which no model provider accepts (letters, digits, _ and - only, at most 64)', 'invalid'),
    );
  });
});

describe('replyToResult', () => {
  const withTools: SamplingParams = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], tools, maxTokens: 5 };
  it('without tools the content is one text block; with tools, tool_use blocks follow the text', () => {
    expect(replyToResult({ text: 'ok', toolCalls: [], stopReason: 'max_tokens' }, 'm', { ...withTools, tools: undefined })).toEqual({ role: 'assistant', model: 'm', stopReason: 'maxTokens', content: { type: 'text', text: 'ok' } });
    expect(replyToResult({ text: '', toolCalls: [{ id: 'a', name: 'search', argumentsJson: '{"q":1}' }], stopReason: 'tool_calls' }, 'm', withTools)).toEqual({
      role: 'assistant',
      model: 'm',
      stopReason: 'toolUse',
      content: [{ type: 'tool_use', id: 'a', name: 'search', input: { q: 1 } }],
    });
  });

  it('a call to a tool the request did not offer, or with arguments that are not a JSON object, refuses the whole reply', () => {
    expect(() => replyToResult({ text: '', toolCalls: [{ id: 'a', name: 'delete_everything', argumentsJson: '{}' }], stopReason: 'tool_calls' }, 'm', withTools)).toThrow(/did not offer \("delete_everything"\)/);
    expect(() => replyToResult({ text: '', toolCalls: [{ id: 'a', name: 'search', argumentsJson: '{"q":' }], stopReason: 'tool_calls' }, 'm', withTools)).toThrow(/not JSON/);
    expect(() => replyToResult({ text: '', toolCalls: [{ id: 'a', name: 'search', argumentsJson: '[1]' }], stopReason: 'tool_calls' }, 'm', withTools)).toThrow(/not a JSON object/);
    // With toolChoice none nothing was offered, so no call passes.
    expect(() => replyToResult({ text: '', toolCalls: [{ id: 'a', name: 'search', argumentsJson: '{}' }], stopReason: 'tool_calls' }, 'm', { ...withTools, toolChoice: { mode: 'none' } })).toThrow(/did not offer/);
  });
});
