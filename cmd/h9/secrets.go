package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// secretsFDEnv names the inherited pipe that carries the secrets into the
// re-executed process. It holds a file descriptor number, never a secret.
const secretsFDEnv = "H9_INTERNAL_SECRETS_FD"

// secretEnvNames are the variables whose values must not stay in h9's
// environment image: without the sandbox, a bash command running as the same
// user can read /proc/<h9 pid>/environ.
var secretEnvNames = []string{
	"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "OPENAI_API_KEY",
	"H9_SLACK_BOT_TOKEN", "H9_SLACK_APP_TOKEN", "H9_OPENAI_API_KEY", "H9_GITHUB_TOKEN",
	"H9_DATABASE_URL", // may carry the database's password
}

func isSecretEnv(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, s := range secretEnvNames {
		if name == s {
			return true
		}
	}
	return slices.Contains(mcpSecretEnvNames(), name) || slices.Contains(forgeTokenNames(), name)
}

// hideSecrets makes sure /proc/self/environ carries no secret. The kernel
// keeps the environment h9 was started with for the life of the process, and
// os.Unsetenv does not touch it; so when a secret is present h9 re-executes
// itself (same pid) with the secrets removed from the environment and
// written to an inherited pipe instead. The re-executed process reads them
// back into its own (Go-side) environment, which /proc does not show.
// It returns an error only when it cannot do either safely.
func hideSecrets() error {
	secretEnvNames = append(secretEnvNames, repoSecretNames()...)
	if fd := os.Getenv(secretsFDEnv); fd != "" {
		return restoreSecrets(fd)
	}
	var secrets, rest []string
	for _, kv := range os.Environ() {
		if isSecretEnv(kv) {
			secrets = append(secrets, kv)
		} else {
			rest = append(rest, kv)
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("hiding secrets from the environment: %w", err)
	}
	// A pipe holds 64 KiB; tokens are far smaller, so the write never blocks.
	if _, err := io.WriteString(w, strings.Join(secrets, "\x00")); err != nil {
		return fmt.Errorf("hiding secrets from the environment: %w", err)
	}
	w.Close()
	// os.Pipe sets close-on-exec; the read end must survive the exec.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		return fmt.Errorf("hiding secrets from the environment: fcntl: %w", errno)
	}
	env := append(rest, secretsFDEnv+"="+strconv.Itoa(int(r.Fd())))
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	err = syscall.Exec(exe, os.Args, env)
	// Only reached when exec failed: refuse to run with the tokens exposed.
	return fmt.Errorf("hiding secrets from the environment: re-executing h9: %w", err)
}

// restoreSecrets reads the secrets written by the parent image of this
// process from the inherited pipe fd and sets them in the Go environment.
func restoreSecrets(fdText string) error {
	os.Unsetenv(secretsFDEnv)
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s=%q is not a file descriptor", secretsFDEnv, fdText)
	}
	f := os.NewFile(uintptr(fd), "h9-secrets")
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading secrets from the inherited pipe: %w", err)
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		name, value, ok := strings.Cut(string(kv), "=")
		if ok && isSecretEnv(name) {
			os.Setenv(name, value)
		}
	}
	return nil
}

// dropSecretEnv removes the secrets from the Go environment once the
// configuration holds them, so no child process can inherit them.
func dropSecretEnv() {
	for _, name := range slices.Concat(secretEnvNames, mcpSecretEnvNames(), forgeTokenNames()) {
		os.Unsetenv(name)
	}
}

// protectProcess makes h9 non-dumpable: its /proc/<pid>/mem, environ, maps
// and fd then belong to root and need CAP_SYS_PTRACE to read, which no
// sandboxed command has (unsandboxed, only when h9 itself runs as root), and
// no core dump of h9 with tokens in memory is ever written.
func protectProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making h9 non-dumpable: %w", err)
	}
	return nil
}
