package i18n

import (
	"fmt"
	"slices"
	"text/template"
	"text/template/parse"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
)

// form is one plural form of a message.
type form struct {
	name string
	src  string
}

// forms returns the plural forms m defines, in CLDR order.
func forms(m *goi18n.Message) []form {
	all := []form{
		{"zero", m.Zero}, {"one", m.One}, {"two", m.Two},
		{"few", m.Few}, {"many", m.Many}, {"other", m.Other},
	}
	return slices.DeleteFunc(all, func(f form) bool { return f.src == "" })
}

// parseForm parses src as go-i18n will when it renders m.
func parseForm(m *goi18n.Message, src string) (*template.Template, error) {
	return template.New(m.ID).Delims(m.LeftDelim, m.RightDelim).Parse(src)
}

// checkMessage reports a message without text or with a template that does
// not parse.
func checkMessage(m *goi18n.Message) error {
	defined := forms(m)
	if len(defined) == 0 {
		return fmt.Errorf("%s: message has no text", m.ID)
	}
	for _, f := range defined {
		if _, err := parseForm(m, f.src); err != nil {
			return fmt.Errorf("%s (%s): %w", m.ID, f.name, err)
		}
	}
	return nil
}

// countVariable returns the variable that selects a plural message's form:
// the first one its other form uses. plural is false for a message with
// only an other form.
func countVariable(m *goi18n.Message) (v string, plural bool, err error) {
	defined := forms(m)
	if len(defined) == 1 && defined[0].name == "other" {
		return "", false, nil
	}
	if m.Other == "" {
		return "", true, fmt.Errorf("%s: plural message has no other form", m.ID)
	}
	t, err := parseForm(m, m.Other)
	if err != nil {
		return "", true, fmt.Errorf("%s (other): %w", m.ID, err)
	}
	vars := fields(t)
	if len(vars) == 0 {
		return "", true, fmt.Errorf("%s: plural message uses no variable to count with", m.ID)
	}
	return vars[0], true, nil
}

// fields returns the top-level data fields t uses ({{.Name}} and {{$.Name}}
// give Name), in order of first use. The bodies of range and with are
// skipped: dot there is no longer the data.
func fields(t *template.Template) []string {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.FieldNode:
			add(n.Ident[0])
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				add(n.Ident[1])
			}
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	if t.Tree != nil {
		walk(t.Tree.Root)
	}
	return out
}
