/**
 * Text that a person must read exactly (approval and confirmation dialogs): characters that
 * display as nothing or reorder what follows (control characters, bidi overrides, zero-width and
 * invisible marks) are shown as `\uXXXX` escapes instead, so `report\u202Egpj.sh` cannot pass for
 * `reporths.jpg`.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** Replaces hidden and direction-changing characters with visible `\uXXXX` escapes. */
export function makeHiddenVisible(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
