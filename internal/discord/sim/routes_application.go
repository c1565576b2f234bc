package sim

import (
	"crypto/sha256"
	"encoding/hex"
)

// getApplication is GET /applications/@me and GET /oauth2/applications/@me:
// the bot's own application (its id is the bot user's), owned by a
// developer account rather than a team.
func getApplication(s *Server, rq *request) (any, *apiError) {
	key := sha256.Sum256([]byte("herald-sim/" + s.st.botID))
	scopes := []any{"bot", "applications.commands"}
	return map[string]any{
		"id": s.st.botID, "name": s.opts.BotName, "icon": nil, "description": "", "type": nil,
		"bot": s.st.renderUser(s.st.botID), "bot_public": true, "bot_require_code_grant": false,
		"verify_key": hex.EncodeToString(key[:]), "flags": 0, "flags_new": "0",
		"redirect_uris": []any{}, "interactions_endpoint_url": nil, "role_connections_verification_url": nil,
		"owner":                   s.st.renderUser(s.st.ownerID),
		"approximate_guild_count": len(s.st.guilds), "approximate_user_install_count": 0,
		"approximate_user_authorization_count": 0, "explicit_content_filter": 0, "team": nil,
		"install_params":         map[string]any{"scopes": scopes, "permissions": "0"},
		"eligible_oauth2_scopes": scopes,
	}, nil
}
