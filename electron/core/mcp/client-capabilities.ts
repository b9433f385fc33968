/**
 * The SDK client of one connection: what Warden offers the server (its capabilities) and the
 * handler of each request the server may send back. Each capability is declared and handled in
 * one place here, so offering a new one is a capability entry and a registration line, next to
 * the others; the handlers live in their own files and never reach the gate.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { BrowserOpener } from '../ports';
import { ELICITATION_CAPABILITIES, registerElicitation, type Elicitor } from '../elicitation/elicitation';
import { LinearJsonSchemaValidator } from '../validation/schemas';
import { registerRoots, ROOTS_CAPABILITIES } from './roots-handler';
import { registerSampling, SAMPLING_CAPABILITIES, type SamplingAnswer } from './sampling-handler';

/** What the client offers one (server, account); an absent part is not offered. */
export interface ClientOffers {
  serverId: string;
  accountId: string;
  clientInfo: { name: string; version: string };
  /** Answers a server's elicitation requests. */
  elicitation?: { elicitor: Elicitor; browser: BrowserOpener; serverLabel: string };
  /** The folders given to this (server, account) as roots. */
  roots?: () => Array<{ uri: string; name: string }>;
  /** Answers the server's sampling requests (the person's model, as the person set it). */
  sampling?: SamplingAnswer;
}

/** A fresh SDK client with Warden's capabilities and their request handlers. */
export function createClient(offers: ClientOffers): Client {
  const { elicitation, roots, sampling } = offers;
  const capabilities = { ...(elicitation ? ELICITATION_CAPABILITIES : {}), ...(roots ? ROOTS_CAPABILITIES : {}), ...(sampling ? SAMPLING_CAPABILITIES : {}) };
  // Schemas the SDK compiles itself (none for tool results: see output-schema.ts) run on the linear-time engine too.
  const client = new Client(offers.clientInfo, { capabilities, jsonSchemaValidator: new LinearJsonSchemaValidator() });
  if (roots) registerRoots(client, roots);
  if (sampling) registerSampling(client, sampling);
  if (elicitation) {
    // Labelled with Warden's id and label for the server, never its self-declared name; an
    // answer is only an answer, never a tool approval (the gate is not reachable from here).
    registerElicitation(client, { serverId: offers.serverId, serverLabel: elicitation.serverLabel, accountId: offers.accountId, elicitor: elicitation.elicitor, browser: elicitation.browser });
  }
  return client;
}
