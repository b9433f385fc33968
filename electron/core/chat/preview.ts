/**
 * The short preview on a tool-call card: written by Warden from the tool identity and the
 * validated arguments, never from text the model or the server wrote about the call.
 */
import { makeHiddenVisible } from '../../../shared/display';

const MAX_FIELDS = 3;
const MAX_VALUE = 60;

/** `notes_add on Warden demo (Default): text "buy milk"`. */
export function previewLine(identity: { toolName: string; serverLabel: string; accountLabel: string }, args: Readonly<Record<string, unknown>> | null): string {
  const head = `${makeHiddenVisible(identity.toolName)} on ${makeHiddenVisible(identity.serverLabel)} (${makeHiddenVisible(identity.accountLabel)})`;
  if (!args) return head;
  const keys = Object.keys(args).sort();
  if (keys.length === 0) return `${head}, no arguments`;
  const parts = keys.slice(0, MAX_FIELDS).map((k) => {
    let v: string;
    try {
      v = JSON.stringify(args[k]) ?? String(args[k]);
    } catch {
      v = '…';
    }
    v = makeHiddenVisible(v).replace(/[\r\n]+/g, ' ');
    return `${makeHiddenVisible(k)} ${v.length > MAX_VALUE ? `${v.slice(0, MAX_VALUE)}…` : v}`;
  });
  const more = keys.length > MAX_FIELDS ? ` and ${keys.length - MAX_FIELDS} more` : '';
  return `${head}: ${parts.join(', ')}${more}`;
}
