package rolemenu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/herald-bot/herald/internal/discord/transport"
	"github.com/herald-bot/herald/internal/followup"
	"github.com/herald-bot/herald/internal/guildroles"
	"github.com/herald-bot/herald/internal/i18n"
	"github.com/herald-bot/herald/internal/outbox"
	"github.com/herald-bot/herald/internal/synctarget"
	"github.com/herald-bot/herald/internal/work"
)

// applyArgs is one member's apply job: it works every click of theirs
// that is waiting.
type applyArgs struct {
	GuildID string `json:"guild_id"`
	UserID  string `json:"user_id"`
}

func (applyArgs) Kind() string { return "rolemenu_apply" }

type applyWorker struct {
	river.WorkerDefaults[applyArgs]
	*deps
}

// plan is what a batch of clicks changes, decided once before any change
// is made: a rerun after a crash carries out what is left of the same
// plan (see left) instead of toggling again from the new state.
type plan struct {
	Batch   int64                `json:"batch"` // the batch's first click
	Add     []string             `json:"add"`
	Remove  []string             `json:"remove"`
	Refused []refused            `json:"refused,omitempty"`
	Expires map[string]time.Time `json:"expires,omitempty"` // temporary roles added
	// Left is what an attempt did not get to when it ended knowing that
	// nothing past it was made (transport.Unsent: herald's limiter or a
	// 429 held the next change back): the next attempt starts there
	// instead of reading the member back.
	Left *plan `json:"left,omitempty"`
}

type refused struct {
	RoleID string             `json:"role_id"`
	Why    guildroles.Refusal `json:"why"`
}

type click struct {
	ID        int64
	MenuID    int64
	OptionIDs []int64
	IsSelect  bool
	// Roles are the member's roles in the click's payload (nil: not
	// kept), which herald received at Received.
	Roles    []string
	Received time.Time
	followup.Reply
	Plan   *plan
	Notice *string // what the notice job did (notice.go)
}

func (w *applyWorker) Work(ctx context.Context, j *river.Job[applyArgs]) error {
	g, u := j.Args.GuildID, j.Args.UserID
	return synctarget.Run(ctx, w.db, j.ID, memberTarget(g, u), func(ctx context.Context, _ int64) error {
		for {
			clicks, err := w.pending(ctx, g, u)
			if err != nil || len(clicks) == 0 {
				return err
			}
			batch, p := planned(clicks)
			todo := p
			switch {
			case p == nil:
				if p, err = w.plan(ctx, g, u, batch); err != nil {
					return err
				}
				todo = p
			case p.Left != nil:
				// Forgotten before it is acted on: an attempt that dies
				// midway leaves the next one to read the member back.
				todo, p.Left = p.Left, nil
				if err := storePlan(ctx, w.db, batch, p); err != nil {
					return err
				}
			default:
				if todo, err = w.left(ctx, g, u, p); err != nil {
					return err
				}
			}
			if err := w.answer(ctx, g, u, batch, p, todo); err != nil {
				return err
			}
		}
	})
}

// pending reads the member's waiting clicks, oldest first.
func (w *applyWorker) pending(ctx context.Context, guildID, userID string) ([]click, error) {
	rows, err := w.db.Query(ctx, `SELECT id, menu_id, option_ids, is_select, roles, COALESCE(received_at, 'epoch'), interaction_id, locale, guild_locale, plan, notice
		FROM rolemenu_clicks WHERE guild_id = $1 AND user_id = $2 ORDER BY id`, guildID, userID)
	if err != nil {
		return nil, fmt.Errorf("rolemenu: clicks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (click, error) {
		var c click
		err := r.Scan(&c.ID, &c.MenuID, &c.OptionIDs, &c.IsSelect, &c.Roles, &c.Received, &c.InteractionID, &c.Locale, &c.GuildLocale, &c.Plan, &c.Notice)
		return c, err
	})
}

