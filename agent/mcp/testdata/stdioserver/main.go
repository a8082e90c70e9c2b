// Command stdioserver is mcptest's server over stdin and stdout, as a
// team's stdio MCP server would run in h9's sandbox, with one tool more:
// crash, which says why on stderr and exits, as a broken server does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/h9-app/h9/agent/mcp/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	s := mcptest.NewServer()
	s.AddTool(&mcp.Tool{Name: "crash", Description: "exits", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: the issue tracker's database is gone")
			os.Exit(2)
			return nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
