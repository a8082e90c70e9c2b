package workspace

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock restricts writing file contents and directory entries, not
// metadata: chmod, chown, utime, extended attributes and inode flags
// (chattr) of a file the command owns still succeed. In plan mode without
// bwrap a seccomp filter refuses those system calls with EPERM, and
// io_uring, whose operations include setxattr.
const (
	fsIocSetflags    = unix.FS_IOC_SETFLAGS
	fsIocFssetxattr  = 0x401c5820 // FS_IOC_FSSETXATTR
	seccompDataNr    = 0          // offsetof(struct seccomp_data, nr)
	seccompDataArch  = 4          // offsetof(struct seccomp_data, arch)
	seccompDataArg1  = 24         // low word of args[1] (little-endian)
	seccompDenyErrno = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

// errNoSeccomp: this architecture has no filter (see seccomp_other.go).
var errNoSeccomp = errors.New("no metadata filter for this architecture")

// metadataFilter builds the BPF program: a foreign architecture (32-bit
// or x32 system calls, whose numbers differ) and every blocked call get
// EPERM, and so do ioctls that set inode flags; the rest is allowed.
func metadataFilter() []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
	)
	n := len(blockedSyscalls)
	// Indexes: 0 arch, 1 foreign?, 2 nr, 3 x32?, 4… one per blocked call,
	// 4+n ioctl?, 5+n arg1, 6+n setflags?, 7+n fssetxattr?, 8+n allow, 9+n deny.
	// A jump's offset counts from the next instruction.
	prog := []unix.SockFilter{
		stmt(ld, seccompDataArch),
		jeq(seccompArch, 0, uint8(n+7)), // foreign → deny
		stmt(ld, seccompDataNr),
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: uint8(n + 5), K: 0x40000000}, // x32 → deny
	}
	for i, nr := range blockedSyscalls {
		prog = append(prog, jeq(uint32(nr), uint8(n-i+4), 0)) // → deny
	}
	return append(prog,
		jeq(uint32(unix.SYS_IOCTL), 0, 3), // not ioctl → allow
		stmt(ld, seccompDataArg1),
		jeq(fsIocSetflags, 2, 0),
		jeq(fsIocFssetxattr, 1, 0),
		stmt(ret, allow),
		stmt(ret, seccompDenyErrno),
	)
}

// installMetadataFilter applies the filter to the calling thread; it needs
// no_new_privs, which the caller sets first.
func installMetadataFilter() error {
	if len(blockedSyscalls) == 0 {
		return errNoSeccomp
	}
	prog := metadataFilter()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
