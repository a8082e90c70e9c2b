// Package pgstore is h9's PostgreSQL backend (pgx v5): one Store implements
// every storage interface the agent and the bot declare (agent.Store,
// bot.Store), in tables shared by any number of h9 replicas. It passes the
// same conformance suite as the bbolt backend (agent/store/storetest).
//
// Schema (migrations.go; Open brings a database to the current version,
// under an advisory lock, so replicas may start together):
//
//	h9_schema             one row per applied migration
//	h9_agent_sessions     id → messages (the history's length), todos, state
//	h9_agent_messages     (session_id, idx) → body
//	h9_sessions           the bot's records: id, team, channel, thread, owner,
//	                      active, updated (indexed) and data
//	h9_dedup              key → claimed
//	h9_channel_settings   (channel, key) → value
//	h9_leases             (channel, thread) → owner, token, expires (lease.go)
//	h9_inbox              items for a thread another replica holds (inbox.go)
//	h9_starts             new sessions' commands before their first commit
//	h9_automation_occurrences  (automation, key) → an occurrence and its state
//	h9_automation_states  name → version, the day's spend, the rest as JSON
//
// Everything the agent and the bot encode is stored as bytea, byte for
// byte: the backend never interprets it, and jsonb would refuse a tool
// output holding a NUL character (\u0000). Text columns use the C
// collation, so listings sort as the bbolt backend's do, whatever the
// database's locale.
//
// A write is one round trip and one transaction: its statements go as one
// batch, which PostgreSQL runs as an implicit transaction, and a failed
// check (a step at the wrong index, a lease lost) raises an error that
// undoes the batch. A step is one statement (h9_fenced_step: the fence,
// then h9_append_step), and so is a session record (h9_put_session).
package pgstore
