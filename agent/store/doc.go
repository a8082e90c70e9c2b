// Package store is the vocabulary every storage backend of h9 shares: the
// records the agent and the bot keep, and the errors a backend returns. It
// does no I/O; the backends live in its subpackages (boltstore), and the
// interfaces they implement are declared where they are used (agent.Store,
// bot.Store). storetest is the conformance suite every backend must pass.
//
// A backend never interprets what it stores for its owners: the agent's
// messages and state and the bot's session data are opaque JSON that their
// owner encodes. Only todos are typed, being a fact the agent and the bot
// share, and session metadata, which a backend must index.
package store
