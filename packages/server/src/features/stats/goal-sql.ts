import { pathPatternRegex } from '@partner/shared-schemas';

/** A goal as the statistics match it (features/goals/). */
export interface GoalDefinition {
  id: string;
  name: string;
  eventName: string | null;
  pathPattern: string | null;
}

/** The condition an event meets when it converts `goal`; its value goes into `params` as `name`. */
export function goalCondition(goal: GoalDefinition, name: string, params: Record<string, unknown>): string {
  if (goal.eventName !== null) {
    params[name] = goal.eventName;
    return `event_name = {${name}:String}`;
  }
  params[name] = pathPatternRegex(goal.pathPattern ?? '');
  return `(event_name = 'PageView' AND match(path, {${name}:String}))`;
}
