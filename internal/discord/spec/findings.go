package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message" // renamed: the package's tests declare message
)

var printer = xmessage.NewPrinter(language.English)

// describe turns the error of validating subject ("body", "query parameter
// 'wait'") into findings, one line each, naming the field by its path:
//
//	property 'shoe_size' at '$.body.user.shoe_size' is not declared
//	body $.content: got number, want string
//	query parameter 'wait': got string, want boolean
func describe(err error, subject string) []string {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []string{fmt.Sprintf("%s: %v", subject, err)}
	}
	var lines []string
	for _, leaf := range leaves(verr) {
		lines = append(lines, describeLeaf(leaf, subject)...)
	}
	// Sorted, as properties are checked in map order; a union's variants
	// may report the same finding.
	slices.Sort(lines)
	return slices.Compact(lines)
}

func describeLeaf(e *jsonschema.ValidationError, subject string) []string {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.FalseSchema:
		if strings.HasSuffix(e.SchemaURL, "/unevaluatedProperties") && len(loc) > 0 {
			return []string{undeclared(subject, loc[:len(loc)-1], loc[len(loc)-1])}
		}
	case *kind.AdditionalProperties:
		var out []string
		for _, p := range k.Properties {
			out = append(out, undeclared(subject, loc, p))
		}
		return out
	}
	at := ""
	if subject == "body" || len(loc) > 0 {
		at = " " + jsonPath("$", loc)
	}
	return []string{fmt.Sprintf("%s%s: %s", subject, at, e.ErrorKind.LocalizedString(printer))}
}

func undeclared(subject string, parent []string, name string) string {
	root := "$"
	if subject == "body" {
		root = "$.body"
	}
	return fmt.Sprintf("property '%s' at '%s' is not declared", name, jsonPath(root, append(slices.Clone(parent), name)))
}

// leaves returns the errors at the bottom of e's tree. Of a union's
// variants, only the failures of those the value most likely meant are
// followed (see closest).
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	branches := make([][]*jsonschema.ValidationError, len(e.Causes))
	for i, c := range e.Causes {
		branches[i] = leaves(c)
	}
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		branches = closest(e, branches)
	}
	return slices.Concat(branches...)
}

// closest returns the failures of the union's variants the value most
// likely meant: of those it could have meant (see applies), or else of all,
// the ones it misses by least, a field the variant does not declare
// counting double. So a nullable object's null variant does not report
// "got object, want null", and a wrong value in one variant is not also
// reported as undeclared in the others.
func closest(union *jsonschema.ValidationError, branches [][]*jsonschema.ValidationError) [][]*jsonschema.ValidationError {
	candidates := slices.DeleteFunc(slices.Clone(branches), func(b []*jsonschema.ValidationError) bool {
		return !applies(union, b)
	})
	if len(candidates) == 0 {
		candidates = branches
	}
	scores := make([]int, len(candidates))
	for i, b := range candidates {
		for _, l := range b {
			scores[i] += weight(l)
		}
	}
	best := slices.Min(scores)
	var out [][]*jsonschema.ValidationError
	for i, b := range candidates {
		if scores[i] == best {
			out = append(out, b)
		}
	}
	return out
}

func weight(e *jsonschema.ValidationError) int {
	switch k := e.ErrorKind.(type) {
	case *kind.FalseSchema:
		if strings.HasSuffix(e.SchemaURL, "/unevaluatedProperties") {
			return 2
		}
	case *kind.AdditionalProperties:
		return 2 * len(k.Properties)
	}
	return 1
}

// applies reports whether a union variant whose failures are leaves is one
// the value could have meant: it is not when the value has another type
// than the variant's, or a field the variant fixes with const or enum
// (Discord's type discriminators) another value.
func applies(union *jsonschema.ValidationError, leaves []*jsonschema.ValidationError) bool {
	depth := len(union.InstanceLocation)
	for _, l := range leaves {
		switch l.ErrorKind.(type) {
		case *kind.Type:
			if len(l.InstanceLocation) == depth {
				return false
			}
		case *kind.Const, *kind.Enum:
			if len(l.InstanceLocation) <= depth+1 {
				return false
			}
		}
	}
	return true
}

// jsonPath renders an instance location as a JSON path below root:
// $.body[1].user.shoe_size.
func jsonPath(root string, loc []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, tok := range loc {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			fmt.Fprintf(&b, "[%s]", tok)
		} else {
			b.WriteString(".")
			b.WriteString(tok)
		}
	}
	return b.String()
}
