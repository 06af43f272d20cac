/* IMPORTANT
 * This snapshot file is auto-generated, but designed for humans.
 * It should be checked into source control and tracked carefully.
 * Re-generate by setting TAP_SNAPSHOT=1 and running tests.
 * Make sure to inspect the output below.  Do not ignore changes!
 */
'use strict'
exports[`test/declared-verbs.test.ts > TAP > and with a router that ignores case and trailing slashes > documented paths and their verbs 1`] = `
Object {
  "/functions/bareGet": Array [
    "get",
  ],
  "/verbs/getHead": Array [
    "get",
  ],
  "/verbs/limited": Array [
    "post",
  ],
  "/verbs/onlyGet": Array [
    "get",
  ],
  "/verbs/onlyPost": Array [
    "post",
  ],
  "/verbs/patchDelete": Array [
    "delete",
    "patch",
  ],
  "/verbs/postPut": Array [
    "post",
    "put",
  ],
  "/verbs/signedIn": Array [
    "get",
  ],
}
`

exports[`test/declared-verbs.test.ts > TAP > every verb on every declared path answers as pinned > documented paths and their verbs 1`] = `
Object {
  "/functions/bareGet": Array [
    "get",
  ],
  "/verbs/getHead": Array [
    "get",
  ],
  "/verbs/limited": Array [
    "post",
  ],
  "/verbs/onlyGet": Array [
    "get",
  ],
  "/verbs/onlyPost": Array [
    "post",
  ],
  "/verbs/patchDelete": Array [
    "delete",
    "patch",
  ],
  "/verbs/postPut": Array [
    "post",
    "put",
  ],
  "/verbs/signedIn": Array [
    "get",
  ],
}
`
