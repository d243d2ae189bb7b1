package cxx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The client side of a seed server (seed form: SeedForm). A server holds
// emud's library warm and loads the program's seed form afresh for each
// seed, so a sweep pays a process start only when a seed ends in a way
// only a process end can report (exit, a signal, an emulation failure):
// the server then is gone, its exit status is that seed's, and the next
// seed starts a new one.
//
// The protocol, on two pipes the server sees as fds 3 (requests) and 4
// (replies): a request is a uint32 little-endian byte count and that many
// bytes of NUL-terminated strings: seedProtocol, the seed's stdout and
// stderr paths, argc in decimal, the argv strings, then the seed's whole
// environment as K=V. A reply is a uint32 little-endian exit status and a
// byte, 1 when the server takes another request, 0 when it exits now.
// The server makes the seed's two files before it loads the program, so
// a server that ends without a reply and without them failed on its own,
// and one that leaves them ended with the seed.

// seedProtocol names the request format; a server refuses another.
const seedProtocol = "emud-seed/1"

// maxSeedRequest bounds a request: the server reads no more.
const maxSeedRequest = 1 << 20

// SeedServer is one warm server process for one seed form; one seed runs
// in it at a time. It is not safe for concurrent use: a sweep gives each
// worker its own.
type SeedServer struct {
	server, object string
	env            []string // the environment each process starts with

	dir      string // the seed's stdout and stderr files
	cmd      *exec.Cmd
	req, rep *os.File
	log      bytes.Buffer // the server's own output, outside seeds
	served   int          // seeds the current process ran
	starts   int          // processes started
}

// NewSeedServer prepares a server of object (a seed form) run by server;
// the process starts with the first Run, with env as its environment.
// Each seed's own environment must agree with env on what a process reads
// only at its start (EMUD_BASE, EMUD_MALLOC, glibc's tunables), as a
// sweep's seeds do.
func NewSeedServer(server, object string, env []string) (*SeedServer, error) {
	dir, err := os.MkdirTemp(seedFilesDir(), "emud-seed-*")
	if err != nil {
		return nil, fmt.Errorf("seed server of %s: %w", object, err)
	}
	return &SeedServer{server: server, object: object, env: env, dir: dir}, nil
}

// seedFilesDir is where a server's seed files go: TMPDIR when the user
// set it, else /dev/shm when it is a memory file system we may write,
// else the system's temporary directory. Each seed's two files are made
// and removed again (Run), and on a disk file system that churn cost
// some 5% of a small seed's CPU in the kernel (ext4's inode allocation);
// in memory it costs next to nothing, and the files hold no more than
// the seed's output, which the caller keeps in memory anyway.
func seedFilesDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	const shm = "/dev/shm"
	var fs syscall.Statfs_t
	if syscall.Statfs(shm, &fs) == nil && fs.Type == tmpfsMagic && syscall.Access(shm, 2 /* W_OK */) == nil {
		return shm
	}
	return os.TempDir()
}

// tmpfsMagic is Linux's TMPFS_MAGIC (statfs's f_type of a tmpfs).
const tmpfsMagic = 0x01021994

// ErrSeedServer is a server that failed outside any seed: it did not
// start, or ended before it read a request. Its seeds' statuses would not
// be theirs, so the caller runs them as processes instead.
type ErrSeedServer struct {
	Object string
	Why    string
	Log    string // what the server printed, if anything
}

func (e *ErrSeedServer) Error() string {
	s := fmt.Sprintf("seed server of %s: %s", e.Object, e.Why)
	if e.Log != "" {
		s += ": " + strings.TrimSpace(e.Log)
	}
	return s
}

// SeedExit is how a seed ended, as a process's parent would see it.
type SeedExit struct {
	Code   int            // the exit status; -1 when a signal ended it
	Signal syscall.Signal // the signal, when one did
}

// String is the status as the client's messages give it.
func (e SeedExit) String() string {
	if e.Signal != 0 {
		return "signal " + e.Signal.String()
	}
	return "status " + strconv.Itoa(e.Code)
}

