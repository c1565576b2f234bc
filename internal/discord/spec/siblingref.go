package spec

import (
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// resolveSiblingRefs works around the validator, not the spec. OpenAPI 3.1
// lets a $ref have sibling keywords, and Discord's document uses that to
// describe fields, e.g. GuildMemberResponse.user:
//
//	{"$ref": "#/components/schemas/UserResponse", "description": "the user this guild member represents"}
//
// libopenapi builds such a schema internally as allOf [siblings, $ref], and
// renders that for JSON Schema validation, but the high-level proxy's
// Schema() returns only the siblings (here, a bare description). Strict mode
// walks the high-level model through Schema(), so it finds no declared
// properties there and reports every field of the referenced object as
// undeclared ("Declared properties: []").
//
// So Load replaces every such proxy in the model before the validator is
// built:
//   - when the siblings are annotations that neither JSON Schema nor strict
//     mode acts on (every sibling in Discord's document is a description),
//     by the plain $ref, which strict mode handles as it does any other;
//   - otherwise by libopenapi's own allOf [siblings, $ref] view (what JSON
//     Schema validation already renders), whose members' properties strict
//     mode merges as it does for any allOf.
//
// Either way the referenced schema's properties count as declared, and any
// other field below it is still reported. It returns how
// many of the document's $refs with siblings it replaced; libopenapi builds
// some of them more than once (a component's own schema and the one a $ref
// to it resolves to are separate copies), and each copy is replaced.
func resolveSiblingRefs(doc *v3.Document) int {
	w := &siblingRefWalker{seen: make(map[*base.SchemaProxy]bool), replaced: make(map[any]bool)}
	w.document(doc)
	return len(w.replaced)
}

// annotationKeywords are the sibling keywords dropped with the plain $ref:
// they assert nothing, and strict mode ignores them. readOnly and writeOnly
// are annotations too, but strict mode acts on them.
var annotationKeywords = map[string]bool{
	"description":  true,
	"title":        true,
	"$comment":     true,
	"example":      true,
	"examples":     true,
	"default":      true,
	"deprecated":   true,
	"externalDocs": true,
}

// resolveSiblingRef returns the proxy that stands for p: p itself unless p is
// a $ref with siblings.
func resolveSiblingRef(p *base.SchemaProxy) *base.SchemaProxy {
	if p == nil || !p.IsTransformedRefWithSiblings() {
		return p
	}
	semantic, err := p.BuildTransformedRefSemanticSchema(nil)
	if err != nil || semantic == nil {
		return p
	}
	var ref *base.SchemaProxy
	for _, m := range semantic.AllOf {
		if m != nil && m.IsReference() && m.GetReference() == p.GetReference() {
			ref = m
		}
	}
	if ref == nil {
		return p
	}
	if annotationsOnly(p) {
		return ref
	}
	return base.CreateSchemaProxy(semantic)
}

// annotationsOnly reports whether every sibling of p's $ref is an annotation
// or an extension.
func annotationsOnly(p *base.SchemaProxy) bool {
	if p.GoLow() == nil {
		return false
	}
	// The siblings as authored: a mapping node, keys and values alternating.
	siblings := p.GoLow().GetTransformedRefSiblingSchema()
	if siblings == nil || len(siblings.Content)%2 != 0 {
		return false
	}
	for i := 0; i < len(siblings.Content); i += 2 {
		key := siblings.Content[i].Value
		if !annotationKeywords[key] && !strings.HasPrefix(key, "x-") {
			return false
		}
	}
	return true
}

type siblingRefWalker struct {
	seen     map[*base.SchemaProxy]bool
	replaced map[any]bool // the authored $ref nodes replaced
}

// document walks every schema an operation or a component names.
func (w *siblingRefWalker) document(doc *v3.Document) {
	if doc.Components != nil {
		w.schemaMap(doc.Components.Schemas)
		for p := doc.Components.Parameters.First(); p != nil; p = p.Next() {
			w.parameter(p.Value())
		}
		for h := doc.Components.Headers.First(); h != nil; h = h.Next() {
			w.header(h.Value())
		}
		for r := doc.Components.RequestBodies.First(); r != nil; r = r.Next() {
			if r.Value() != nil {
				w.content(r.Value().Content)
			}
		}
		for r := doc.Components.Responses.First(); r != nil; r = r.Next() {
			w.response(r.Value())
		}
	}
	if doc.Paths == nil {
		return
	}
	for path := doc.Paths.PathItems.First(); path != nil; path = path.Next() {
		item := path.Value()
		for _, p := range item.Parameters {
			w.parameter(p)
		}
		for op := item.GetOperations().First(); op != nil; op = op.Next() {
			o := op.Value()
			for _, p := range o.Parameters {
				w.parameter(p)
			}
			if o.RequestBody != nil {
				w.content(o.RequestBody.Content)
			}
			if o.Responses == nil {
				continue
			}
			w.response(o.Responses.Default)
			for code := o.Responses.Codes.First(); code != nil; code = code.Next() {
				w.response(code.Value())
			}
		}
	}
}

func (w *siblingRefWalker) parameter(p *v3.Parameter) {
	if p != nil {
		w.swap(&p.Schema)
		w.content(p.Content)
	}
}

func (w *siblingRefWalker) header(h *v3.Header) {
	if h != nil {
		w.swap(&h.Schema)
		w.content(h.Content)
	}
}

func (w *siblingRefWalker) response(r *v3.Response) {
	if r == nil {
		return
	}
	for h := r.Headers.First(); h != nil; h = h.Next() {
		w.header(h.Value())
	}
	w.content(r.Content)
}

func (w *siblingRefWalker) content(content *orderedmap.Map[string, *v3.MediaType]) {
	for mt := content.First(); mt != nil; mt = mt.Next() {
		if m := mt.Value(); m != nil {
			w.swap(&m.Schema)
		}
	}
}

// swap replaces *dst by the proxy that stands for it, writing only when
// that differs: a second walk over a resolved model writes nothing, so it
// is safe beside validations reading the model.
func (w *siblingRefWalker) swap(dst **base.SchemaProxy) {
	if r := w.proxy(*dst); r != *dst {
		*dst = r
	}
}

// proxy returns the proxy that stands for p, after walking its schema.
func (w *siblingRefWalker) proxy(p *base.SchemaProxy) *base.SchemaProxy {
	if p == nil {
		return nil
	}
	if r := resolveSiblingRef(p); r != p {
		w.replaced[p.GetReferenceNode()] = true
		p = r
	}
	w.schema(p)
	return p
}

// schema replaces the $refs with siblings below p's schema, where strict
// mode or JSON Schema validation can reach them.
func (w *siblingRefWalker) schema(p *base.SchemaProxy) {
	if w.seen[p] {
		return
	}
	w.seen[p] = true
	s := p.Schema()
	if s == nil {
		return
	}
	for _, list := range [][]*base.SchemaProxy{s.AllOf, s.OneOf, s.AnyOf, s.PrefixItems} {
		for i := range list {
			w.swap(&list[i])
		}
	}
	for _, single := range []**base.SchemaProxy{
		&s.Not, &s.If, &s.Then, &s.Else, &s.Contains, &s.PropertyNames, &s.UnevaluatedItems, &s.ContentSchema,
	} {
		w.swap(single)
	}
	for _, dv := range []*base.DynamicValue[*base.SchemaProxy, bool]{s.Items, s.AdditionalProperties, s.UnevaluatedProperties} {
		if dv != nil && dv.IsA() && dv.A != nil {
			if r := w.proxy(dv.A); r != dv.A {
				dv.A = r
			}
		}
	}
	for _, m := range []*orderedmap.Map[string, *base.SchemaProxy]{s.Properties, s.PatternProperties, s.DependentSchemas, s.Defs} {
		w.schemaMap(m)
	}
}

func (w *siblingRefWalker) schemaMap(m *orderedmap.Map[string, *base.SchemaProxy]) {
	type replacement struct {
		key   string
		proxy *base.SchemaProxy
	}
	var replace []replacement
	for pair := m.First(); pair != nil; pair = pair.Next() {
		if r := w.proxy(pair.Value()); r != pair.Value() {
			replace = append(replace, replacement{pair.Key(), r})
		}
	}
	for _, r := range replace {
		m.Set(r.key, r.proxy) // keeps the key's position
	}
}
