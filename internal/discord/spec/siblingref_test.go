package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// member is a guild member as Discord sends it. In the spec its user is
// {"$ref": UserResponse, "description": ...}: a $ref with a sibling.
const member = `{"avatar":null,"banner":null,"communication_disabled_until":null,"flags":0,` +
	`"joined_at":"2026-11-29T22:00:00.000000+00:00","nick":"alice","pending":false,"premium_since":null,` +
	`"roles":["1300000000000000001"],"user":` + botUser + `,"mute":false,"deaf":false}`

func TestRefWithSiblings(t *testing.T) {
	t.Parallel()
	v := testValidator(t)
	const memberPath = "/api/v10/guilds/1000000000000000001/members/1700000000000000001"
	unknownInUser := strings.Replace(member, `"bot":true`, `"bot":true,"shoe_size":44`, 1)
	tests := []struct {
		name, method, path, body, wantErr string
	}{
		{name: "member fetched", method: "GET", path: memberPath, body: member},
		{name: "members listed", method: "GET", path: "/api/v10/guilds/1000000000000000001/members",
			body: "[" + member + "," + member + "]"},
		{name: "member modified", method: "PATCH", path: memberPath, body: member},

		{name: "member's user with an unknown field", method: "GET", path: memberPath, body: unknownInUser,
			wantErr: "'shoe_size' at '$.body.user.shoe_size' is not declared"},
		{name: "listed member's user with an unknown field", method: "GET", path: "/api/v10/guilds/1000000000000000001/members",
			body: "[" + member + "," + unknownInUser + "]", wantErr: "'shoe_size' at '$.body[1].user.shoe_size' is not declared"},
		{name: "member's user with a wrong type", method: "GET", path: memberPath,
			body: strings.Replace(member, `"username":"herald"`, `"username":7`, 1), wantErr: "username"},
		{name: "member's user missing its id", method: "GET", path: memberPath,
			body: strings.Replace(member, `"id":"1700000000000000001",`, "", 1), wantErr: "'id'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRequest(tc.method, tc.path, "", "")
			err := v.ValidateResponse(r, nil, 200, bucket("4"), []byte(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}

// siblingSpec has both kinds of $ref with siblings: an annotation (like all
// of Discord's) and an assertion, which must still apply.
const siblingSpec = `{
  "openapi": "3.1.0",
  "info": {"title": "siblings", "version": "1"},
  "servers": [{"url": "https://discord.com/api/v10"}],
  "paths": {
    "/things": {
      "get": {
        "responses": {
          "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {
              "type": "object",
              "properties": {
                "described": {"$ref": "#/components/schemas/Thing", "description": "a thing"},
                "constrained": {"$ref": "#/components/schemas/Thing", "maxProperties": 1}
              }
            }}}
          }
        }
      }
    }
  },
  "components": {"schemas": {"Thing": {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}}
  }}}
}`

func TestRefWithSiblingsAssertions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "siblings.json")
	if err := os.WriteFile(path, []byte(siblingSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, body, wantErr string }{
		{name: "declared fields", body: `{"described":{"a":"x","b":"y"},"constrained":{"b":"y"}}`},
		{name: "unknown field below an annotated ref", body: `{"described":{"a":"x","c":"z"}}`,
			wantErr: "'c' at '$.body.described.c' is not declared"},
		{name: "unknown field below a constrained ref", body: `{"constrained":{"c":"z"}}`,
			wantErr: "'c' at '$.body.constrained.c' is not declared"},
		{name: "sibling assertion broken", body: `{"constrained":{"a":"x","b":"y"}}`, wantErr: "maxProperties"},
		{name: "referenced schema broken", body: `{"constrained":{"a":7}}`, wantErr: "string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRequest("GET", "/api/v10/things", "", "")
			err := v.ValidateResponse(r, nil, 200, bucket("4"), []byte(tc.body))
			checkErr(t, err, tc.wantErr)
		})
	}
}
