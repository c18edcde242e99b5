/**
 * The double's authorizer: everything is allowed to its one user until a test denies a verb on a resource
 * (optionally in one namespace), as a Role without that rule would. A denied request is answered 403 Forbidden in
 * RBAC's words (status.ts); a SelfSubjectAccessReview about it answers allowed: false.
 */
export interface AccessAttributes {
  verb: string;
  group: string;
  /** The plural (`jobs`), without the subresource. */
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface DenyRule {
  /** `create`, `get`, `list`, `watch`, `delete`, `patch`, `update`, `deletecollection`; all when absent. */
  verb?: string;
  /** `jobs`, `pods/log`; every resource when absent. */
  resource?: string;
  group?: string;
  namespace?: string;
}

export class Authorizer {
  private readonly denied: DenyRule[] = [];

  constructor(readonly user: string) {}

  /** Refuses what the rule names until the returned function is called. */
  deny(rule: DenyRule): () => void {
    this.denied.push(rule);
    return () => {
      const index = this.denied.indexOf(rule);
      if (index >= 0) this.denied.splice(index, 1);
    };
  }

  allowed(attributes: AccessAttributes): boolean {
    const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
    return !this.denied.some(
      (rule) =>
        (rule.verb === undefined || rule.verb === attributes.verb || rule.verb === '*') &&
        (rule.resource === undefined || rule.resource === resource) &&
        (rule.group === undefined || rule.group === attributes.group) &&
        (rule.namespace === undefined || rule.namespace === attributes.namespace),
    );
  }

  /** A SelfSubjectAccessReview's status, as the RBAC authorizer words it. */
  review(attributes: AccessAttributes): { allowed: boolean; denied?: boolean; reason?: string } {
    if (this.allowed(attributes))
      return {
        allowed: true,
        reason: `RBAC: allowed by RoleBinding "hangar/${attributes.namespace ?? ''}" of Role "hangar" to User "${this.user}"`,
      };
    return { allowed: false };
  }
}
