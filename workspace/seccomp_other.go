//go:build linux && !amd64 && !arm64

package workspace

// Elsewhere plan mode without bwrap relies on Landlock and the checker for
// metadata; installMetadataFilter reports errNoSeccomp.
const seccompArch = 0

var metadataSyscalls []uintptr
