package sim

import (
	"net/http"
	"strconv"
	"strings"
)

// JSON error codes Discord answers with, from its error code reference.
const (
	codeGeneral              = 0
	codeUnknownChannel       = 10003
	codeUnknownGuild         = 10004
	codeUnknownMember        = 10007
	codeUnknownMessage       = 10008
	codeUnknownOverwrite     = 10009
	codeUnknownRole          = 10011
	codeUnknownUser          = 10013
	codeUnknownEmoji         = 10014
	codeUnknownWebhook       = 10015
	codeUnknownInteraction   = 10062
	codeMaxPins              = 30003
	codeMaxRoles             = 30005
	codeMaxWebhooks          = 30007
	codeMaxReactions         = 30010
	codeMaxChannels          = 30013
	codeMaxAttachments       = 30015
	codeMaxCommands          = 30032
	codeMaxDailyCommands     = 30034
	codeAlreadyAcknowledged  = 40060
	codeMissingAccess        = 50001
	codeDMChannel            = 50003
	codeEmptyMessage         = 50006
	codeCannotDMUser         = 50007
	codeMissingPermissions   = 50013
	codeBulkDeleteCount      = 50016
	codeInvalidWebhookToken  = 50027
	codeBulkDeleteTooOld     = 50034
	codeInvalidFormBody      = 50035
	codeThreadArchived       = 50083
	codeInvalidJSON          = 50109
	codeInvalidThreadChannel = 50024
)

// apiError is a Discord error response: an HTTP status and the JSON body
// {"code": N, "message": "..."} with, for 50035, the nested errors object.
type apiError struct {
	status  int
	code    int
	message string
	errors  map[string]any
}

func (e *apiError) Error() string { return strconv.Itoa(e.code) + " " + e.message }

func (e *apiError) body() map[string]any {
	b := map[string]any{"code": e.code, "message": e.message}
	if e.errors != nil {
		b["errors"] = e.errors
	}
	return b
}

func errUnknown(code int) *apiError {
	msgs := map[int]string{
		codeUnknownChannel:     "Unknown Channel",
		codeUnknownGuild:       "Unknown Guild",
		codeUnknownMember:      "Unknown Member",
		codeUnknownMessage:     "Unknown Message",
		codeUnknownOverwrite:   "Unknown Overwrite",
		codeUnknownRole:        "Unknown Role",
		codeUnknownUser:        "Unknown User",
		codeUnknownEmoji:       "Unknown Emoji",
		codeUnknownWebhook:     "Unknown Webhook",
		codeUnknownInteraction: "Unknown interaction",
	}
	return &apiError{status: http.StatusNotFound, code: code, message: msgs[code]}
}

