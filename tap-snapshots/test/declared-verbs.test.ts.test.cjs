/* IMPORTANT
 * This snapshot file is auto-generated, but designed for humans.
 * It should be checked into source control and tracked carefully.
 * Re-generate by setting TAP_SNAPSHOT=1 and running tests.
 * Make sure to inspect the output below.  Do not ignore changes!
 */
'use strict'
exports[`test/declared-verbs.test.ts > TAP > and with a router that ignores case and trailing slashes > documented paths 1`] = `
Object {
  "/functions/bareGet": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "functions",
      ],
      "x-parse-function": "bareGet",
    },
  },
  "/verbs/getHead": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "getHead",
    },
  },
  "/verbs/limited": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "limited",
    },
  },
  "/verbs/onlyGet": Object {
    "get": Object {
      "parameters": Array [
        Object {
          "in": "query",
          "name": "limit",
          "required": false,
          "schema": Object {
            "type": "number",
          },
        },
      ],
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "onlyGet",
    },
  },
  "/verbs/onlyPost": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "properties": Object {
                "title": Object {
                  "type": "string",
                },
              },
              "required": Array [
                "title",
              ],
              "type": "object",
            },
          },
        },
        "required": true,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "onlyPost",
    },
  },
  "/verbs/patchDelete": Object {
    "delete": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "content": Object {
            "application/json": Object {
              "schema": Object {
                "description": "What patchDelete answers",
                "properties": Object {
                  "ok": Object {
                    "type": "boolean",
                  },
                },
                "type": "object",
              },
            },
          },
          "description": "What patchDelete answers",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "patchDelete",
    },
    "patch": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "content": Object {
            "application/json": Object {
              "schema": Object {
                "description": "What patchDelete answers",
                "properties": Object {
                  "ok": Object {
                    "type": "boolean",
                  },
                },
                "type": "object",
              },
            },
          },
          "description": "What patchDelete answers",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "patchDelete",
    },
  },
  "/verbs/postPut": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "postPut",
    },
    "put": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "postPut",
    },
  },
  "/verbs/signedIn": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
          "sessionToken": Array [],
        },
        Object {
          "appId": Array [],
          "masterKey": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "signedIn",
    },
  },
}
`

exports[`test/declared-verbs.test.ts > TAP > every verb on every declared path answers as pinned > documented paths 1`] = `
Object {
  "/functions/bareGet": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "functions",
      ],
      "x-parse-function": "bareGet",
    },
  },
  "/verbs/getHead": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "getHead",
    },
  },
  "/verbs/limited": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "limited",
    },
  },
  "/verbs/onlyGet": Object {
    "get": Object {
      "parameters": Array [
        Object {
          "in": "query",
          "name": "limit",
          "required": false,
          "schema": Object {
            "type": "number",
          },
        },
      ],
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "onlyGet",
    },
  },
  "/verbs/onlyPost": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "properties": Object {
                "title": Object {
                  "type": "string",
                },
              },
              "required": Array [
                "title",
              ],
              "type": "object",
            },
          },
        },
        "required": true,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "onlyPost",
    },
  },
  "/verbs/patchDelete": Object {
    "delete": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "content": Object {
            "application/json": Object {
              "schema": Object {
                "description": "What patchDelete answers",
                "properties": Object {
                  "ok": Object {
                    "type": "boolean",
                  },
                },
                "type": "object",
              },
            },
          },
          "description": "What patchDelete answers",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "patchDelete",
    },
    "patch": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "content": Object {
            "application/json": Object {
              "schema": Object {
                "description": "What patchDelete answers",
                "properties": Object {
                  "ok": Object {
                    "type": "boolean",
                  },
                },
                "type": "object",
              },
            },
          },
          "description": "What patchDelete answers",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "patchDelete",
    },
  },
  "/verbs/postPut": Object {
    "post": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "postPut",
    },
    "put": Object {
      "requestBody": Object {
        "content": Object {
          "application/json": Object {
            "schema": Object {
              "additionalProperties": true,
              "type": "object",
            },
          },
        },
        "required": false,
      },
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "postPut",
    },
  },
  "/verbs/signedIn": Object {
    "get": Object {
      "responses": Object {
        "200": Object {
          "description": "Default Response",
        },
      },
      "security": Array [
        Object {
          "appId": Array [],
          "sessionToken": Array [],
        },
        Object {
          "appId": Array [],
          "masterKey": Array [],
        },
      ],
      "tags": Array [
        "verbs",
      ],
      "x-parse-function": "signedIn",
    },
  },
}
`
