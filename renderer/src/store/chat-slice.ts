/**
 * Chat: a cache of the conversation list and the open conversation, kept current by `chat:*`
 * events (streamed text, changed messages, changed conversations).
 *
 * The renderer cannot approve a tool call: `reviewMessage` asks main to show its native dialog
 * for the calls of one reply, and the person decides there.
 */
import type { ChatMessage, ChatTool, Conversation, ConversationSummary } from '../../../shared/contract/chat';
import type { PermissionMode } from '../../../shared/domain/operations';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

/** A provider in the model picker. */
export interface ProviderOption {
  providerId: string;
  kind: 'anthropic' | 'openai' | 'demo';
  label: string;
  defaultModel: string | null;
}

export interface ChatSlice {
  conversations: ConversationSummary[];
  chatSearch: string;
  conversation: Conversation | null;
  chatProviders: ProviderOption[];
  /** Models of the open conversation's provider (null: the provider cannot list them). */
  chatModels: Array<{ id: string; label: string }> | null;
  chatTools: ChatTool[];
  chatError: ShownError | null;
  /** Set while a chat action waits for main (e.g. starting the demo). */
  chatBusy: boolean;
  refreshConversations(): Promise<void>;
  searchConversations(search: string): Promise<void>;
  openConversation(conversationId: string): Promise<void>;
  newConversation(): Promise<void>;
  startDemo(): Promise<void>;
  sendMessage(text: string): Promise<boolean>;
  stopReply(): Promise<void>;
  renameConversation(title: string): Promise<void>;
  deleteConversation(conversationId: string): Promise<void>;
  chooseModel(providerId: string, model: string | null): Promise<void>;
  reviewMessage(messageId: string): Promise<void>;
  askAgain(messageId: string): Promise<void>;
  openLink(url: string): Promise<void>;
  refreshChatTools(): Promise<void>;
  /** Sets (or with null, removes) this conversation's own rule for one tool; allowing is confirmed natively. */
  setConversationRule(tool: Pick<ChatTool, 'serverId' | 'accountId' | 'toolName'>, mode: PermissionMode | null): Promise<void>;
  watchChat(): () => void;
}

