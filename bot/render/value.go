package render

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ButtonValue is what a button carries back to the bot on a click. It is not
// a credential: the bot must still check that the session exists, that the
// revision is current and that the clicker may act.
type ButtonValue struct {
	SessionID string
	Revision  int    // plan revision for review buttons; 0 elsewhere
	StepID    string // approval step for step buttons; host:port for network buttons; "" elsewhere
}

// MaxValueID bounds SessionID and StepID (bytes) so that an encoded value,
// even fully percent-escaped, stays under MaxButtonValue.
const MaxValueID = 255

// valueVersion prefixes every encoding so a future format can coexist.
const valueVersion = "1"

// Encode renders v as "1|<revision>|<session>|<step>" with both ids
// query-escaped. A value that cannot be encoded within the limits (an empty
// or over-long session id, a negative revision) encodes as "", which
// DecodeButtonValue rejects, so such a button does nothing rather than
// pointing at the wrong session.
func (v ButtonValue) Encode() string {
	if v.validate() != nil {
		return ""
	}
	return valueVersion + "|" + strconv.Itoa(v.Revision) + "|" +
		url.QueryEscape(v.SessionID) + "|" + url.QueryEscape(v.StepID)
}

func (v ButtonValue) validate() error {
	switch {
	case v.SessionID == "":
		return fmt.Errorf("%w: empty session id", ErrBadButtonValue)
	case len(v.SessionID) > MaxValueID || len(v.StepID) > MaxValueID:
		return fmt.Errorf("%w: id longer than %d bytes", ErrBadButtonValue, MaxValueID)
	case v.Revision < 0:
		return fmt.Errorf("%w: negative revision", ErrBadButtonValue)
	}
	return nil
}

// DecodeButtonValue parses what Encode produced. It is strict: anything that
// Encode would not have produced byte for byte is ErrBadButtonValue.
func DecodeButtonValue(s string) (ButtonValue, error) {
	if len(s) > MaxButtonValue {
		return ButtonValue{}, fmt.Errorf("%w: %d bytes", ErrBadButtonValue, len(s))
	}
	parts := strings.Split(s, "|")
	if len(parts) != 4 || parts[0] != valueVersion {
		return ButtonValue{}, fmt.Errorf("%w: not an h9 value", ErrBadButtonValue)
	}
	rev, err := strconv.Atoi(parts[1])
	if err != nil {
		return ButtonValue{}, fmt.Errorf("%w: revision %q", ErrBadButtonValue, parts[1])
	}
	sid, err1 := url.QueryUnescape(parts[2])
	step, err2 := url.QueryUnescape(parts[3])
	if err1 != nil || err2 != nil {
		return ButtonValue{}, fmt.Errorf("%w: bad escaping", ErrBadButtonValue)
	}
	v := ButtonValue{SessionID: sid, Revision: rev, StepID: step}
	if err := v.validate(); err != nil {
		return ButtonValue{}, err
	}
	// Canonical form only: rejects "+1", "01", "%41" for "A" and the like.
	if v.Encode() != s {
		return ButtonValue{}, fmt.Errorf("%w: not in canonical form", ErrBadButtonValue)
	}
	return v, nil
}
