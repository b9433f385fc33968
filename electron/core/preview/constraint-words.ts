/**
 * An argument constraint in words, the way the policy engine explains it ("path is under
 * /project/docs"): for the matrix, the rule editor and the confirmations.
 */
import type { ArgumentConstraint } from '../../../shared/domain/policy';

/** The words of one argument constraint ("path is under /project/docs"). */
export function constraintWordsOf(c: ArgumentConstraint): string {
  const v = JSON.stringify(c.value);
  switch (c.op) {
    case 'pathUnder':
      return `${c.field} is under ${c.value}`;
    case 'equals':
      return `${c.field} is ${v}`;
    case 'oneOf':
      return `${c.field} is one of ${c.value.map((x) => JSON.stringify(x)).join(', ')}`;
    case 'matches':
      return `${c.field} matches ${c.value}`;
    case 'min':
      return `${c.field} is at least ${c.value}`;
    case 'max':
      return `${c.field} is at most ${c.value}`;
    case 'maxLength':
      return `${c.field} is at most ${c.value} long`;
  }
}

