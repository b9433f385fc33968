/**
 * Resources, prompts, suggestions and log levels of connected servers, and the resources and
 * prompts waiting to be attached to the next chat message.
 *
 * The calls answer straight to the component that asked (a listing or a read belongs to the panel
 * that shows it); what the store keeps is only what outlives a panel: the attachments the person
 * chose, by the id the core staged them under (the window never sends their text).
 */
import type { LogLevel, PromptGotView, ResourceReadView, ServerFeaturesView } from '../../../shared/contract/server-data';
import type { RequestOf, ResponseOf } from '../../../shared/ipc';
import { unwrap } from '../api';
import type { SliceCreator } from './types';

/** A resource or prompt chosen for the next chat message. */
export interface PendingAttachment {
  attachmentId: string;
  kind: 'resource' | 'prompt';
  serverLabel: string;
  title: string;
}

export interface ServerDataSlice {
  pendingAttachments: PendingAttachment[];
  serverFeatures(serverId: string, accountId: string): Promise<ServerFeaturesView>;
  listResources(request: RequestOf<'resources:list'>): Promise<ResponseOf<'resources:list'>>;
  listTemplates(request: RequestOf<'resources:templates'>): Promise<ResponseOf<'resources:templates'>>;
  readResource(request: RequestOf<'resources:read'>): Promise<ResourceReadView>;
  followResource(request: RequestOf<'resources:subscribe'>, follow: boolean): Promise<boolean>;
  listPrompts(request: RequestOf<'prompts:list'>): Promise<ResponseOf<'prompts:list'>>;
  getPrompt(request: RequestOf<'prompts:get'>): Promise<PromptGotView>;
  suggest(request: RequestOf<'completions:complete'>): Promise<string[]>;
  setLogLevel(serverId: string, accountId: string, level: LogLevel): Promise<void>;
  attachToChat(attachment: PendingAttachment): void;
  removeAttachment(attachmentId: string): void;
  clearAttachments(): void;
}

export const createServerDataSlice: SliceCreator<ServerDataSlice> = ({ api }) => (set, get) => ({
  pendingAttachments: [],
  serverFeatures: (serverId, accountId) => unwrap(api().connections.features({ serverId, accountId })),
  listResources: (request) => unwrap(api().resources.list(request)),
  listTemplates: (request) => unwrap(api().resources.templates(request)),
  readResource: (request) => unwrap(api().resources.read(request)),
  async followResource(request, follow) {
    const r = await unwrap(follow ? api().resources.subscribe(request) : api().resources.unsubscribe(request));
    return r.subscribed;
  },
  listPrompts: (request) => unwrap(api().prompts.list(request)),
  getPrompt: (request) => unwrap(api().prompts.get(request)),
  async suggest(request) {
    return (await unwrap(api().completions.complete(request))).values;
  },
  async setLogLevel(serverId, accountId, level) {
    await unwrap(api().logging.setLevel({ serverId, accountId, level }));
  },
  attachToChat(attachment) {
    const others = get().pendingAttachments.filter((a) => a.attachmentId !== attachment.attachmentId);
    // The core takes at most 8 per message.
    set({ pendingAttachments: [...others, attachment].slice(-8) });
  },
  removeAttachment(attachmentId) {
    set({ pendingAttachments: get().pendingAttachments.filter((a) => a.attachmentId !== attachmentId) });
  },
  clearAttachments() {
    set({ pendingAttachments: [] });
  },
});