// planned splits off the next batch: the clicks an earlier run planned
// together (with their plan), else every click not planned yet.
func planned(clicks []click) ([]click, *plan) {
	if p := clicks[0].Plan; p != nil {
		n := 1
		for n < len(clicks) && clicks[n].Plan != nil && clicks[n].Plan.Batch == p.Batch {
			n++
		}
		return clicks[:n], p
	}
	return clicks, nil
}

// plan works out the roles the member wants after the batch's clicks in
// order, from their roles as the first click's payload gave them brought
// up to date with herald's own changes since (fromPayload) — or, when
// that is unknown, from a fresh read of the member — checks every role
// that would change against the guild read fresh, and stores the plan
// with the expiry of temporary roles, all before a single change is made.
func (w *applyWorker) plan(ctx context.Context, guildID, userID string, batch []click) (*plan, error) {
	p := &plan{Batch: batch[0].ID, Add: []string{}, Remove: []string{}}
	has, err := w.memberRoles(ctx, guildID, userID, batch[0])
	if errors.Is(err, errMemberLeft) {
		// They left: nothing to change, the replies say so.
		return p, w.store(ctx, guildID, userID, batch, p)
	}
	if err != nil {
		return nil, err
	}
	g, err := w.snapshot(ctx, guildID)
	if err != nil {
		return nil, err
	}
	temporary, err := w.desire(ctx, guildID, has, batch, p)
	if err != nil {
		return nil, err
	}
	p.check(g)
	for _, r := range p.Add {
		if secs := temporary[r]; secs > 0 {
			if p.Expires == nil {
				p.Expires = map[string]time.Time{}
			}
			p.Expires[r] = w.clock.Now().Add(time.Duration(secs) * time.Second).Truncate(time.Second)
		}
	}
	return p, w.store(ctx, guildID, userID, batch, p)
}

// errMemberLeft is a member Discord no longer knows in the guild.
var errMemberLeft = errors.New("rolemenu: the member left the server")

// memberRoles are the member's roles before the batch starting with first:
// from first's payload when herald's record of its own changes makes
// them certain, else from a gateway update that came well after it
// (seen.go), else read from Discord.
func (w *applyWorker) memberRoles(ctx context.Context, guildID, userID string, first click) ([]string, error) {
	if first.Roles != nil {
		changes, err := w.changesSince(ctx, guildID, userID, first.Received)
		if err != nil {
			return nil, err
		}
		if has, ok := fromPayload(first.Roles, first.Received, changes); ok {
			return has, nil
		}
	}
	if has, ok, err := w.seenRoles(ctx, guildID, userID, first.Received); err != nil || ok {
		return has, err
	}
	member, err := w.discord.Member(ctx, guildID, userID)
	var api *transport.APIError
	if errors.As(err, &api) && api.Class() == transport.NotFound {
		return nil, errMemberLeft
	}
	if err != nil {
		return nil, err
	}
	return member.Roles, nil
}

// codeUnknownMember is Discord's error code for a member who is not (or
// no longer) in the guild.
const codeUnknownMember = 10007

// desire applies the clicks to the member's roles and fills p's changes;
// it returns the temporary duration of each role a menu gives.
func (w *applyWorker) desire(ctx context.Context, guildID string, has []string, batch []click, p *plan) (map[string]int64, error) {
	want := map[string]bool{}
	for _, r := range has {
		want[r] = true
	}
	temporary := map[string]int64{}
	menus := map[int64]*menu{}
	groups := map[string][]string{} // unique groups' roles, read once per batch
	for _, c := range batch {
		m, ok := menus[c.MenuID]
		if !ok {
			var err error
			m, err = loadMenuByID(ctx, w.db, c.MenuID)
			if errors.Is(err, errNoMenu) {
				menus[c.MenuID] = nil
				continue
			}
			if err != nil {
				return nil, err
			}
			menus[c.MenuID] = m
		}
		if m == nil {
			continue
		}
		var picked []string
		for _, id := range c.OptionIDs {
			if o, ok := m.option(id); ok {
				picked = append(picked, o.RoleID)
				temporary[o.RoleID] = m.TemporarySecs
			}
		}
		group, read := groups[m.group()]
		if m.Mode == ModeUnique && !read {
			var err error
			if group, err = w.groupRoles(ctx, guildID, m.group()); err != nil {
				return nil, err
			}
			groups[m.group()] = group
		}
		applyClick(want, m, c.IsSelect, picked, group)
	}
	for r, ok := range want {
		if ok && !slices.Contains(has, r) {
			p.Add = append(p.Add, r)
		}
	}
	for _, r := range has {
		if !want[r] {
			p.Remove = append(p.Remove, r)
		}
	}
	slices.Sort(p.Add)
	slices.Sort(p.Remove)
	return temporary, nil
}

