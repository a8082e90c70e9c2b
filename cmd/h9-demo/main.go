// Command h9-demo shows one h9 session before any Slack app exists: it
// builds the real h9, runs it against the in-repository fakes (bot/fakeslack
// behind a real Socket Mode websocket, agent/fakemodel with a scripted
// model, workspace/forge/fakegithub for the pull request, a local git
// repository) and prints the thread as a person would see it.
//
//	go run ./cmd/h9-demo            build h9 and run the session
//	go run ./cmd/h9-demo -h9 ./h9   use a binary already built
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	bin := flag.String("h9", "", "h9 binary to run (default: build ./cmd/h9 with go build)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := runDemo(ctx, *bin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "h9-demo: %v\n", err)
		os.Exit(1)
	}
}
