import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('user');

const SCRIPT = String.raw`
import json, os, sys, warnings
import gitlab

url, token, tag = os.environ["FORGELOG_URL"], os.environ["FORGELOG_TOKEN"], os.environ["TAG"]
out = {}
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    g = gitlab.Gitlab(url, private_token=token)
    g.auth()
    out["me"] = g.user.username
    out["me_is_admin"] = g.user.is_admin

    created = g.users.create({
        "email": tag + "@example.com", "username": tag, "name": "Python User",
        "password": "password123", "skip_confirmation": True,
    })
    out["created"] = created.attributes
    for n in range(3):
        g.users.create({"email": "%s.%d@example.com" % (tag, n), "username": "%s_%d" % (tag, n), "name": "P%d" % n, "reset_password": True})

    everyone = g.users.list(get_all=True)
    paged = g.users.list(get_all=True, per_page=2)
    out["all_ids"] = [u.id for u in everyone]
    out["paged_ids"] = [u.id for u in paged]
    out["found"] = sorted(u.username for u in g.users.list(search=tag + "_", get_all=True))
    out["by_username"] = [u.id for u in g.users.list(username=tag.upper(), get_all=True)]

    user = g.users.get(created.id)
    user.bio = "from python"
    user.location = "Lisbon"
    user.save()
    out["saved"] = g.users.get(created.id).attributes

    status = g.user.status.get()
    out["empty_status"] = status.attributes
    status.emoji = "coffee"
    status.message = "python status"
    status.save()
    out["status"] = g.user.status.get().attributes
    out["status_of_root"] = g.users.get(1).status.get().attributes

    user.customattributes.set("team", "py")
    out["custom_attributes"] = [a.attributes for a in user.customattributes.list()]
    out["filtered"] = [u.username for u in g.users.list(custom_attributes={"team": "py"}, get_all=True)]

    imp = user.impersonationtokens.create({"name": "py", "scopes": ["api"]})
    out["impersonation"] = imp.attributes
    as_user = gitlab.Gitlab(url, private_token=imp.token)
    as_user.auth()
    out["impersonated"] = as_user.user.username
    out["active_tokens"] = [t.id for t in user.impersonationtokens.list(state="active")]

    out["block"] = user.block()
    out["state_after_block"] = g.users.get(created.id).state
    out["unblock"] = user.unblock()

    try:
        g.users.create({"email": tag.upper() + "@EXAMPLE.com", "username": tag + "x", "name": "Dup", "password": "password123"})
    except gitlab.exceptions.GitlabCreateError as e:
        out["conflict"] = [e.response_code, e.error_message]
    try:
        g.users.get(999999)
    except gitlab.exceptions.GitlabGetError as e:
        out["missing"] = [e.response_code, e.error_message]
    try:
        gitlab.Gitlab(url, private_token="wrong").auth()
    except gitlab.exceptions.GitlabAuthenticationError as e:
        out["bad_token"] = [e.response_code, e.error_message]

    user.delete()
    try:
        g.users.get(created.id)
    except gitlab.exceptions.GitlabGetError as e:
        out["deleted"] = e.response_code
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out, default=str))
`;


describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}`, () => {
  let api: TestServer;
  let out: any;
  const tag = `py${process.pid}`;
  beforeAll(async () => {
    api = await startTestServer();
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, TAG: tag });
  });
  afterAll(() => api?.close());

  it('authenticates: g.auth(); g.user.username is root', () => {
    expect(out.me).toBe('root');
    expect(out.me_is_admin).toBe(true);
  });

  it('creates a user with g.users.create', () => {
    expect(out.created).toMatchObject({ username: tag, name: 'Python User', email: `${tag}@example.com`, state: 'active', is_admin: false });
  });

  it('lists every user with get_all=True, following Link rel="next" without URL warnings', () => {
    expect(out.all_ids.length).toBeGreaterThanOrEqual(5);
    expect(out.paged_ids).toEqual(out.all_ids);
    expect(out.found).toEqual([`${tag}_0`, `${tag}_1`, `${tag}_2`]);
    expect(out.by_username).toEqual([out.created.id]);
    expect(out.warnings).toEqual([]);
  });

  it('saves an edited user (u.save() sends email, username and name too)', async () => {
    expect(out.saved).toMatchObject({ bio: 'from python', location: 'Lisbon', email: `${tag}@example.com`, username: tag });
    const updates = (await api.events(`user-${out.created.id}`)).filter((e) => e.type === 'UserProfileUpdated');
    expect(updates[0]!.data.changes).toEqual({ bio: 'from python', location: 'Lisbon' });
  });

  it('reads and saves the current user status', () => {
    expect(out.empty_status).toEqual({ emoji: null, message: null, message_html: '' });
    // python-gitlab adds the parent id (user_id) to a child object's attributes.
    expect(out.status).toMatchObject({ emoji: 'coffee', message: 'python status', message_html: 'python status' });
    expect(out.status_of_root).toMatchObject({ emoji: 'coffee', message: 'python status', message_html: 'python status' });
  });

  it('sets custom attributes and filters by them', () => {
    expect(out.custom_attributes).toEqual([{ user_id: String(out.created.id), key: 'team', value: 'py' }]);
    expect(out.filtered).toEqual([tag]);
  });

  it('creates an impersonation token that authenticates as the user', () => {
    expect(out.impersonation).toMatchObject({ name: 'py', scopes: ['api'], impersonation: true, active: true, revoked: false });
    expect(out.impersonated).toBe(tag);
    expect(out.active_tokens).toEqual([out.impersonation.id]);
  });

  it('blocks and unblocks', () => {
    expect(out.block).toBe(true);
    expect(out.state_after_block).toBe('blocked');
    expect(out.unblock).toBe(true);
  });

  it('raises GitLab’s errors', () => {
    expect(out.conflict).toEqual([409, 'Email has already been taken']);
    expect(out.missing).toEqual([404, '404 User Not Found']);
    expect(out.bad_token).toEqual([401, '401 Unauthorized']);
    expect(out.deleted).toBe(404);
  });
});