// applyClick changes want as one click in menu m does: picked are the
// roles clicked (a button's one, or a select's values), group the roles
// of m's unique group.
func applyClick(want map[string]bool, m *menu, isSelect bool, picked, group []string) {
	switch {
	case m.Mode == ModeVerify:
		for _, r := range picked {
			want[r] = true
		}
	case m.Mode == ModeDrop:
		for _, r := range picked {
			want[r] = false
		}
	case isSelect && m.Mode == ModeToggle:
		for _, o := range m.Options {
			want[o.RoleID] = slices.Contains(picked, o.RoleID)
		}
	case isSelect: // unique: the one picked, or none
		for _, r := range group {
			want[r] = slices.Contains(picked, r)
		}
	case m.Mode == ModeToggle:
		for _, r := range picked {
			want[r] = !want[r]
		}
	default: // a unique button: take it and drop the rest, or drop it
		for _, r := range picked {
			had := want[r]
			for _, other := range group {
				want[other] = false
			}
			want[r] = !had
		}
	}
}

// groupRoles are the roles offered by every menu of a unique group.
func (w *applyWorker) groupRoles(ctx context.Context, guildID, group string) ([]string, error) {
	rows, err := w.db.Query(ctx, `SELECT o.role_id FROM rolemenu_options o JOIN rolemenus m ON m.id = o.menu_id
		WHERE m.guild_id = $1 AND COALESCE(m.unique_group, m.id::text) = $2`, guildID, group)
	if err != nil {
		return nil, fmt.Errorf("rolemenu: group roles: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// left is what remains to do of a plan an earlier run stored: the changes
// the member's roles, read fresh, do not show yet. That run may have died
// after Discord made some of them and before it could note so; reading
// back, rather than sending them again, makes each change once. The
// changes found made are recorded now, as of this read: later clicks'
// payloads may predate them.
func (w *applyWorker) left(ctx context.Context, guildID, userID string, p *plan) (*plan, error) {
	todo := &plan{Batch: p.Batch, Add: []string{}, Remove: []string{}}
	read := time.Now()
	member, err := w.discord.Member(ctx, guildID, userID)
	var api *transport.APIError
	if errors.As(err, &api) && api.Class() == transport.NotFound {
		return todo, nil // they left: nothing to change
	}
	if err != nil {
		return nil, err
	}
	made := map[string]roleChange{}
	for _, change := range []struct {
		roles   []string
		present bool
		todo    *[]string
	}{{p.Add, true, &todo.Add}, {p.Remove, false, &todo.Remove}} {
		for _, r := range change.roles {
			if slices.Contains(member.Roles, r) == change.present {
				made[r] = roleChange{Present: &change.present, Done: read}
			} else {
				*change.todo = append(*change.todo, r)
			}
		}
	}
	return todo, recordChanges(ctx, w.db, guildID, userID, made)
}

// check drops every change the fresh data forbids, noting why. A menu's
// role is checked twice:
//   - when an admin adds it to the menu (configWorker.addOption), fully:
//     also below the admin's own highest role (the owner outranks all);
//   - at every click, here, with data no older than guildroles' window:
//     the role exists, is not @everyone or managed, sits below herald's
//     highest role, and has no dangerous permission unless the server
//     owner allowed them (/rolemenu set dangerous-roles, read fresh). The
//     click job checked the menu, the option, the pick count and the
//     required and blocked roles before.
//
// The rank of the admin who added the role is not checked at clicks: a
// menu is the server's configuration, not that admin's act, so it keeps
// working when they are demoted or leave, and changing what it offers is
// up to the admins there now (/rolemenu option remove). What a click
// could hurt is bounded by herald's rank and the dangerous permissions,
// both checked every time.
func (p *plan) check(g *guildRoles) {
	keep := func(roles []string) []string {
		out := roles[:0]
		for _, r := range roles {
			if why := g.checkRole(r, "", nil); why != nil {
				p.Refused = append(p.Refused, refused{RoleID: r, Why: *why})
				continue
			}
			out = append(out, r)
		}
		return out
	}
	p.Add, p.Remove = keep(p.Add), keep(p.Remove)
}

// store records the plan on the batch's clicks and schedules the removal
// of its temporary roles, in one transaction: from here on the plan is
// what happens.
func (w *applyWorker) store(ctx context.Context, guildID, userID string, batch []click, p *plan) error {
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		if err := storePlan(ctx, tx, batch, p); err != nil {
			return err
		}
		return scheduleExpiry(ctx, tx, guildID, userID, p.Expires)
	})
}

// storePlan records p on the batch's clicks.
func storePlan(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, batch []click, p *plan) error {
	ids := make([]int64, len(batch))
	for i, c := range batch {
		ids[i] = c.ID
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `UPDATE rolemenu_clicks SET plan = $2 WHERE id = ANY($1)`, ids, raw); err != nil {
		return fmt.Errorf("rolemenu: store plan: %w", err)
	}
	return nil
}

// answer makes the changes todo holds (the plan p, or what is left of
// it), fills every click's reply with what p changes in the member's
// language, and forgets the clicks.
func (w *applyWorker) answer(ctx context.Context, guildID, userID string, batch []click, p, todo *plan) error {
	failed, rest, err := w.execute(ctx, guildID, userID, todo)
	if rest != nil {
		p.Left = rest
		if serr := storePlan(ctx, w.db, batch, p); serr != nil {
			return errors.Join(err, serr)
		}
	}
	if errors.Is(err, errMemberLeft) {
		// They left since the click: nothing changes, as a read of the
		// member would have found before the plan.
		p, failed, err = &plan{Batch: p.Batch}, nil, nil
	}
	if err != nil {
		return err
	}
	ids := make([]int64, len(batch))
	for i, c := range batch {
		ids[i] = c.ID
		if c.Notice != nil && *c.Notice == noticeGiven && len(failed) == 0 && len(p.Refused) == 0 {
			// The member was told when to expect it (notice.go); a change
			// that could not be made is still reported.
			w.late.WithLabelValues("given").Inc()
			continue
		}
		// An expired token only loses the reply, counted: the roles
		// changed, so the click is done all the same.
		_, err := w.followups.Send(ctx, followup.Update{Lane: work.Interactive, InteractionID: c.InteractionID, Key: "rolemenu-apply",
			Content: p.text(c.In(w.catalog), failed)})
		switch {
		case errors.Is(err, outbox.ErrTokenExpired):
			w.late.WithLabelValues("none").Inc()
		case err != nil:
			return err
		}
	}
	// The member's roles from the gateway go with their last click: a
	// statement of its own sees an update kept while the clicks were
	// deleted (onMember locks them).
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM rolemenu_clicks WHERE id = ANY($1)`, ids)
	b.Queue(`DELETE FROM rolemenu_members_seen WHERE guild_id = $1 AND user_id = $2
		AND NOT EXISTS (SELECT 1 FROM rolemenu_clicks WHERE guild_id = $1 AND user_id = $2)`, guildID, userID)
	return w.db.SendBatch(ctx, b).Close()
}

// execute makes the plan's changes, one request per role, and records
// each (recordChanges). A change Discord refuses for good (permission,
// role gone) is reported, not retried, and recorded as of unknown
// outcome; a member who left ends it with errMemberLeft; anything else
// fails the job, which retries or waits: when the error proves the change
// was not made, rest is what is left to do, else a rerun reads the
// member back (left).
func (w *applyWorker) execute(ctx context.Context, guildID, userID string, p *plan) (failed map[string]*guildroles.Refusal, rest *plan, err error) {
	failed = map[string]*guildroles.Refusal{}
	made := map[string]roleChange{}
	do := func(roleID string, present bool, change func() error) error {
		err := change()
		c := roleChange{Present: &present, Done: time.Now()}
		var api *transport.APIError
		switch {
		case err == nil:
		case errors.As(err, &api) && api.Code == codeUnknownMember:
			return errMemberLeft
		case errors.As(err, &api) && api.Class() == transport.Permission:
			failed[roleID], c.Present = &guildroles.Refusal{Key: "no_permission"}, nil
		case errors.As(err, &api) && api.Class() == transport.NotFound:
			failed[roleID], c.Present = &guildroles.Refusal{Key: "deleted", Role: roleMention(roleID)}, nil
		default:
			return err
		}
		made[roleID] = c
		return nil
	}
	reason := "role menu"
	err = func() error {
		for i, r := range p.Add {
			if err := do(r, true, func() error { return w.discord.AddMemberRole(ctx, guildID, userID, r, reason) }); err != nil {
				rest = &plan{Add: p.Add[i:], Remove: p.Remove}
				return err
			}
		}
		for i, r := range p.Remove {
			if err := do(r, false, func() error { return w.discord.RemoveMemberRole(ctx, guildID, userID, r, reason) }); err != nil {
				rest = &plan{Add: []string{}, Remove: p.Remove[i:]}
				return err
			}
		}
		return nil
	}()
	if !transport.Unsent(err) {
		rest = nil
	}
	// What was made is recorded whatever came after it.
	if rerr := recordChanges(context.WithoutCancel(ctx), w.db, guildID, userID, made); rerr != nil {
		return nil, nil, errors.Join(err, rerr)
	}
	return failed, rest, err
}

// text is the member's reply.
func (p *plan) text(loc *i18n.Localizer, failed map[string]*guildroles.Refusal) string {
	var lines []string
	list := func(roles []string) string {
		var out []string
		for _, r := range roles {
			if failed[r] == nil {
				out = append(out, roleMention(r))
			}
		}
		return strings.Join(out, ", ")
	}
	if s := list(p.Add); s != "" {
		lines = append(lines, loc.T("rolemenu.added", map[string]any{"Roles": s}))
	}
	if s := list(p.Remove); s != "" {
		lines = append(lines, loc.T("rolemenu.removed", map[string]any{"Roles": s}))
	}
	for _, r := range p.Refused {
		lines = append(lines, loc.T("rolemenu.could_not", map[string]any{"Role": roleMention(r.RoleID), "Reason": r.Why.Text(loc)}))
	}
	for _, r := range slices.Sorted(maps.Keys(failed)) {
		lines = append(lines, loc.T("rolemenu.could_not", map[string]any{"Role": roleMention(r), "Reason": failed[r].Text(loc)}))
	}
	for _, r := range slices.Sorted(maps.Keys(p.Expires)) {
		if failed[r] == nil {
			lines = append(lines, loc.T("rolemenu.expires", map[string]any{"Roles": roleMention(r), "When": fmt.Sprintf("<t:%d:R>", p.Expires[r].Unix())}))
		}
	}
	if len(lines) == 0 {
		return loc.T("rolemenu.unchanged", nil)
	}
	return strings.Join(lines, "\n")
}
