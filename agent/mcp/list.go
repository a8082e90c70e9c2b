package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxListed caps a server's tool list: a server that pages forever is cut.
const maxListed = 1000

// listTools is a server's tool list, page after page, within listTimeout.
func listTools(ctx context.Context, sess *mcp.ClientSession) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
		if len(tools) > maxListed {
			break
		}
	}
	return tools, nil
}
