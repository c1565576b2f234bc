package interaction

import "github.com/bwmarrin/discordgo"

// Deferred acknowledges an interaction with "thinking…", to be filled by
// a job (rest.Client.EditOriginal) within 15 minutes.
func Deferred(ephemeral bool) *discordgo.InteractionResponse {
	r := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}
	if ephemeral {
		r.Data = &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}
	}
	return r
}

// DeferredUpdate acknowledges a component without a visible answer; a job
// may edit the message later.
func DeferredUpdate() *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
}

// Ephemeral answers with a message only the member sees.
func Ephemeral(content string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: content, Flags: discordgo.MessageFlagsEphemeral}}
}

// Choices answers an autocomplete request (at most 25 choices).
func Choices(choices ...*discordgo.ApplicationCommandOptionChoice) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices[:min(len(choices), 25)]}}
}

// Modal answers with a form; its submit is routed by customID.
func Modal(customID, title string, rows ...discordgo.MessageComponent) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{CustomID: customID, Title: title, Components: rows}}
}

// Buttons are a message's buttons, row by row: what a member can click
// on it.
func Buttons(m *discordgo.Message) []discordgo.Button {
	var out []discordgo.Button
	for _, row := range m.Components {
		if r, ok := row.(*discordgo.ActionsRow); ok {
			for _, c := range r.Components {
				if b, ok := c.(*discordgo.Button); ok {
					out = append(out, *b)
				}
			}
		}
	}
	return out
}
