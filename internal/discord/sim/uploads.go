package sim

import "net/http"

// Discord's limits on uploaded files. The upload limit applies to each
// file of a request: 10 MiB by default, for bots, webhooks and interaction
// responses alike (reference, "Uploading Files"; change log, "Default File
// Upload Limit Change" and "Per-Attachment File Upload Behavior for
// Apps"), raised by the guild's Server Boost level: 50 MiB at level 2,
// 100 MiB at level 3 (Discord's Server Boosting FAQ, which that page links
// to). A message request is at most 25 MiB (Create Message, Limitations);
// a boosted guild's larger files raise that to their own limit, or they
// could never be sent.
const (
	mib              = 1 << 20
	maxBody          = 25 * mib
	defaultUpload    = 10 * mib
	maxPremiumTier   = 3
	maxUploadRequest = 100*mib + mib // the largest request any guild allows, with room for the form
)

// A message holds at most 10 attachments (Create Message: "up to 10
// files"; JSON error code 30015).
const maxFiles = 10

var (
	errTooLarge = &apiError{status: http.StatusRequestEntityTooLarge, code: 40005, message: "Request entity too large"}
	errMaxFiles = &apiError{status: http.StatusBadRequest, code: codeMaxAttachments, message: "Maximum number of attachments in a message reached (10)"}
)

// uploadLimit is the per-file limit in the guild of id ("" for a DM).
func (s *state) uploadLimit(guildID string) int {
	g, ok := s.guilds[guildID]
	if !ok {
		return defaultUpload
	}
	switch g.premiumTier {
	case 2:
		return 50 * mib
	case 3:
		return 100 * mib
	}
	return defaultUpload
}

// uploadsFit refuses a request whose files break Discord's limits for a
// guild with the given per-file limit: too many (400, code 30015), or too
// large (413, code 40005).
func (rq *request) uploadsFit(limit int) *apiError {
	if len(rq.files) > maxFiles {
		return errMaxFiles
	}
	total := 0
	for _, f := range rq.files {
		if f.size > limit {
			return errTooLarge
		}
		total += f.size
	}
	if total > max(maxBody, limit) {
		return errTooLarge
	}
	return nil
}
