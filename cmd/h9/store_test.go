package main

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/storetest"
	"github.com/h9-app/h9/bot"
)

// The conformance suite's Backend holds every storage method the agent and
// the bot declare, and the bbolt backend is one: a method added to either
// interface but not to the suite fails to compile here. Both backends are.
var (
	_ agent.Store       = storetest.Backend(nil)
	_ bot.Store         = storetest.Backend(nil)
	_ storetest.Backend = (*boltstore.Store)(nil)
	_ storetest.Backend = (*pgstore.Store)(nil)
	_ bot.Leases        = (*boltstore.Store)(nil)
	_ bot.Leases        = (*pgstore.Store)(nil)
)