// Run runs one seed: argv's main with env as its whole environment, its
// stdout and stderr copied to the writers once it ends. An error is the
// server's own failure (ErrSeedServer), not the seed's.
func (s *SeedServer) Run(argv, env []string, stdout, stderr io.Writer) (end SeedExit, err error) {
	if len(argv) == 0 {
		return end, fmt.Errorf("seed server of %s: no argv", s.object)
	}
	// A write to a server that ended after its last reply (it said more
	// and then died) reads as a failure before the seed: start anew once.
	for try := 0; ; try++ {
		if s.cmd == nil {
			if err := s.start(); err != nil {
				return end, err
			}
		}
		for _, name := range []string{"stdout", "stderr"} {
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return end, fmt.Errorf("seed server of %s: %w", s.object, err)
			}
		}
		if err := s.send(argv, env); err != nil {
			s.kill()
			if try == 0 {
				continue
			}
			return end, &ErrSeedServer{Object: s.object, Why: "it took no request: " + err.Error(), Log: s.log.String()}
		}
		break
	}
	var reply [5]byte
	if _, err := io.ReadFull(s.rep, reply[:]); err != nil {
		// No reply: the seed ended the process, and its status is the
		// seed's, if the seed began: the server makes the seed's files
		// before it loads the program.
		end = s.wait()
		if _, err := os.Stat(filepath.Join(s.dir, "stderr")); err != nil {
			return SeedExit{}, &ErrSeedServer{Object: s.object, Why: fmt.Sprintf("it ended (%v) before the seed began", end), Log: s.log.String()}
		}
	} else {
		end = SeedExit{Code: int(binary.LittleEndian.Uint32(reply[:4]))}
		s.served++
		if reply[4] == 0 {
			if c := s.wait(); c != (SeedExit{}) {
				return SeedExit{}, &ErrSeedServer{Object: s.object, Why: fmt.Sprintf("it exited (%v) after a seed", c), Log: s.log.String()}
			}
		}
	}
	if err := s.copyOut("stdout", stdout); err != nil {
		return SeedExit{}, err
	}
	if err := s.copyOut("stderr", stderr); err != nil {
		return SeedExit{}, err
	}
	return end, nil
}

// Pid is the running server process's id, 0 when none runs (before the
// first seed, or after a seed that ended the process).
func (s *SeedServer) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Starts is how many server processes have been started.
func (s *SeedServer) Starts() int { return s.starts }

// Close ends the server (EOF on its requests) and removes its files.
func (s *SeedServer) Close() error {
	var err error
	if s.cmd != nil {
		if c := s.wait(); c != (SeedExit{}) {
			err = &ErrSeedServer{Object: s.object, Why: fmt.Sprintf("it exited (%v) at the end", c), Log: s.log.String()}
		}
	}
	if rerr := os.RemoveAll(s.dir); err == nil && rerr != nil {
		err = rerr
	}
	return err
}

func (s *SeedServer) start() error {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return &ErrSeedServer{Object: s.object, Why: err.Error()}
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return &ErrSeedServer{Object: s.object, Why: err.Error()}
	}
	s.log.Reset()
	cmd := exec.Command(s.server, s.object)
	cmd.Env, cmd.Stdout, cmd.Stderr = s.env, &s.log, &s.log
	cmd.ExtraFiles = []*os.File{reqR, repW} // fds 3 and 4
	err = cmd.Start()
	reqR.Close()
	repW.Close()
	if err != nil {
		reqW.Close()
		repR.Close()
		return &ErrSeedServer{Object: s.object, Why: "cannot start " + s.server + ": " + err.Error()}
	}
	s.cmd, s.req, s.rep, s.served = cmd, reqW, repR, 0
	s.starts++
	return nil
}

func (s *SeedServer) send(argv, env []string) error {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0})
	field := func(v string) error {
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("a NUL byte in %q", v)
		}
		b.WriteString(v)
		b.WriteByte(0)
		return nil
	}
	fields := append([]string{seedProtocol, filepath.Join(s.dir, "stdout"), filepath.Join(s.dir, "stderr"), strconv.Itoa(len(argv))}, argv...)
	for _, v := range append(fields, env...) {
		if err := field(v); err != nil {
			return err
		}
	}
	if b.Len()-4 > maxSeedRequest {
		return fmt.Errorf("the request is %d bytes (argv and environment), over the server's %d", b.Len()-4, maxSeedRequest)
	}
	binary.LittleEndian.PutUint32(b.Bytes(), uint32(b.Len()-4))
	_, err := s.req.Write(b.Bytes())
	return err
}

// wait closes the server's requests and reaps it: how it ended.
func (s *SeedServer) wait() SeedExit {
	s.req.Close()
	err := s.cmd.Wait()
	s.rep.Close()
	s.cmd = nil
	var ee *exec.ExitError
	switch {
	case err == nil:
		return SeedExit{}
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return SeedExit{Code: -1, Signal: ws.Signal()}
		}
		return SeedExit{Code: ee.ExitCode()}
	}
	return SeedExit{Code: -1, Signal: syscall.SIGKILL} // not reaped as an exit: say it was killed
}

func (s *SeedServer) kill() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.wait()
	}
}

func (s *SeedServer) copyOut(name string, w io.Writer) error {
	f, err := os.Open(filepath.Join(s.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil // the server ended before it opened them
	}
	if err != nil {
		return fmt.Errorf("seed server of %s: the seed's %s: %w", s.object, name, err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("seed server of %s: the seed's %s: %w", s.object, name, err)
	}
	return nil // Run removes the files before the next request
}
