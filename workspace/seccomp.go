package workspace

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccomp filters refuse, with EPERM, what neither the sandbox's
// namespaces nor Landlock take away (ARCHITECTURE.md, "Sandbox modes"):
//
//   - in every mode, the kernel keyrings (under bwrap as root the sandbox's
//     uid 0 is the host's: without this a command reads and adds keys of
//     h9's session keyring and host root's user keyring, as Docker's default
//     profile also refuses) and the ioctls that change an inode's metadata
//     on any descriptor, read-only ones included, which is all an owner
//     needs for them (flags, generation under both ext4 numbers, project
//     and extended flags, the block map, verity, encryption, dedupe):
//     Landlock checks opens, not ioctls on regular files;
//   - in plan mode without bwrap, the metadata calls Landlock leaves open
//     (chmod, chown, utime, xattrs), io_uring (whose operations include
//     setxattr and socket), every new socket (a pathname unix socket of the
//     host, UDP: Landlock ABI 7 restricts TCP only), SysV IPC and POSIX
//     message queues (they would outlive the command, and its limits).
const (
	fsIocSetflags       = 0x40086602 // FS_IOC_SETFLAGS (EXT4_IOC_SETFLAGS)
	fsIoc32Setflags     = 0x40046602 // FS_IOC32_SETFLAGS
	fsIocSetversion     = 0x40087602 // FS_IOC_SETVERSION
	fsIoc32Setversion   = 0x40047602 // FS_IOC32_SETVERSION
	ext4IocSetversion   = 0x40086604 // EXT4_IOC_SETVERSION: ext4's own number for the same
	ext4Ioc32Setversion = 0x40046604 // EXT4_IOC32_SETVERSION
	ext4IocMigrate      = 0x00006609 // EXT4_IOC_MIGRATE: rewrites the block map as extents
	ext4IocAllocDaBlks  = 0x0000660c // EXT4_IOC_ALLOC_DA_BLKS: allocates delayed blocks
	fsIocFssetxattr     = 0x401c5820 // FS_IOC_FSSETXATTR
	fsIocEnableVerity   = 0x40806685 // FS_IOC_ENABLE_VERITY: makes the file read-only for good
	fsIocSetEncryption  = 0x800c6613 // FS_IOC_SET_ENCRYPTION_POLICY
	fsIocAddEncryptKey  = 0xc0506617 // FS_IOC_ADD_ENCRYPTION_KEY
	fiDedupeRange       = 0xc0189436 // FIDEDUPERANGE: shares extents, the owner needs no write access
	seccompDataNr       = 0          // offsetof(struct seccomp_data, nr)
	seccompDataArch     = 4          // offsetof(struct seccomp_data, arch)
	seccompDataArg1     = 24         // low word of args[1] (little-endian); ioctl's cmd is 32 bits
	seccompDenyErrno    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
)

// errNoSeccomp: this architecture has no filter (see seccomp_other.go).
var errNoSeccomp = errors.New("no seccomp filter for this architecture")

// metadataIoctls are the ioctl commands refused in every mode, compared
// on the low 32 bits of the request (the kernel reads an unsigned int).
var metadataIoctls = []uint32{
	fsIocSetflags, fsIoc32Setflags, fsIocSetversion, fsIoc32Setversion,
	ext4IocSetversion, ext4Ioc32Setversion, ext4IocMigrate, ext4IocAllocDaBlks,
	fsIocFssetxattr, fsIocEnableVerity, fsIocSetEncryption, fsIocAddEncryptKey, fiDedupeRange,
}

// keyringSyscalls are refused in every mode.
var keyringSyscalls = []uintptr{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}

// isolationSyscalls are what plan mode without bwrap refuses besides the
// metadata calls: sockets, SysV IPC, POSIX message queues, io_uring.
var isolationSyscalls = []uintptr{
	unix.SYS_SOCKET, unix.SYS_SOCKETPAIR,
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
	unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
	unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE,
	unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}

// seccompPolicy is one filter: the system calls refused outright; ioctl
// is refused for metadataIoctls only.
type seccompPolicy []uintptr

// commandPolicy applies to every command outside plan mode.
func commandPolicy() seccompPolicy { return seccompPolicy(keyringSyscalls) }

// execPolicy applies to execution mode under Landlock: no namespace holds
// SysV IPC or message queues there, so they are refused (they would
// outlive the command and its limits), and io_uring, whose operations
// Landlock does not all see.
func execPolicy() seccompPolicy {
	p := append([]uintptr{}, keyringSyscalls...)
	for _, nr := range isolationSyscalls {
		if nr != unix.SYS_SOCKET && nr != unix.SYS_SOCKETPAIR {
			p = append(p, nr)
		}
	}
	return p
}

// planPolicy applies to plan mode without bwrap.
func planPolicy() seccompPolicy {
	p := append(append([]uintptr{}, keyringSyscalls...), metadataSyscalls...)
	return append(p, isolationSyscalls...)
}

// program builds the BPF program: a foreign architecture (32-bit or x32
// system calls, whose numbers differ) and every refused call get EPERM,
// and so do the metadata ioctls; the rest is allowed. A jump's offset
// counts from the next instruction; deny is the last one.
func (p seccompPolicy) program() []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
	)
	// 0 arch, 1 foreign?, 2 nr, 3 x32?, 4… one per call, ioctl?, arg1,
	// one per ioctl, allow, deny.
	total := 4 + len(p) + 2 + len(metadataIoctls) + 2
	deny := total - 1
	toDeny := func(at int) uint8 { return uint8(deny - at - 1) }
	prog := []unix.SockFilter{
		stmt(ld, seccompDataArch),
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jf: toDeny(1), K: seccompArch},
		stmt(ld, seccompDataNr),
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: toDeny(3), K: 0x40000000},
	}
	for _, nr := range p {
		prog = append(prog, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: toDeny(len(prog)), K: uint32(nr)})
	}
	prog = append(prog,
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jf: uint8(len(metadataIoctls) + 1), K: uint32(unix.SYS_IOCTL)},
		stmt(ld, seccompDataArg1))
	for _, cmd := range metadataIoctls {
		prog = append(prog, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: toDeny(len(prog)), K: cmd})
	}
	return append(prog, stmt(ret, allow), stmt(ret, seccompDenyErrno))
}

// install applies the filter to the calling thread; it needs
// no_new_privs (or CAP_SYS_ADMIN), which the caller sees to first.
func (p seccompPolicy) install() error {
	if seccompArch == 0 {
		return errNoSeccomp
	}
	prog := p.program()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// bytes is the program as bwrap's --seccomp reads it: struct sock_filter
// entries in the machine's byte order, nothing else.
func (p seccompPolicy) bytes() []byte {
	prog := p.program()
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.NativeEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.NativeEndian.AppendUint32(b, f.K)
	}
	return b
}
