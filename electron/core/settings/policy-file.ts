/**
 * Where a person's permission rules live between runs: a small versioned document in its own
 * settings file (`policy.json` next to `settings.json`), validated on load.
 *
 * Fail closed: a file that is unreadable or invalid is never "repaired" by dropping rules that
 * would make something stricter. It is kept untouched, reported, and the app starts with no user
 * rules — every discovered tool is then `ask` (the built-in default), never more permissive.
 */
import { z } from 'zod';
import { PolicyState, UserRule, ConversationOverride } from '../../../shared/domain/policy';
import type { SettingsStore } from './settings-store';
import { describeIssues } from '../dispatch';

export const POLICY_FILE_VERSION = 1;

const PolicyDocument = z.object({
  version: z.literal(POLICY_FILE_VERSION),
  user: z.array(UserRule),
  conversation: z.array(ConversationOverride).default([]),
  /** Servers whose folders are a wall (absent in files written before the option existed). */
  enforcedRoots: z.array(z.string().min(1)).default([]),
});

/** What was loaded, plus a human-readable problem when the file could not be used. */
export interface LoadedPolicy {
  user: z.infer<typeof UserRule>[];
  conversation: z.infer<typeof ConversationOverride>[];
  enforcedRoots: string[];
  /** Set when the file existed but was unusable; the file is left as it was. */
  problem: string | null;
  /** False while the file is unusable: saving would overwrite what a person may want back. */
  writable: boolean;
}

/** Reads the rules document; an empty or missing file means no rules. */
export function loadPolicyFile(store: SettingsStore): LoadedPolicy {
  let raw: Record<string, unknown>;
  try {
    raw = store.read();
  } catch (error) {
    return { user: [], conversation: [], enforcedRoots: [], problem: `${store.path}: ${error instanceof Error ? error.message : String(error)}`, writable: false };
  }
  if (Object.keys(raw).length === 0) return { user: [], conversation: [], enforcedRoots: [], problem: null, writable: true };
  const parsed = PolicyDocument.safeParse(raw);
  if (!parsed.success) {
    return {
      user: [],
      conversation: [],
      enforcedRoots: [],
      problem: `${store.path} is not a valid Warden policy file (${describeIssues(parsed.error.issues)}); it was left untouched and every tool will ask until it is fixed`,
      writable: false,
    };
  }
  return { user: parsed.data.user, conversation: parsed.data.conversation, enforcedRoots: parsed.data.enforcedRoots, problem: null, writable: true };
}

/**
 * Saves the person's rules (user + conversation layers; organization rules come from the managed
 * file and safe mode from the ledger, so neither is written here).
 */
export function savePolicyFile(store: SettingsStore, state: PolicyState): void {
  const doc = PolicyDocument.parse({ version: POLICY_FILE_VERSION, user: state.user, conversation: state.conversation, enforcedRoots: state.enforcedRoots ?? [] });
  store.write(JSON.parse(JSON.stringify(doc)) as Record<string, unknown>);
}
