package spec

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/strict"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// unions works around the validator, not the spec. Strict mode judges a body
// whose schema is a union (PATCH /channels/{id} takes a DM, group DM, guild
// channel or thread update) by the first variant the body matches, so a
// guild channel's parent_id is reported as undeclared in the DM variant.
// The body is judged by every variant instead: when one variant both accepts
// it and declares all of its fields, the undeclared-field reports are
// dropped. Every other report stands.
type unions struct {
	model   *v3.Document
	opts    *config.ValidationOptions
	schemas *schemaCache
}

// excuse returns verrs without its undeclared-property reports when some
// variant of the union body schema fits body exactly. req is addressed to the
// spec's path; status is 0 for a request body.
func (u *unions) excuse(req *http.Request, status int, body []byte, verrs []*verrors.ValidationError) []*verrors.ValidationError {
	var undeclared, rest []*verrors.ValidationError
	for _, e := range verrs {
		if e.ValidationType == verrors.StrictValidationType && e.ValidationSubType == verrors.StrictSubTypeProperty {
			undeclared = append(undeclared, e)
		} else {
			rest = append(rest, e)
		}
	}
	if len(undeclared) == 0 || len(rest) > 0 {
		return verrs
	}
	schema := u.bodySchema(req, status)
	if schema == nil || len(schema.AnyOf)+len(schema.OneOf) == 0 {
		return verrs
	}
	var data any
	if err := json.Unmarshal(body, &data); err != nil {
		return verrs
	}
	direction := strict.DirectionRequest
	if status != 0 {
		direction = strict.DirectionResponse
	}
	for _, group := range [][]*base.SchemaProxy{schema.AnyOf, schema.OneOf} {
		for _, p := range group {
			if u.fits(p.Schema(), data, direction) {
				return nil
			}
		}
	}
	return verrs
}

// fits reports whether data is valid against variant and has no field the
// variant does not declare.
func (u *unions) fits(variant *base.Schema, data any, direction strict.Direction) bool {
	if variant == nil || variant.GoLow() == nil {
		return false
	}
	entry, ok := u.schemas.Load(variant.GoLow().Hash())
	if !ok || entry == nil || entry.CompiledSchema == nil || entry.CompiledSchema.Validate(data) != nil {
		return false
	}
	return strict.ValidateBody(variant, data, direction, u.opts, u.schemas.version).Valid
}

// bodySchema returns the JSON schema of the request body (status 0) or of
// the response with status.
func (u *unions) bodySchema(req *http.Request, status int) *base.Schema {
	item, errs, _ := paths.FindPath(req, u.model, u.opts)
	if item == nil || len(errs) > 0 {
		return nil
	}
	op := helpers.ExtractOperation(req, item)
	if op == nil {
		return nil
	}
	var content interface {
		GetOrZero(string) *v3.MediaType
	}
	switch {
	case status == 0 && op.RequestBody != nil && op.RequestBody.Content != nil:
		content = op.RequestBody.Content
	case status != 0 && op.Responses != nil && op.Responses.Codes != nil:
		if resp := op.Responses.Codes.GetOrZero(strconv.Itoa(status)); resp != nil && resp.Content != nil {
			content = resp.Content
		}
	}
	if content == nil {
		return nil
	}
	mt := content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Schema()
}
