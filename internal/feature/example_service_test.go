package feature_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/herald-bot/herald/internal/feature"
)

// A feature that serves HTTP on a port of its own binds it in Build, so a
// busy port stops herald at start-up, and runs the server as a service,
// which herald starts after River and stops, gracefully, before it.
func ExampleServices() {
	var s feature.Services // herald passes its own in Kit.Services
	ln, err := s.Listen("hello", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s.Run("hello", func(ctx context.Context) error {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })}
		go srv.Serve(ln)
		<-ctx.Done()
		return srv.Shutdown(context.Background())
	})

	ctx, stop := context.WithCancel(context.Background())
	wait := s.Start(ctx)
	res, err := http.Get("http://" + s.Addr("hello"))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(string(body))
	stop()
	fmt.Println(wait())
	// Output:
	// hello
	// <nil>
}