/** Creates the chat slice. */
export const createChatSlice: SliceCreator<ChatSlice> = ({ api }) => (set, get) => {
  const fail = (error: unknown) => set({ chatError: toShownError(error) });
  const upsertMessage = (conversationId: string, message: ChatMessage) => {
    const c = get().conversation;
    if (!c || c.id !== conversationId) return;
    const at = c.messages.findIndex((m) => m.id === message.id);
    const messages = at < 0 ? [...c.messages, message] : c.messages.map((m, i) => (i === at ? message : m));
    set({ conversation: { ...c, messages } });
  };
  const loadModels = async (providerId: string) => {
    try {
      set({ chatModels: (await unwrap(api().chat.models({ providerId }))).models });
    } catch {
      set({ chatModels: null });
    }
  };
  return {
    conversations: [],
    chatSearch: '',
    conversation: null,
    chatProviders: [],
    chatModels: null,
    chatTools: [],
    chatError: null,
    chatBusy: false,
    async refreshConversations() {
      try {
        const [{ conversations }, { providers }] = await Promise.all([unwrap(api().chat.list({ search: get().chatSearch || undefined })), unwrap(api().chat.providers({}))]);
        set({ conversations, chatProviders: providers });
        const open = get().conversation;
        if (!open && conversations[0] && !get().chatSearch) await get().openConversation(conversations[0].id);
      } catch (error) {
        fail(error);
      }
    },
    async searchConversations(search) {
      set({ chatSearch: search });
      try {
        set({ conversations: (await unwrap(api().chat.list({ search: search || undefined }))).conversations });
      } catch (error) {
        fail(error);
      }
    },
    async openConversation(conversationId) {
      try {
        const conversation = await unwrap(api().chat.get({ conversationId }));
        set({ conversation, chatError: null, chatTools: [] });
        await Promise.all([loadModels(conversation.providerId), get().refreshChatTools()]);
      } catch (error) {
        fail(error);
      }
    },
    async newConversation() {
      try {
        const conversation = await unwrap(api().chat.create({}));
        set({ conversation, chatError: null });
        await Promise.all([get().refreshConversations(), loadModels(conversation.providerId), get().refreshChatTools()]);
      } catch (error) {
        fail(error);
      }
    },
    async startDemo() {
      set({ chatBusy: true });
      try {
        const conversation = await unwrap(api().chat.startDemo({}));
        set({ conversation, chatError: null });
        await Promise.all([get().refreshConversations(), loadModels(conversation.providerId), get().refreshChatTools()]);
      } catch (error) {
        fail(error);
      } finally {
        set({ chatBusy: false });
      }
    },
    async sendMessage(text) {
      const c = get().conversation;
      const attachmentIds = get().pendingAttachments.map((a) => a.attachmentId);
      if (!c || (!text.trim() && attachmentIds.length === 0)) return false;
      try {
        await unwrap(api().chat.sendMessage({ conversationId: c.id, text, ...(attachmentIds.length ? { attachmentIds } : {}) }));
        get().clearAttachments();
        set({ chatError: null });
        return true;
      } catch (error) {
        fail(error);
        return false;
      }
    },
    async stopReply() {
      const c = get().conversation;
      if (!c) return;
      try {
        await unwrap(api().chat.stop({ conversationId: c.id }));
      } catch (error) {
        fail(error);
      }
    },
    async renameConversation(title) {
      const c = get().conversation;
      if (!c) return;
      try {
        await unwrap(api().chat.rename({ conversationId: c.id, title }));
      } catch (error) {
        fail(error);
      }
    },
    async deleteConversation(conversationId) {
      try {
        await unwrap(api().chat.delete({ conversationId }));
        if (get().conversation?.id === conversationId) set({ conversation: null, chatTools: [] });
        await get().refreshConversations();
      } catch (error) {
        fail(error);
      }
    },
    async chooseModel(providerId, model) {
      const c = get().conversation;
      if (!c) return;
      try {
        const summary = await unwrap(api().chat.setModel({ conversationId: c.id, providerId, model }));
        set({ conversation: { ...c, providerId: summary.providerId, model: summary.model } });
        if (providerId !== c.providerId) await loadModels(providerId);
      } catch (error) {
        fail(error);
      }
    },
    async reviewMessage(messageId) {
      const c = get().conversation;
      if (!c) return;
      try {
        await unwrap(api().chat.review({ conversationId: c.id, messageId }));
      } catch (error) {
        fail(error);
      }
    },
    async askAgain(messageId) {
      const c = get().conversation;
      if (!c) return;
      try {
        await unwrap(api().chat.askAgain({ conversationId: c.id, messageId }));
      } catch (error) {
        fail(error);
      }
    },
    async openLink(url) {
      try {
        await unwrap(api().chat.openLink({ url }));
      } catch (error) {
        fail(error);
      }
    },
    async refreshChatTools() {
      const c = get().conversation;
      if (!c) return;
      try {
        set({ chatTools: (await unwrap(api().chat.tools({ conversationId: c.id }))).tools });
      } catch (error) {
        fail(error);
      }
    },
    async setConversationRule(tool, mode) {
      const c = get().conversation;
      if (!c) return;
      try {
        if (mode === null) await unwrap(api().permissions.revoke({ ruleId: `conv:${c.id}:${tool.serverId}:${tool.accountId}:${tool.toolName}` }));
        else await unwrap(api().permissions.set({ scope: 'conversation', conversationId: c.id, serverId: tool.serverId, accountId: tool.accountId, toolName: tool.toolName, mode }));
        set({ chatError: null });
      } catch (error) {
        fail(error);
      }
      await get().refreshChatTools();
    },
    watchChat() {
      try {
        const w = api();
        const offs = [
          w.chat.onDelta(({ conversationId, messageId, text }) => {
            const c = get().conversation;
            if (!c || c.id !== conversationId) return;
            set({ conversation: { ...c, messages: c.messages.map((m) => (m.id === messageId ? { ...m, text: m.text + text } : m)) } });
          }),
          w.chat.onMessage(({ conversationId, message }) => upsertMessage(conversationId, message)),
          w.chat.onChanged(({ conversationId, summary }) => {
            const rest = get().conversations.filter((x) => x.id !== conversationId);
            const search = get().chatSearch.toLowerCase();
            const listed = summary && (!search || summary.title.toLowerCase().includes(search)) ? [summary, ...rest] : rest;
            set({ conversations: listed.sort((a, b) => b.updatedAt - a.updatedAt) });
            const c = get().conversation;
            if (c && c.id === conversationId) {
              if (summary) set({ conversation: { ...c, ...summary } });
              else set({ conversation: null });
            }
          }),
          w.permissions.onChanged(() => void get().refreshChatTools()),
          // A provider added, renamed or removed in the Models view shows in the picker at once.
          w.models.onChanged(() => void get().refreshConversations()),
          w.connections.onToolsChanged(() => void get().refreshChatTools()),
        ];
        return () => offs.forEach((off) => off());
      } catch (error) {
        fail(error);
        return () => {};
      }
    },
  };
};
