// Command stdioserver is mcptest's server over stdin and stdout, as a
// team's stdio MCP server would run in h9's sandbox.
package main

import (
	"context"
	"log"

	"github.com/h9-app/h9/agent/mcp/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := mcptest.NewServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