var (
	errMissingAccess      = &apiError{status: http.StatusForbidden, code: codeMissingAccess, message: "Missing Access"}
	errMissingPermissions = &apiError{status: http.StatusForbidden, code: codeMissingPermissions, message: "Missing Permissions"}
	errEmptyMessage       = &apiError{status: http.StatusBadRequest, code: codeEmptyMessage, message: "Cannot send an empty message"}
	errAlreadyAcked       = &apiError{status: http.StatusBadRequest, code: codeAlreadyAcknowledged, message: "Interaction has already been acknowledged."}
	errInvalidJSON        = &apiError{status: http.StatusBadRequest, code: codeInvalidJSON, message: "The request body contains invalid JSON."}
	errInvalidToken       = &apiError{status: http.StatusUnauthorized, code: codeInvalidWebhookToken, message: "Invalid Webhook Token"}
	errUnauthorized       = &apiError{status: http.StatusUnauthorized, code: codeGeneral, message: "401: Unauthorized"}
	errNotFound           = &apiError{status: http.StatusNotFound, code: codeGeneral, message: "404: Not Found"}
	errMethodNotAllowed   = &apiError{status: http.StatusMethodNotAllowed, code: codeGeneral, message: "405: Method Not Allowed"}
	errThreadArchived     = &apiError{status: http.StatusBadRequest, code: codeThreadArchived, message: "Thread is archived"}
	errNotThread          = &apiError{status: http.StatusBadRequest, code: codeInvalidThreadChannel, message: "Invalid thread channel"}
	errMaxWebhooks        = &apiError{status: http.StatusBadRequest, code: codeMaxWebhooks, message: "Maximum number of webhooks reached (15)"}
	errMaxChannels        = &apiError{status: http.StatusBadRequest, code: codeMaxChannels, message: "Maximum number of guild channels reached (500)"}
	errMaxRoles           = &apiError{status: http.StatusBadRequest, code: codeMaxRoles, message: "Maximum number of guild roles reached (250)"}
	errMaxPins            = &apiError{status: http.StatusBadRequest, code: codeMaxPins, message: "Maximum number of pins reached for the channel (250)"}
	errMaxReactions       = &apiError{status: http.StatusBadRequest, code: codeMaxReactions, message: "Maximum number of reactions reached (20)"}
	errDMChannel          = &apiError{status: http.StatusForbidden, code: codeDMChannel, message: "Cannot execute action on a DM channel"}
	errCannotDMUser       = &apiError{status: http.StatusForbidden, code: codeCannotDMUser, message: "Cannot send messages to this user"}
	errBulkDeleteCount    = &apiError{status: http.StatusBadRequest, code: codeBulkDeleteCount, message: "Provided too few or too many messages to delete. Must provide at least 2 and fewer than 100 messages to delete."}
	errBulkDeleteTooOld   = &apiError{status: http.StatusBadRequest, code: codeBulkDeleteTooOld, message: "A message provided was too old to bulk delete"}
)

// formErrors collects field errors for a 50035 Invalid Form Body answer.
// Paths are dotted ("components.0.components.1.custom_id") and become the
// nested objects Discord sends.
type formErrors struct {
	prefix string // path of the object being validated inside the body
	errors map[string]any
}

func (f *formErrors) add(path, code, message string) {
	path = strings.TrimPrefix(f.prefix+"."+path, ".")
	if f.errors == nil {
		f.errors = map[string]any{}
	}
	node := f.errors
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			continue
		}
		child, ok := node[part].(map[string]any)
		if !ok {
			child = map[string]any{}
			node[part] = child
		}
		node = child
	}
	list, _ := node["_errors"].([]any)
	node["_errors"] = append(list, map[string]any{"code": code, "message": message})
}

func (f *formErrors) maxLen(path string, got, max int) {
	if got > max {
		f.add(path, "BASE_TYPE_MAX_LENGTH", "Must be "+strconv.Itoa(max)+" or fewer in length.")
	}
}

func (f *formErrors) between(path string, got, min, max int) {
	if got < min || got > max {
		f.add(path, "BASE_TYPE_BAD_LENGTH", "Must be between "+strconv.Itoa(min)+" and "+strconv.Itoa(max)+" in length.")
	}
}

// numberBetween checks an integer field, in Discord's words for numbers.
func (f *formErrors) numberBetween(path string, got, min, max int) {
	switch {
	case got < min:
		f.add(path, "NUMBER_TYPE_MIN", "int value should be greater than or equal to "+strconv.Itoa(min)+".")
	case got > max:
		f.add(path, "NUMBER_TYPE_MAX", "int value should be less than or equal to "+strconv.Itoa(max)+".")
	}
}

// notObject refuses a value that should be a JSON object.
func (f *formErrors) notObject(path string) {
	f.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
}

func (f *formErrors) required(path string) {
	f.add(path, "BASE_TYPE_REQUIRED", "This field is required")
}

// requiredLen checks a required string field of min to max characters.
func (f *formErrors) requiredLen(path string, v *string, min, max int) {
	if v == nil {
		f.required(path)
		return
	}
	f.between(path, len([]rune(*v)), min, max)
}

// err returns the 50035 error, or nil when no field failed.
func (f *formErrors) err() *apiError {
	if f.errors == nil {
		return nil
	}
	return &apiError{status: http.StatusBadRequest, code: codeInvalidFormBody, message: "Invalid Form Body", errors: f.errors}
}
