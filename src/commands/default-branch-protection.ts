import type { Db } from '../database/database.js';
import { PROTECTED_ACCESS, protectedBranches } from '../domain/protected-branches.js';
import type { RepositoryWrite } from '../domain/repository/decider.js';
import { isProtected } from '../domain/repository/push-access.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { protectedRefsOf } from '../projections/repository/queries.js';
import type { DeferredSpecs } from './kernel/context.js';
import { nextId } from './kernel/handler.js';
import { spec } from './kernel/run.js';

/**
 * GitLab 12's Projects::ProtectDefaultBranchService, which Git::BranchPushService runs when a
 * push creates the project's default branch (`branch_create_hooks` → `after_create_default_branch`):
 * unless `default_branch_protection` (application settings) is 0 or a rule already matches the
 * branch, it is protected — pushes by developers and up (1) or maintainers and up (2), merges
 * by maintainers and up — created by the project's creator without an authorization check.
 *
 * Here it is part of the write that creates the default branch (a push, a commit, a branch
 * created through the API: src/commands/repository.ts, `runRefs`), in its transaction: a
 * deferred spec after the ref writes, so there is no moment when the new default branch is
 * open to developers (GitLab's sidekiq job leaves one), and a refused write protects nothing.
 */
export function defaultBranchProtection(projectId: number, written: () => RepositoryWrite | undefined): DeferredSpecs {
  return {
    deferred: async (trx: Db) => {
      const command = written();
      if (!command) return [];
      const created = (command.type === 'UpdateRefs' ? command.commands : [command]).flatMap((one) => (one.type === 'CreateBranch' ? [one.branch] : []));
      if (created.length === 0) return [];
      // The projects projection has made the first branch the default one by now (inline).
      const project = await trx.selectFrom('projects').select('default_branch').where('id', '=', projectId).executeTakeFirst();
      const branch = project?.default_branch;
      if (!branch || !created.includes(branch)) return [];
      const level = (await currentSettings(trx)).default_branch_protection;
      if (level !== 1 && level !== 2) return [];
      if (isProtected(await protectedRefsOf(trx, projectId), branch)) return [];
      const push = level === 1 ? PROTECTED_ACCESS.DEVELOPER : PROTECTED_ACCESS.MAINTAINER;
      // In the transaction: on PGlite (one connection) a statement outside it would wait for it.
      const id = await nextId(trx, protectedBranches.idSequence!);
      return [
        spec(protectedBranches, id, {
          type: 'ProtectBranch',
          projectId,
          name: branch,
          access: { merge: { level: PROTECTED_ACCESS.MAINTAINER, allowed: [] }, push: { level: push, allowed: [] }, unprotect: { level: undefined, allowed: [] } },
          codeOwnerApprovalRequired: false,
          facts: { memberUserIds: [], sharedGroupIds: [] },
        }, { newStream: true }),
      ];
    },
  };
}
