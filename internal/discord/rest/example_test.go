package rest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/herald-bot/herald/internal/discord/rest"
	"github.com/herald-bot/herald/internal/discord/sim"
	"github.com/herald-bot/herald/internal/discord/transport"
)

// A client over the transport engine, here against the simulator: a
// message sent twice with one nonce is created once, and a failure is a
// typed error whose class tells a job what to do.
func Example() {
	s := sim.New(sim.Options{Token: "example-token"})
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()
	g, _ := s.LoadFixture(sim.DefaultFixture())

	engine := transport.New(transport.Config{ApplicationID: s.ApplicationID()})
	discord := rest.New(engine, srv.URL+"/api/v10", "example-token", s.ApplicationID())

	ctx := context.Background()
	first, _ := discord.CreateMessage(ctx, g.Channel("general"), rest.NewMessage{Content: "Ticket #7 opened", Nonce: "ticket-7"})
	again, _ := discord.CreateMessage(ctx, g.Channel("general"), rest.NewMessage{Content: "Ticket #7 opened", Nonce: "ticket-7"})
	fmt.Println(first.Content, first.ID == again.ID)

	_, err := discord.Message(ctx, g.Channel("general"), "1")
	var api *transport.APIError
	if errors.As(err, &api) {
		fmt.Println(api.Code, api.Message, api.Class())
	}
	// Output:
	// Ticket #7 opened true
	// 10008 Unknown Message not_found
}
