package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// maxDirName keeps directory names well under NAME_MAX (255).
const maxDirName = 120

// dirName maps a session id to a directory name that is safe and unique.
// It is an escaping, not a lossy replacement, so two ids never share a
// directory: [A-Za-z0-9.-] stay, every other byte (and '_' itself) becomes
// _XX. A leading '.' is escaped too, so "." and ".." cannot appear and the
// manager's own dot-prefixed temporary directories never collide. Very long
// ids are cut and suffixed with a hash of the whole id.
func dirName(sessionID string) (string, error) {
	if sessionID == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidSessionID)
	}
	var b strings.Builder
	for i := 0; i < len(sessionID); i++ {
		c := sessionID[i]
		if isSafeNameByte(c) && !(i == 0 && c == '.') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	name := b.String()
	if len(name) > maxDirName {
		sum := sha256.Sum256([]byte(sessionID))
		name = name[:maxDirName-33] + "~" + hex.EncodeToString(sum[:16])
	}
	return name, nil
}

func isSafeNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}
