package main

import (
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot"
)

// databaseError is a failure to open H9_DATABASE_URL as one line naming
// the variable and the fix, instead of pgx's line per address tried. A
// refused login or a missing database is a setting (exit 2); a server
// that cannot be reached is an outage (exit 1).
func databaseError(err error, dsn string) error {
	where := "the database"
	if cfg, perr := pgconn.ParseConfig(dsn); perr == nil {
		where = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28"):
		return invalid("H9_DATABASE_URL: %s refused the login (%s): check the user and password in the URL", where, pgErr.Message)
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return invalid("H9_DATABASE_URL: %s: %s: create it (createdb) or fix the URL's database name", where, pgErr.Message)
	case errors.As(err, &dnsErr):
		return invalid("H9_DATABASE_URL: the host %q is not known: fix the URL's host", dnsErr.Name)
	case errors.As(err, &opErr):
		return lineErrorf(errOutage, "H9_DATABASE_URL: cannot reach PostgreSQL at %s (%v): start it, or fix the URL's host and port", where, opErr.Err)
	}
	return lineErrorf(errOutage, "H9_DATABASE_URL: %s: %s", where, oneLine(err))
}

// errOutage marks a start-up failure of something h9 depends on (exit 1).
var errOutage = errors.New("outage")

// socketError is a token Slack refused at start (the bot token at
// auth.test, the app token in Socket Mode) as one line with doctor's hint.
func socketError(err error) error {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && errors.Is(err, bot.ErrBotTokenRefused) {
		return invalid("SLACK_BOT_TOKEN is not accepted by Slack (%s): copy the Bot User OAuth Token (xoxb-…) "+
			"from OAuth & Permissions; reinstall the app if it was revoked", se.Err)
	}
	if errors.As(err, &se) && slackAuthErrors[se.Err] {
		return invalid("SLACK_APP_TOKEN is not accepted by Slack (%s): under Basic Information → App-Level Tokens "+
			"create one with connections:write (xapp-…), and turn Socket Mode on", se.Err)
	}
	if errors.As(err, &se) && se.Err == "missing_scope" {
		return invalid("SLACK_APP_TOKEN lacks connections:write (missing_scope): regenerate it with that scope")
	}
	return err
}
