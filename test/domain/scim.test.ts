import { describe, expect, it } from 'vitest';
import { type ScimEvent, cleanPath, parseFilter, scimClaims, scimDecider, updateAttributes } from '../../src/domain/scim.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(scimDecider);

const G = 7;
const URL_ = 'https://idp.example.com/sso';
const FP = 'aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd';
const configured = (enabled = true, sso_url = URL_, certificate_fingerprint = FP): ScimEvent => ({ type: 'SamlProviderConfigured', data: { group_id: G, enabled, sso_url, certificate_fingerprint } });
const linked = (identity_id: number, user_id: number, extern_uid: string): ScimEvent => ({ type: 'GroupSamlIdentityLinked', data: { group_id: G, identity_id, user_id, extern_uid } });

describe('ConfigureSamlProvider', () => {
  it('creates an enabled provider, validated as SamlProvider; changes what is given; nothing for no change', () => {
    on(G).given().when({ type: 'ConfigureSamlProvider', ssoUrl: URL_, certificateFingerprint: FP }).then([configured()]);
    on(G).given().when({ type: 'ConfigureSamlProvider', enabled: false }).then(rejected('invalid', { fields: { sso_url: ["can't be blank"], certificate_fingerprint: ["can't be blank", 'must be a hash containing only letters, numbers, spaces, : and -'] } }));
    on(G).given(configured()).when({ type: 'ConfigureSamlProvider', enabled: false }).then([configured(false)]);
    on(G).given(configured()).when({ type: 'ConfigureSamlProvider', ssoUrl: URL_ }).then([]);
    on(G).given(configured()).when({ type: 'ConfigureSamlProvider', ssoUrl: 'ftp://x.example.com' }).then(rejected('invalid', { fields: { sso_url: ['is blocked: Only allowed schemes are https'] } }));
    on(G).given(configured()).when({ type: 'ConfigureSamlProvider', ssoUrl: 'https://ïdp.example.com' }).then(rejected('invalid', { fields: { sso_url: ['is blocked: URI must be ascii only'] } }));
    // The setter strips left-to-right marks pasted with a fingerprint.
    on(G).given(configured()).when({ type: 'ConfigureSamlProvider', certificateFingerprint: `\u200E${FP.toUpperCase()}` }).then([configured(true, URL_, FP.toUpperCase())]);
  });
});

describe('identities', () => {
  it('links an extern_uid once per group and a user once; changes and unlinks it case-insensitively', () => {
    on(G).given().when({ type: 'LinkGroupSamlIdentity', identityId: 1, userId: 5, externUid: 'Abc' }).then([linked(1, 5, 'Abc')]);
    on(G).given(linked(1, 5, 'Abc')).when({ type: 'LinkGroupSamlIdentity', identityId: 2, userId: 6, externUid: 'aBC' }).then(rejected('conflict', { text: 'Extern uid has already been taken' }));
    on(G).given(linked(1, 5, 'Abc')).when({ type: 'LinkGroupSamlIdentity', identityId: 2, userId: 5, externUid: 'other' }).then(rejected('conflict', { text: 'User has already been taken' }));
    on(G)
      .given(linked(1, 5, 'Abc'))
      .when({ type: 'ChangeGroupSamlIdentityUid', externUid: 'abc', newExternUid: 'new' })
      .then([{ type: 'GroupSamlIdentityUidChanged', data: { group_id: G, identity_id: 1, user_id: 5, extern_uid: 'new', previous_extern_uid: 'Abc' } }]);
    on(G).given(linked(1, 5, 'Abc')).when({ type: 'ChangeGroupSamlIdentityUid', externUid: 'abc', newExternUid: 'Abc' }).then([]);
    on(G).given(linked(1, 5, 'Abc'), linked(2, 6, 'x')).when({ type: 'ChangeGroupSamlIdentityUid', externUid: 'abc', newExternUid: 'X' }).then(rejected('conflict', { text: 'Extern uid has already been taken' }));
    on(G).given(linked(1, 5, 'Abc')).when({ type: 'UnlinkGroupSamlIdentity', externUid: 'ABC' }).then([{ type: 'GroupSamlIdentityUnlinked', data: { group_id: G, identity_id: 1, user_id: 5, extern_uid: 'Abc' } }]);
    on(G).given().when({ type: 'UnlinkGroupSamlIdentity', externUid: 'nobody' }).then(rejected('not_found'));
  });

  it('claims the lower-cased extern_uid within the group', () => {
    expect(scimClaims(linked(1, 5, 'Abc'))).toEqual({ acquire: [{ kind: 'group_saml_extern_uid', key: `${G}/abc`, conflictMessage: 'Extern uid has already been taken' }], release: [] });
    expect(scimClaims({ type: 'GroupSamlIdentityUidChanged', data: { group_id: G, identity_id: 1, user_id: 5, extern_uid: 'ABC', previous_extern_uid: 'abc' } })).toEqual({ acquire: [], release: [] });
    expect(scimClaims(configured())).toEqual({ acquire: [], release: [] });
  });
});

describe('SCIM parameters', () => {
  it('cleans a userName as Namespace.clean_path', () => {
    expect(cleanPath('jane.doe@example.com')).toBe('jane.doe');
    expect(cleanPath('--Ann Lee!')).toBe('AnnLee');
    expect(cleanPath('repo.git.atom.')).toBe('repo');
    expect(cleanPath('...')).toBe('blank');
  });

  it('reads Replace and Add operations, by path or by a value object', () => {
    expect(
      updateAttributes([
        { op: 'Replace', path: 'name.formatted', value: 'N' },
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'e@x.org' },
        { op: 'Remove', path: 'userName', value: 'ignored' },
        { op: 'replace', value: { active: 'False', externalId: 'u2' } },
        { op: 'Replace', path: 'unknown', value: 'x' },
        'garbage',
      ]),
    ).toEqual({ name: 'N', email: 'e@x.org', active: false, extern_uid: 'u2' });
    expect(updateAttributes([{ op: 'Replace', path: 'active', value: 'maybe' }])).toEqual({});
  });

  it('parses the eq filters GitLab 12 answers, and no others', () => {
    expect(parseFilter('id eq "a b"')).toEqual({ attribute: 'extern_uid', value: 'a b' });
    expect(parseFilter('externalId EQ x')).toEqual({ attribute: 'extern_uid', value: 'x' });
    expect(parseFilter('userName eq "jane@example.com"')).toEqual({ attribute: 'username', value: 'jane@example.com' });
    for (const filter of ['id ne "a"', 'emails eq "a"', 'id eq ""', 'id', 'active eq true']) expect(parseFilter(filter)).toBeNull();
  });
});
