import { Hono, type Context } from 'hono';
import { newEpicIssueId, placementAtStart } from '../../../commands/epic-issues.js';
import { openIssueCommand } from '../../../commands/issues.js';
import { newId, run, spec } from '../../../commands/kernel/run.js';
import { issues } from '../../../domain/issues/aggregate.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, optional, rawParams, required, t, type Shape } from '../../kernel/params.js';
import { checkUnmodifiedSince } from '../../kernel/request.js';
import { userProject } from '../../kernel/scope.js';
import { commitWithIssueLabels, epicAsked, ISSUE_PARAMS, ISSUE_RULES, issueFields, issueParams, type IssueParams } from './fields.js';
import { issueOf, presentIssue, presentIssueById } from './find.js';

/**
 * GitLab 12.10's API::Issues: create, show, update and delete one issue (lib/api/issues.rb
 * with Issues::CreateService / UpdateService and IssuableBaseService#filter_params). See
 * docs/issues.md.
 */

/** API::Issues' update `at_least_one_of` (Helpers::IssuesHelpers.update_params_at_least_one_of). */
const UPDATE_AT_LEAST_ONE_OF = ['assignee_id', 'assignee_ids', 'confidential', 'created_at', 'description', 'discussion_locked', 'due_date', 'labels', 'add_labels', 'remove_labels', 'milestone_id', 'state_event', 'title'];

/** EE's adds weight, epic_id and epic_iid; CE has none of them, so `epic_id` alone is 400 there. */
const updateAtLeastOneOf = (c: Context<AppEnv>) => (licensed(appContext(c).config.plan, 'ee') ? [...UPDATE_AT_LEAST_ONE_OF, 'weight', 'epic_id', 'epic_iid'] : UPDATE_AT_LEAST_ONE_OF);

const createHead = {
  title: required(t.string()),
  created_at: optional(t.datetime()),
  merge_request_to_resolve_discussions_of: optional(t.integer()),
  discussion_to_resolve: optional(t.string()),
  iid: optional(t.integer()),
} satisfies Shape;

const updateHead = {
  title: optional(t.string()),
  updated_at: optional(t.datetime()),
  state_event: optional(t.values(['reopen', 'close'])),
  add_labels: optional(t.array(t.string())),
  remove_labels: optional(t.array(t.string())),
} satisfies Shape;

/** `requires :issue_iid, type: Integer`. */
const ON_ISSUE = { pathIds: ['issue_iid'] } as const;

export const issueCrudRoutes = new Hono<AppEnv>()
  .post('/projects/:id/issues', documented({ summary: 'Create a new project issue', params: { ...createHead, ...ISSUE_PARAMS }, responses: { 201: 'Issue', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    const parsed = p.parse({ ...createHead, ...issueParams(c) }, ISSUE_RULES) as IssueParams & { title: string; created_at?: Date | undefined; iid?: number | undefined };
    p.done();
    const project = await userProject(c, w.auth, 'create_issue');
    const { fields } = await issueFields(c, project, parsed);
    // `params.delete(:created_at) unless current_user.can?(:set_issue_created_at, user_project)`, and the same of `iid`.
    const createdAt = project.can('set_issue_created_at') ? parsed.created_at?.toISOString() : undefined;
    const iid = project.can('set_issue_iid') ? parsed.iid : undefined;
    const epic = await epicAsked(c, project, parsed);
    const id = await newId(w, issues);
    const epicLink = epic ? { epic, newLinkId: await newEpicIssueId(w) } : undefined;
    const labels = project.can('admin_issue') ? parsed.labels : undefined;
    await commitWithIssueLabels(w, project, { labels }, [], (labelIds) =>
      spec(
        issues,
        id,
        openIssueCommand({ projectId: project.row.id, authorId: w.auth.user.id, title: parsed.title, fields: { ...fields, ...(labelIds !== undefined ? { labelIds } : {}) }, createdAt, iid, epic: epicLink }),
        { newStream: true },
      ),
    );
    return c.json(await presentIssueById(c, project, id), 201);
  })

  .get('/projects/:id/issues/:issue_iid', documented({ summary: 'Get a single project issue', ...ON_ISSUE, auth: 'optional', responses: { 200: 'Issue', 404: 'Error' } }), async (c) => {
    // `authenticate_non_get!`: a public project's issues are anyone's to read.
    const auth = await authenticate(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'issue_iid'));
    p.done();
    const project = await userProject(c, auth);
    return c.json(await presentIssue(c, project, await issueOf(c, project)));
  })

  .put('/projects/:id/issues/:issue_iid', documented({ summary: 'Update an existing issue', params: { ...updateHead, ...ISSUE_PARAMS }, ...ON_ISSUE, responses: { 200: 'Issue', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    p.check(integerCheck(c, 'issue_iid'));
    const parsed = p.parse({ ...updateHead, ...issueParams(c) }, { atLeastOneOf: [updateAtLeastOneOf(c)], ...ISSUE_RULES }) as IssueParams & { title?: string; updated_at?: Date; state_event?: 'reopen' | 'close'; add_labels?: string[]; remove_labels?: string[] };
    p.done();
    const project = await userProject(c, w.auth);
    const row = await issueOf(c, project, 'update_issue');
    const { fields, admin } = await issueFields(c, project, parsed, row);
    const epic = await epicAsked(c, project, parsed);
    const newLinkId = epic ? await newEpicIssueId(w) : 0;
    // Only administrators and the project's (or its group's) owners set updated_at.
    const updatedAt = project.can('set_issue_updated_at') ? parsed.updated_at?.toISOString() : undefined;
    const labels = admin ? { labels: parsed.labels, add: parsed.add_labels, remove: parsed.remove_labels } : {};
    await commitWithIssueLabels(w, project, labels, row.label_ids, (labelIds) =>
      spec(issues, row.id, async (trx) => ({
        type: 'UpdateIssue',
        fields: { ...fields, ...(parsed.title !== undefined ? { title: parsed.title } : {}), ...(labelIds !== undefined ? { labelIds } : {}) },
        stateEvent: parsed.state_event,
        byId: w.auth.user.id,
        updatedAt,
        epic: epic ? await placementAtStart(epic, newLinkId)(trx) : epic,
      })),
    );
    return c.json(await presentIssueById(c, project, row.id));
  })

  .delete('/projects/:id/issues/:issue_iid', documented({ summary: 'Delete a project issue', ...ON_ISSUE, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'issue_iid'));
    p.done();
    const project = await userProject(c, w.auth);
    // `not_found!('Issue') unless issue`, then `authorize!(:destroy_issue, issue)`.
    const row = await issueOf(c, project, 'destroy_issue', 'Issue');
    checkUnmodifiedSince(c, row.updated_at);
    await run(w, issues, row.id, { type: 'DeleteIssue' });
    return c.body(null, 204);
  });
